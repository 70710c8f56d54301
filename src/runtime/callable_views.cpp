#include "runtime/callable_views.h"

#include <algorithm>
#include <cstddef>

#include "common/format.h"
#include "common/raw_enum.h"

namespace replayrt {

namespace {

Status invalid(std::string message) {
  return Status::error(RRT_ERR_INVALID_ARGUMENT, std::move(message));
}

// The tensor a view or device value names, or an error naming `what` (e.g. "view 3").
Status find_tensor(const char *what, std::uint32_t which, std::int32_t kind, std::uint32_t index,
                   std::span<const TensorLayout> params,
                   std::span<const TensorLayout> intermediates, const TensorLayout **out) {
  if (kind != RRT_OPERAND_PARAM && kind != RRT_OPERAND_INTERMEDIATE) {
    return invalid(
        format("%s %u: the tensor kind %d is neither RRT_OPERAND_PARAM nor "
               "RRT_OPERAND_INTERMEDIATE",
               what, which, kind));
  }
  const bool is_param = kind == RRT_OPERAND_PARAM;
  const std::span<const TensorLayout> group = is_param ? params : intermediates;
  if (index >= group.size()) {
    return invalid(format("%s %u: %s %u out of range (%zu declared)", what, which,
                          is_param ? "param" : "intermediate", index, group.size()));
  }
  *out = &group[index];
  return Status::ok();
}

std::uint64_t elements_of(const TensorLayout &tensor) {
  return tensor.bytes / dtype_bytes(raw_enum(tensor.dtype));
}

bool add_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t *sum) {
  return __builtin_add_overflow(a, b, sum);
}

bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t *product) {
  return __builtin_mul_overflow(a, b, product);
}

}  // namespace

bool reads_abi_1_2_fields(const rrt_callable_desc_t &desc) noexcept {
  return desc.struct_size >= sizeof(rrt_callable_desc_t);
}

Status validate_device_values(const rrt_callable_desc_t &desc, std::span<const TensorLayout> params,
                              std::span<const TensorLayout> intermediates,
                              std::vector<DeviceValueLayout> *out) {
  if (desc.num_device_values > Callable::kMaxDeviceValues) {
    return invalid(format("callable has %u device values (at most %u)", desc.num_device_values,
                          Callable::kMaxDeviceValues));
  }
  if (desc.num_device_values != 0 && desc.device_values == nullptr) {
    return invalid(
        format("device_values is null with num_device_values %u", desc.num_device_values));
  }
  out->resize(desc.num_device_values);
  for (std::uint32_t i = 0; i < desc.num_device_values; ++i) {
    const rrt_device_value_desc_t &value = desc.device_values[i];
    const TensorLayout *source = nullptr;
    RRT_RETURN_IF_ERROR(find_tensor("device value", i, raw_enum(value.source_kind),
                                    value.source_index, params, intermediates, &source));
    const std::int32_t dtype = raw_enum(source->dtype);
    if (dtype != RRT_DTYPE_I32 && dtype != RRT_DTYPE_I64 && dtype != RRT_DTYPE_F32) {
      return invalid(
          format("device value %u: its source has dtype %d; a device value reads an "
                 "I32, I64 or F32 tensor",
                 i, dtype));
    }
    const std::uint64_t elements = elements_of(*source);
    if (value.element >= elements) {
      return invalid(format("device value %u: element %llu out of range (its source has %llu)", i,
                            static_cast<unsigned long long>(value.element),
                            static_cast<unsigned long long>(elements)));
    }
    DeviceValueLayout &layout = (*out)[i];
    layout.source = OperandRef{value.source_kind, value.source_index};
    layout.element = value.element;
    layout.dtype = source->dtype;
  }
  return Status::ok();
}

