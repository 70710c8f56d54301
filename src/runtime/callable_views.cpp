#include "runtime/callable_views.h"

#include <algorithm>
#include <cstddef>

#include "common/format.h"

namespace replayrt {

namespace {

// The tensor (a PARAM or an INTERMEDIATE) a view or device value names, or an error naming
// `what` (e.g. "view 3").
Status find_tensor(const char *what, std::uint32_t which, const OperandRef &tensor,
                   std::span<const TensorLayout> params,
                   std::span<const TensorLayout> intermediates, const TensorLayout **out) {
  const bool is_param = tensor.kind == RRT_OPERAND_PARAM;
  const std::span<const TensorLayout> group = is_param ? params : intermediates;
  if (tensor.index >= group.size()) {
    return Status::invalid_argument(format("%s %u: %s %u out of range (%zu declared)", what, which,
                                           is_param ? "param" : "intermediate", tensor.index,
                                           group.size()));
  }
  *out = &group[tensor.index];
  return Status::ok();
}

std::uint64_t elements_of(const TensorLayout &tensor) {
  return tensor.bytes / dtype_bytes(tensor.dtype);
}

bool add_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t *sum) {
  return __builtin_add_overflow(a, b, sum);
}

bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t *product) {
  return __builtin_mul_overflow(a, b, product);
}

}  // namespace

Status validate_device_values(std::span<const DeviceValueSpec> values,
                              std::span<const TensorLayout> params,
                              std::span<const TensorLayout> intermediates,
                              std::vector<DeviceValueLayout> *out) {
  out->resize(values.size());
  for (std::uint32_t i = 0; i < values.size(); ++i) {
    const DeviceValueSpec &value = values[i];
    const TensorLayout *source = nullptr;
    RRT_RETURN_IF_ERROR(
        find_tensor("device value", i, value.source, params, intermediates, &source));
    const std::int32_t dtype = source->dtype;
    if (dtype != RRT_DTYPE_I32 && dtype != RRT_DTYPE_I64 && dtype != RRT_DTYPE_F32) {
      return Status::invalid_argument(
          format("device value %u: its source has dtype %d; a device value reads an "
                 "I32, I64 or F32 tensor",
                 i, dtype));
    }
    const std::uint64_t elements = elements_of(*source);
    if (value.element >= elements) {
      return Status::invalid_argument(
          format("device value %u: element %llu out of range (its source has %llu)", i,
                 static_cast<unsigned long long>(value.element),
                 static_cast<unsigned long long>(elements)));
    }
    DeviceValueLayout &layout = (*out)[i];
    layout.source = value.source;
    layout.element = value.element;
    layout.dtype = source->dtype;
  }
  return Status::ok();
}

Status validate_views(std::span<const ViewSpec> views, std::span<const TensorLayout> params,
                      std::span<const TensorLayout> intermediates,
                      std::span<const DeviceValueLayout> device_values,
                      std::vector<ViewLayout> *out) {
  out->resize(views.size());
  for (std::uint32_t i = 0; i < views.size(); ++i) {
    const ViewSpec &view = views[i];
    const TensorLayout *base = nullptr;
    RRT_RETURN_IF_ERROR(find_tensor("view", i, view.base, params, intermediates, &base));
    if (view.ndim == 0) {
      return Status::invalid_argument(
          format("view %u: %u dimensions (1 to %d)", i, view.ndim, static_cast<int>(RRT_MAX_DIMS)));
    }
    const std::uint64_t base_elements = elements_of(*base);
    std::uint64_t elements = 1;
    for (std::uint32_t d = 0; d < view.ndim; ++d) {
      if (view.shape[d] == 0) {
        return Status::invalid_argument(format("view %u: dimension %u is zero", i, d));
      }
      if (mul_overflows(elements, view.shape[d], &elements) || elements > base_elements) {
        return Status::invalid_argument(format("view %u: more elements than its base's %llu", i,
                                               static_cast<unsigned long long>(base_elements)));
      }
    }
    const bool dynamic = view.offset_value != -1;
    if (dynamic) {
      if (view.offset_value < 0 ||
          static_cast<std::uint32_t>(view.offset_value) >= device_values.size()) {
        return Status::invalid_argument(
            format("view %u: offset_value %d is neither -1 nor a device value (%zu "
                   "declared)",
                   i, static_cast<int>(view.offset_value), device_values.size()));
      }
      const std::int32_t dtype = device_values[view.offset_value].dtype;
      if (dtype != RRT_DTYPE_I32 && dtype != RRT_DTYPE_I64) {
        return Status::invalid_argument(
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
      return Status::invalid_argument(format(
          "view %u: offset %llu + offset_value_max %llu * offset_stride %llu + %llu elements "
          "exceeds its base's %llu elements",
          i, static_cast<unsigned long long>(view.offset),
          static_cast<unsigned long long>(dynamic ? view.offset_value_max : 0),
          static_cast<unsigned long long>(dynamic ? view.offset_stride : 0),
          static_cast<unsigned long long>(elements),
          static_cast<unsigned long long>(base_elements)));
    }
    const std::uint64_t element_bytes = dtype_bytes(base->dtype);
    ViewLayout &layout = (*out)[i];
    layout.base = view.base;
    layout.dtype = base->dtype;
    layout.ndim = view.ndim;
    std::copy(view.shape.begin(), view.shape.begin() + view.ndim, layout.shape);
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
