#include "capi/validate.h"

#include <cstdint>
#include <cstring>

#include "common/format.h"
#include "common/raw_enum.h"
#include "runtime/callable.h"
#include "runtime/callable_views.h"

namespace replayrt::capi {

namespace {
Status invalid(std::string message) {
  return Status::error(RRT_ERR_INVALID_ARGUMENT, std::move(message));
}

Status check_struct_size(const char *name, uint32_t size, uint32_t minimum) {
  if (size < minimum) {
    return invalid(
        format("%s.struct_size is %u; this version needs at least %u (set it to "
               "sizeof(%s))",
               name, size, minimum, name));
  }
  return Status::ok();
}

bool within(std::int32_t value, std::int32_t first, std::int32_t last) {
  return value >= first && value <= last;
}

Status check_tensor_enums(const rrt_tensor_desc_t &tensor, const char *what, std::uint32_t index,
                          bool is_param, bool reads_space) {
  const std::int32_t dtype = raw_enum(tensor.dtype);
  if (!within(dtype, RRT_DTYPE_F32, RRT_DTYPE_U8)) {
    return invalid(format("%s %u: unknown dtype %d", what, index, dtype));
  }
  const std::int32_t direction = raw_enum(tensor.direction);
  if (is_param && !within(direction, RRT_DIR_IN, RRT_DIR_INOUT)) {
    return invalid(format("%s %u: unknown direction %d", what, index, direction));
  }
  const std::int32_t space = raw_enum(tensor.space);
  if (is_param && reads_space && !within(space, RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_DEVICE)) {
    return invalid(format("%s %u: unknown space %d", what, index, space));
  }
  return Status::ok();
}

// The enum fields of a callable descriptor. Arrays that are null or longer than the runtime
// accepts are left to the runtime, which rejects them without reading an element.
Status check_callable_enums(const rrt_callable_desc_t &desc) {
  const std::int32_t bind = raw_enum(desc.bind);
  if (!within(bind, RRT_BIND_DEVICE_BUILD, RRT_BIND_HOST_BUILD)) {
    return invalid(format("unknown bind strategy %d", bind));
  }
  const bool reads_space = reads_abi_1_2_fields(desc);
  if (desc.params != nullptr && desc.num_params <= Callable::kMaxParams) {
    for (std::uint32_t i = 0; i < desc.num_params; ++i) {
      RRT_RETURN_IF_ERROR(check_tensor_enums(desc.params[i], "param", i, true, reads_space));
    }
  }
  if (desc.intermediates != nullptr && desc.num_intermediates <= Callable::kMaxIntermediates) {
    for (std::uint32_t i = 0; i < desc.num_intermediates; ++i) {
      RRT_RETURN_IF_ERROR(
          check_tensor_enums(desc.intermediates[i], "intermediate", i, false, false));
    }
  }
  // A 1.2 desc: the tensor kinds of its device values and views.
  const bool has_views = reads_abi_1_2_fields(desc);
  const auto tensor_kind = [](std::int32_t kind) {
    return kind == RRT_OPERAND_PARAM || kind == RRT_OPERAND_INTERMEDIATE;
  };
  if (has_views && desc.device_values != nullptr &&
      desc.num_device_values <= Callable::kMaxDeviceValues) {
    for (std::uint32_t i = 0; i < desc.num_device_values; ++i) {
      const std::int32_t kind = raw_enum(desc.device_values[i].source_kind);
      if (!tensor_kind(kind)) {
        return invalid(
            format("device value %u: source_kind %d is neither RRT_OPERAND_PARAM nor "
                   "RRT_OPERAND_INTERMEDIATE",
                   i, kind));
      }
    }
  }
  if (has_views && desc.views != nullptr && desc.num_views <= Callable::kMaxViews) {
    for (std::uint32_t i = 0; i < desc.num_views; ++i) {
      const std::int32_t kind = raw_enum(desc.views[i].base_kind);
      if (!tensor_kind(kind)) {
        return invalid(format(
            "view %u: base_kind %d is neither RRT_OPERAND_PARAM nor RRT_OPERAND_INTERMEDIATE", i,
            kind));
      }
    }
  }
  if (desc.tasks == nullptr || desc.num_tasks > Callable::kMaxTasks) {
    return Status::ok();
  }
  const std::int32_t last_kind = has_views ? RRT_OPERAND_DEVICE_VALUE : RRT_OPERAND_IMMEDIATE;
  for (std::uint32_t t = 0; t < desc.num_tasks; ++t) {
    const rrt_task_desc_t &task = desc.tasks[t];
    if (task.operands == nullptr || task.num_operands > Callable::kMaxOperandsPerTask) {
      continue;
    }
    for (std::uint32_t o = 0; o < task.num_operands; ++o) {
      const std::int32_t kind = raw_enum(task.operands[o].kind);
      if (!within(kind, RRT_OPERAND_PARAM, last_kind)) {
        return invalid(format("task %u operand %u: unknown operand kind %d", t, o, kind));
      }
    }
  }
  return Status::ok();
}
}  // namespace

Status validate_context_options(const rrt_context_options_t *options) {
  if (options == nullptr) {
    return invalid("options is null");
  }
  RRT_RETURN_IF_ERROR(
      check_struct_size("rrt_context_options_t", options->struct_size, kContextOptionsV1Size));
  const std::int32_t platform = raw_enum(options->platform);
  if (platform != RRT_PLATFORM_SIM && platform != RRT_PLATFORM_CUDA) {
    return invalid(format("unknown platform %d", platform));
  }
  if (options->device_id < 0) {
    return invalid(format("device_id %d is negative", static_cast<int>(options->device_id)));
  }
  if (options->device_workers > kMaxDeviceWorkers) {
    return invalid(
        format("device_workers %u exceeds %u", options->device_workers, kMaxDeviceWorkers));
  }
  return Status::ok();
}

Status validate_kernel_config(const rrt_kernel_config_t *config) {
  if (config == nullptr) {
    return invalid("config is null");
  }
  RRT_RETURN_IF_ERROR(
      check_struct_size("rrt_kernel_config_t", config->struct_size, kKernelConfigV1Size));
  return Status::ok();
}

Status validate_callable_desc(const rrt_callable_desc_t *desc) {
  if (desc == nullptr) {
    return invalid("desc is null");
  }
  RRT_RETURN_IF_ERROR(
      check_struct_size("rrt_callable_desc_t", desc->struct_size, kCallableDescV1Size));
  return check_callable_enums(*desc);
}

Status validate_run_args(const rrt_run_args_t *args) {
  if (args == nullptr) {
    return invalid("args is null");
  }
  RRT_RETURN_IF_ERROR(check_struct_size("rrt_run_args_t", args->struct_size, kRunArgsV1Size));
  if (args->num_tensors != 0 && args->tensors == nullptr) {
    return invalid(format("args->tensors is null with num_tensors %u", args->num_tensors));
  }
  if (args->num_scalars != 0 && args->scalars == nullptr) {
    return invalid(format("args->scalars is null with num_scalars %u", args->num_scalars));
  }
  // No callable takes more tensors than kMaxParams: the runtime rejects a longer array by its
  // count alone.
  if (args->tensors != nullptr && args->num_tensors <= Callable::kMaxParams) {
    for (std::uint32_t i = 0; i < args->num_tensors; ++i) {
      const std::int32_t space = raw_enum(args->tensors[i].space);
      if (space != RRT_SPACE_HOST && space != RRT_SPACE_DEVICE) {
        return invalid(format("tensor %u: unknown address space %d", i, space));
      }
    }
  }
  return Status::ok();
}

Status validate_stats_out(const rrt_stats_t *out) {
  if (out == nullptr) {
    return invalid("out is null");
  }
  return check_struct_size("rrt_stats_t", out->struct_size, kStatsV1Size);
}

}  // namespace replayrt::capi
