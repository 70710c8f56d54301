#include "capi/validate.h"

#include "common/format.h"

namespace replayrt::capi {

namespace {
Status invalid(std::string message) {
  return Status::error(RRT_ERR_INVALID_ARGUMENT, std::move(message));
}

Status check_struct_size(const char *name, uint32_t size, uint32_t minimum) {
  if (size < minimum) {
    return invalid(format("%s.struct_size is %u; this version needs at least %u (set it to "
                          "sizeof(%s))",
                          name, size, minimum, name));
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
  if (options->platform != RRT_PLATFORM_SIM && options->platform != RRT_PLATFORM_CUDA) {
    return invalid(format("unknown platform %d", static_cast<int>(options->platform)));
  }
  if (options->device_id < 0) {
    return invalid(format("device_id %d is negative", static_cast<int>(options->device_id)));
  }
  if (options->device_workers > kMaxDeviceWorkers) {
    return invalid(format("device_workers %u exceeds %u", options->device_workers,
                          kMaxDeviceWorkers));
  }
  return Status::ok();
}

Status validate_kernel_config(const rrt_kernel_config_t *config) {
  if (config == nullptr) {
    return invalid("config is null");
  }
  RRT_RETURN_IF_ERROR(
      check_struct_size("rrt_kernel_config_t", config->struct_size, kKernelConfigV1Size));
  if (config->context_generation == 0) {
    return invalid("context_generation must be nonzero");
  }
  return Status::ok();
}

Status validate_callable_desc(const rrt_callable_desc_t *desc) {
  if (desc == nullptr) {
    return invalid("desc is null");
  }
  return check_struct_size("rrt_callable_desc_t", desc->struct_size, kCallableDescV1Size);
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
  return Status::ok();
}

Status validate_stats_out(const rrt_stats_t *out) {
  if (out == nullptr) {
    return invalid("out is null");
  }
  return check_struct_size("rrt_stats_t", out->struct_size, kStatsV1Size);
}

}  // namespace replayrt::capi
