#include "capi/callable_spec_codec.h"

#include <algorithm>
#include <cstdint>
#include <span>

#include "capi/validate.h"
#include "common/format.h"
#include "common/raw_enum.h"
#include "runtime/callable.h"

namespace replayrt::capi {

namespace {

bool within(std::int32_t value, std::int32_t first, std::int32_t last) {
  return value >= first && value <= last;
}

// True when `desc` carries the fields ABI 1.2 appended (views, device values, param spaces).
bool is_abi_1_2_desc(const rrt_callable_desc_t &desc) {
  return desc.struct_size >= sizeof(rrt_callable_desc_t);
}

// The span of `count` elements at `array`; a null array with a nonzero count is an error.
template <class T>
Status array_of(const T *array, std::uint32_t count, const char *array_name, const char *count_name,
                std::span<const T> *out) {
  if (count != 0 && array == nullptr) {
    return Status::invalid_argument(format("%s is null with %s %u", array_name, count_name, count));
  }
  *out = std::span<const T>(array, count);
  return Status::ok();
}

Status check_counts(const rrt_callable_desc_t &desc) {
  const std::int32_t bind = raw_enum(desc.bind);
  if (!within(bind, RRT_BIND_DEVICE_BUILD, RRT_BIND_HOST_BUILD)) {
    return Status::invalid_argument(format("unknown bind strategy %d", bind));
  }
  if (desc.num_params > Callable::kMaxParams ||
      desc.num_intermediates > Callable::kMaxIntermediates ||
      desc.num_scalars > Callable::kMaxScalars) {
    return Status::invalid_argument(
        format("callable has %u params, %u intermediates, %u scalars (limits %u, "
               "%u, %u)",
               desc.num_params, desc.num_intermediates, desc.num_scalars, Callable::kMaxParams,
               Callable::kMaxIntermediates, Callable::kMaxScalars));
  }
  if (desc.num_tasks == 0 || desc.num_tasks > Callable::kMaxTasks) {
    return Status::invalid_argument(
        format("callable has %u tasks (1 to %u)", desc.num_tasks, Callable::kMaxTasks));
  }
  if ((desc.num_params != 0 && desc.params == nullptr) ||
      (desc.num_intermediates != 0 && desc.intermediates == nullptr) || desc.tasks == nullptr) {
    return Status::invalid_argument("callable descriptor has a null array with a nonzero count");
  }
  return Status::ok();
}

// Decodes tensor `index` of a group named `what`; a param's direction, and its space when
// `reads_space`, are checked and kept.
Status decode_tensor(const rrt_tensor_desc_t &tensor, const char *what, std::uint32_t index,
                     bool is_param, bool reads_space, TensorSpec *out) {
  const std::int32_t dtype = raw_enum(tensor.dtype);
  if (!within(dtype, RRT_DTYPE_F32, RRT_DTYPE_U8)) {
    return Status::invalid_argument(format("%s %u: unknown dtype %d", what, index, dtype));
  }
  if (tensor.ndim > RRT_MAX_DIMS) {
    return Status::invalid_argument(
        format("%s %u: %u dimensions (at most %d)", what, index, tensor.ndim, RRT_MAX_DIMS));
  }
  const std::int32_t direction = is_param ? raw_enum(tensor.direction) : RRT_DIR_INOUT;
  if (!within(direction, RRT_DIR_IN, RRT_DIR_INOUT)) {
    return Status::invalid_argument(format("%s %u: unknown direction %d", what, index, direction));
  }
  const std::int32_t space = is_param && reads_space ? raw_enum(tensor.space) : RRT_PARAM_SPACE_ANY;
  if (!within(space, RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_DEVICE)) {
    return Status::invalid_argument(format("%s %u: unknown space %d", what, index, space));
  }
  out->dtype = static_cast<rrt_dtype_t>(dtype);
  out->ndim = tensor.ndim;
  std::copy(tensor.shape, tensor.shape + tensor.ndim, out->shape.begin());
  out->direction = static_cast<rrt_direction_t>(direction);
  out->space = static_cast<rrt_param_space_t>(space);
  return Status::ok();
}

Status decode_tensors(std::span<const rrt_tensor_desc_t> tensors, const char *what, bool is_param,
                      bool reads_space, std::vector<TensorSpec> *out) {
  out->resize(tensors.size());
  for (std::uint32_t i = 0; i < tensors.size(); ++i) {
    RRT_RETURN_IF_ERROR(decode_tensor(tensors[i], what, i, is_param, reads_space, &(*out)[i]));
  }
  return Status::ok();
}

// A view's base or a device value's source: a PARAM or an INTERMEDIATE.
Status decode_tensor_ref(std::int32_t kind, std::uint32_t index, const char *what,
                         std::uint32_t which, const char *field, OperandRef *out) {
  if (kind != RRT_OPERAND_PARAM && kind != RRT_OPERAND_INTERMEDIATE) {
    return Status::invalid_argument(
        format("%s %u: %s %d is neither RRT_OPERAND_PARAM nor RRT_OPERAND_INTERMEDIATE", what,
               which, field, kind));
  }
  *out = OperandRef{static_cast<rrt_operand_kind_t>(kind), index};
  return Status::ok();
}

Status decode_device_values(const rrt_callable_desc_t &desc, std::vector<DeviceValueSpec> *out) {
  if (desc.num_device_values > Callable::kMaxDeviceValues) {
    return Status::invalid_argument(format("callable has %u device values (at most %u)",
                                           desc.num_device_values, Callable::kMaxDeviceValues));
  }
  std::span<const rrt_device_value_desc_t> values;
  RRT_RETURN_IF_ERROR(array_of(desc.device_values, desc.num_device_values, "device_values",
                               "num_device_values", &values));
  out->resize(values.size());
  for (std::uint32_t i = 0; i < values.size(); ++i) {
    DeviceValueSpec &value = (*out)[i];
    RRT_RETURN_IF_ERROR(decode_tensor_ref(raw_enum(values[i].source_kind), values[i].source_index,
                                          "device value", i, "source_kind", &value.source));
    value.element = values[i].element;
  }
  return Status::ok();
}

Status decode_views(const rrt_callable_desc_t &desc, std::vector<ViewSpec> *out) {
  if (desc.num_views > Callable::kMaxViews) {
    return Status::invalid_argument(
        format("callable has %u views (at most %u)", desc.num_views, Callable::kMaxViews));
  }
  std::span<const rrt_view_desc_t> views;
  RRT_RETURN_IF_ERROR(array_of(desc.views, desc.num_views, "views", "num_views", &views));
  out->resize(views.size());
  for (std::uint32_t i = 0; i < views.size(); ++i) {
    const rrt_view_desc_t &view = views[i];
    ViewSpec &spec = (*out)[i];
    RRT_RETURN_IF_ERROR(decode_tensor_ref(raw_enum(view.base_kind), view.base_index, "view", i,
                                          "base_kind", &spec.base));
    if (view.ndim > RRT_MAX_DIMS) {
      return Status::invalid_argument(
          format("view %u: %u dimensions (1 to %d)", i, view.ndim, static_cast<int>(RRT_MAX_DIMS)));
    }
    spec.ndim = view.ndim;
    std::copy(view.shape, view.shape + view.ndim, spec.shape.begin());
    spec.offset = view.offset;
    spec.offset_value = view.offset_value;
    spec.offset_stride = view.offset_stride;
    spec.offset_value_max = view.offset_value_max;
  }
  return Status::ok();
}

// Decodes task t; a 1.1 desc knows no VIEW or DEVICE_VALUE operands.
Status decode_task(const rrt_task_desc_t &task, std::uint32_t t, bool has_views, TaskSpec *out) {
  if (task.num_operands > Callable::kMaxOperandsPerTask) {
    return Status::invalid_argument(format("task %u: %u operands (at most %u)", t,
                                           task.num_operands, Callable::kMaxOperandsPerTask));
  }
  if (task.num_operands != 0 && task.operands == nullptr) {
    return Status::invalid_argument(format("task %u: null operand array", t));
  }
  const std::int32_t last_kind = has_views ? RRT_OPERAND_DEVICE_VALUE : RRT_OPERAND_IMMEDIATE;
  out->kernel_id = task.kernel_id;
  out->operands.resize(task.num_operands);
  for (std::uint32_t o = 0; o < task.num_operands; ++o) {
    const std::int32_t kind = raw_enum(task.operands[o].kind);
    if (!within(kind, RRT_OPERAND_PARAM, last_kind)) {
      return Status::invalid_argument(
          format("task %u operand %u: unknown operand kind %d", t, o, kind));
    }
    out->operands[o] = OperandRef{static_cast<rrt_operand_kind_t>(kind), task.operands[o].index};
  }
  return Status::ok();
}

}  // namespace

Status decode_callable_desc(const rrt_callable_desc_t *desc, CallableSpec *out) {
  if (desc == nullptr) {
    return Status::invalid_argument("desc is null");
  }
  RRT_RETURN_IF_ERROR(
      check_struct_size("rrt_callable_desc_t", desc->struct_size, kCallableDescV1Size));
  RRT_RETURN_IF_ERROR(check_counts(*desc));
  const bool abi_1_2 = is_abi_1_2_desc(*desc);
  CallableSpec spec;
  spec.bind = static_cast<rrt_bind_strategy_t>(raw_enum(desc->bind));
  spec.num_scalars = desc->num_scalars;
  RRT_RETURN_IF_ERROR(decode_tensors(std::span(desc->params, desc->num_params), "param", true,
                                     abi_1_2, &spec.params));
  RRT_RETURN_IF_ERROR(decode_tensors(std::span(desc->intermediates, desc->num_intermediates),
                                     "intermediate", false, false, &spec.intermediates));
  if (abi_1_2) {
    RRT_RETURN_IF_ERROR(decode_device_values(*desc, &spec.device_values));
    RRT_RETURN_IF_ERROR(decode_views(*desc, &spec.views));
  }
  spec.tasks.resize(desc->num_tasks);
  for (std::uint32_t t = 0; t < desc->num_tasks; ++t) {
    RRT_RETURN_IF_ERROR(decode_task(desc->tasks[t], t, abi_1_2, &spec.tasks[t]));
  }
  *out = std::move(spec);
  return Status::ok();
}

}  // namespace replayrt::capi