Status validate_views(const rrt_callable_desc_t &desc, std::span<const TensorLayout> params,
                      std::span<const TensorLayout> intermediates,
                      std::span<const DeviceValueLayout> device_values,
                      std::vector<ViewLayout> *out) {
  if (desc.num_views > Callable::kMaxViews) {
    return invalid(
        format("callable has %u views (at most %u)", desc.num_views, Callable::kMaxViews));
  }
  if (desc.num_views != 0 && desc.views == nullptr) {
    return invalid(format("views is null with num_views %u", desc.num_views));
  }
  out->resize(desc.num_views);
  for (std::uint32_t i = 0; i < desc.num_views; ++i) {
    const rrt_view_desc_t &view = desc.views[i];
    const TensorLayout *base = nullptr;
    RRT_RETURN_IF_ERROR(find_tensor("view", i, raw_enum(view.base_kind), view.base_index, params,
                                    intermediates, &base));
    if (view.ndim == 0 || view.ndim > RRT_MAX_DIMS) {
      return invalid(
          format("view %u: %u dimensions (1 to %d)", i, view.ndim, static_cast<int>(RRT_MAX_DIMS)));
    }
    const std::uint64_t base_elements = elements_of(*base);
    std::uint64_t elements = 1;
    for (std::uint32_t d = 0; d < view.ndim; ++d) {
      if (view.shape[d] == 0) {
        return invalid(format("view %u: dimension %u is zero", i, d));
      }
      if (mul_overflows(elements, view.shape[d], &elements) || elements > base_elements) {
        return invalid(format("view %u: more elements than its base's %llu", i,
                              static_cast<unsigned long long>(base_elements)));
      }
    }
    const bool dynamic = view.offset_value != -1;
    if (dynamic) {
      if (view.offset_value < 0 ||
          static_cast<std::uint32_t>(view.offset_value) >= device_values.size()) {
        return invalid(
            format("view %u: offset_value %d is neither -1 nor a device value (%zu "
                   "declared)",
                   i, static_cast<int>(view.offset_value), device_values.size()));
      }
      const std::int32_t dtype = raw_enum(device_values[view.offset_value].dtype);
      if (dtype != RRT_DTYPE_I32 && dtype != RRT_DTYPE_I64) {
        return invalid(
            format("view %u: offset_value %d reads dtype %d; an offset is an I32 or "
                   "I64 device value",
                   i, static_cast<int>(view.offset_value), dtype));
      }
    }
    // offset + offset_value_max * offset_stride + elements <= elements(base).
    std::uint64_t reach = 0;
    if ((dynamic && mul_overflows(view.offset_value_max, view.offset_stride, &reach)) ||
        add_overflows(reach, view.offset, &reach) || add_overflows(reach, elements, &reach) ||
        reach > base_elements) {
      return invalid(format(
          "view %u: offset %llu + offset_value_max %llu * offset_stride %llu + %llu elements "
          "exceeds its base's %llu elements",
          i, static_cast<unsigned long long>(view.offset),
          static_cast<unsigned long long>(dynamic ? view.offset_value_max : 0),
          static_cast<unsigned long long>(dynamic ? view.offset_stride : 0),
          static_cast<unsigned long long>(elements),
          static_cast<unsigned long long>(base_elements)));
    }
    const std::uint64_t element_bytes = dtype_bytes(raw_enum(base->dtype));
    ViewLayout &layout = (*out)[i];
    layout.base = OperandRef{view.base_kind, view.base_index};
    layout.dtype = base->dtype;
    layout.ndim = view.ndim;
    std::copy(view.shape, view.shape + view.ndim, layout.shape);
    layout.bytes = elements * element_bytes;
    layout.byte_offset = view.offset * element_bytes;
    layout.offset_value = dynamic ? view.offset_value : -1;
    // With offset_value_max 0 the only offset is 0, whatever the stride.
    layout.offset_stride_bytes =
        dynamic && view.offset_value_max != 0 ? view.offset_stride * element_bytes : 0;
    layout.offset_value_max = dynamic ? view.offset_value_max : 0;
  }
  return Status::ok();
}

TouchedTensor touched_tensor(const OperandRef &operand,
                             std::span<const ViewLayout> views) noexcept {
  const OperandRef &tensor = operand.kind == RRT_OPERAND_VIEW ? views[operand.index].base : operand;
  return TouchedTensor{tensor.kind == RRT_OPERAND_PARAM, tensor.index};
}

void device_values_read(std::span<const OperandRef> task_operands,
                        std::span<const ViewLayout> views, std::vector<std::uint32_t> *out) {
  for (const OperandRef &operand : task_operands) {
    if (operand.kind == RRT_OPERAND_DEVICE_VALUE) {
      out->push_back(operand.index);
    } else if (operand.kind == RRT_OPERAND_VIEW && views[operand.index].offset_value >= 0) {
      out->push_back(static_cast<std::uint32_t>(views[operand.index].offset_value));
    }
  }
}

}  // namespace replayrt
