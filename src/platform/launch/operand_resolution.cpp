#include "platform/launch/operand_resolution.h"

#include <replayrt/kernel_abi.h>

namespace replayrt {

namespace {

// The address and size of the tensor a view or device-value record names.
bool locate(std::uint32_t source, std::uint32_t index, std::uint64_t address, std::uint64_t bytes,
            const OperandSections &sections, const InvocationPayloadView &payload,
            std::uint64_t *out_address, std::uint64_t *out_bytes) noexcept {
  switch (static_cast<ImageTensorSource>(source)) {
    case ImageTensorSource::kParam:
      if (index >= payload.tensor_addresses.size() || index >= payload.tensor_bytes.size()) {
        return false;
      }
      *out_address = payload.tensor_addresses[index];
      *out_bytes = payload.tensor_bytes[index];
      return true;
    case ImageTensorSource::kBaked:
      *out_address = sections.baked_base + address;
      *out_bytes = bytes;
      return true;
  }
  return false;
}

// Where device value `index` lives: its element's address and its dtype.
OperandError locate_device_value(std::uint32_t index, const OperandSections &sections,
                                 const InvocationPayloadView &payload, std::uint64_t *where,
                                 std::uint32_t *dtype) noexcept {
  if (index >= sections.device_values.size()) {
    return OperandError::kBadDeviceValue;
  }
  const DeviceValueRecord &record = sections.device_values[index];
  std::uint64_t element_bytes = 0;
  switch (record.dtype) {
    case RRT_DTYPE_I32:
    case RRT_DTYPE_F32:
      element_bytes = 4;
      break;
    case RRT_DTYPE_I64:
      element_bytes = 8;
      break;
    default:
      return OperandError::kBadDeviceValue;
  }
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  if (!locate(record.source, record.index, record.address, record.base_bytes, sections, payload,
              &address, &bytes) ||
      address == 0 || record.element >= bytes / element_bytes) {
    return OperandError::kBadDeviceValue;
  }
  *where = address + record.element * element_bytes;
  *dtype = record.dtype;
  return OperandError::kNone;
}

// Reads the device value at `where` of `dtype`: its raw 64-bit scalar (*scalar) and its value as
// an integer (*integer; meaningful for I32 and I64 only, *is_integer says which).
void read_device_value(DeviceMemoryReader read, std::uint64_t where, std::uint32_t dtype,
                       std::uint64_t *scalar, std::int64_t *integer, bool *is_integer) noexcept {
  const auto *address = reinterpret_cast<const void *>(where);
  if (dtype == RRT_DTYPE_I64) {
    std::int64_t value = 0;
    read(address, &value, sizeof value);
    *scalar = static_cast<std::uint64_t>(value);
    *integer = value;
    *is_integer = true;
  } else if (dtype == RRT_DTYPE_I32) {
    std::int32_t value = 0;
    read(address, &value, sizeof value);
    *integer = value;
    *scalar = static_cast<std::uint64_t>(*integer);
    *is_integer = true;
  } else {
    std::uint32_t bits = 0;
    read(address, &bits, sizeof bits);
    *scalar = bits;
    *is_integer = false;
  }
}

// Records a device operand the task's work reads itself (no reader).
void defer(ResolvedOperands *out, rrt_device_operand_kind_t kind, std::uint32_t operand,
           std::uint64_t where, std::uint32_t dtype, std::uint64_t stride,
           std::uint64_t max) noexcept {
  out->device_operands[out->num_device_operands++] = rrt_device_operand_t{
      kind, operand, reinterpret_cast<const void *>(where), dtype, stride, max};
}

OperandError resolve_view(std::uint32_t operand, std::uint32_t index,
                          const OperandSections &sections, const InvocationPayloadView &payload,
                          DeviceMemoryReader read, ResolvedOperands *out) noexcept {
  if (index >= sections.views.size()) {
    return OperandError::kBadView;
  }
  const ViewRecord &view = sections.views[index];
  std::uint64_t base = 0;
  std::uint64_t base_bytes = 0;
  if (!locate(view.source, view.index, view.address, view.base_bytes, sections, payload, &base,
              &base_bytes)) {
    return OperandError::kBadView;
  }
  std::uint64_t offset = view.byte_offset;
  if (view.offset_value != -1) {
    if (view.offset_value < 0) {
      return OperandError::kBadView;
    }
    std::uint64_t where = 0;
    std::uint32_t dtype = 0;
    if (const OperandError error = locate_device_value(
            static_cast<std::uint32_t>(view.offset_value), sections, payload, &where, &dtype);
        error != OperandError::kNone) {
      return error;
    }
    if (dtype != RRT_DTYPE_I32 && dtype != RRT_DTYPE_I64) {
      return OperandError::kBadView;
    }
    if (read == nullptr) {
      // The work reads the offset itself: every offset it may take must stay inside the base.
      std::uint64_t reach = 0;
      std::uint64_t end = 0;
      if (__builtin_mul_overflow(view.offset_value_max, view.offset_stride_bytes, &reach) ||
          __builtin_add_overflow(offset, reach, &end) ||
          __builtin_add_overflow(end, view.bytes, &end) || end > base_bytes) {
        return OperandError::kBadView;
      }
      defer(out, RRT_DEVICE_OPERAND_VIEW_OFFSET, operand, where, dtype, view.offset_stride_bytes,
            view.offset_value_max);
      out->addresses[operand] = reinterpret_cast<void *>(base + offset);
      out->sizes[operand] = view.bytes;
      return OperandError::kNone;
    }
    std::uint64_t scalar = 0;
    std::int64_t value = 0;
    bool is_integer = false;
    read_device_value(read, where, dtype, &scalar, &value, &is_integer);
    if (value < 0 || static_cast<std::uint64_t>(value) > view.offset_value_max) {
      out->failed_operand = operand;
      out->failed_view = index;
      out->failed_value = value;
      out->failed_max = view.offset_value_max;
      return OperandError::kViewOffsetOutOfRange;
    }
    std::uint64_t moved = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(value), view.offset_stride_bytes,
                               &moved) ||
        __builtin_add_overflow(offset, moved, &offset)) {
      return OperandError::kBadView;
    }
  }
  std::uint64_t end = 0;
  if (__builtin_add_overflow(offset, view.bytes, &end) || end > base_bytes) {
    return OperandError::kBadView;
  }
  out->addresses[operand] = reinterpret_cast<void *>(base + offset);
  out->sizes[operand] = view.bytes;
  return OperandError::kNone;
}

}  // namespace

rrt_kernel_args_t ResolvedOperands::args() const noexcept {
  return rrt_kernel_args_t{num_tensors,
                           addresses.data(),
                           sizes.data(),
                           num_scalars,
                           scalars.data(),
                           num_device_operands,
                           num_device_operands != 0 ? device_operands.data() : nullptr};
}

const char *describe(OperandError error) noexcept {
  switch (error) {
    case OperandError::kNone:
      return "no error";
    case OperandError::kTooManyOperands:
      return "more operands than a task may take";
    case OperandError::kRangeOutsideImage:
      return "operand range outside the image's operands";
    case OperandError::kWrongKindForPosition:
      return "operand record of the wrong kind for its position";
    case OperandError::kParamOutOfRange:
      return "operand names a tensor the invocation does not carry";
    case OperandError::kScalarOutOfRange:
      return "operand names a scalar the invocation does not carry";
    case OperandError::kUnknownKind:
      return "operand record of unknown kind";
    case OperandError::kBadView:
      return "view record outside the image or reaching outside its base";
    case OperandError::kBadDeviceValue:
      return "device-value record outside the image or outside its source tensor";
    case OperandError::kViewOffsetOutOfRange:
      return "a view's device-resident offset lies outside [0, offset_value_max]";
  }
  return "operand record of unknown kind";
}

OperandError resolve_task_operands(const TaskRecord &task, std::span<const OperandRecord> operands,
                                   const InvocationPayloadView &payload,
                                   ResolvedOperands *out) noexcept {
  return resolve_task_operands(task, OperandSections{operands, {}, {}}, payload, nullptr, out);
}

OperandError resolve_task_operands(const TaskRecord &task, const OperandSections &sections,
                                   const InvocationPayloadView &payload, DeviceMemoryReader read,
                                   ResolvedOperands *out) noexcept {
  const std::span<const OperandRecord> operands = sections.operands;
  if (task.num_tensors > kMaxTaskTensors || task.num_scalars > kMaxTaskScalars) {
    return OperandError::kTooManyOperands;
  }
  const std::uint64_t count = std::uint64_t{task.num_tensors} + task.num_scalars;
  if (task.first_operand > operands.size() || count > operands.size() - task.first_operand) {
    return OperandError::kRangeOutsideImage;
  }
  out->num_tensors = task.num_tensors;
  out->num_scalars = task.num_scalars;
  out->num_device_operands = 0;
  const auto records = operands.subspan(task.first_operand, count);
  for (std::uint32_t i = 0; i < task.num_tensors; ++i) {
    const OperandRecord &operand = records[i];
    switch (static_cast<ImageOperandKind>(operand.kind)) {
      case ImageOperandKind::kParam:
        if (operand.index >= payload.tensor_addresses.size() ||
            operand.index >= payload.tensor_bytes.size()) {
          return OperandError::kParamOutOfRange;
        }
        out->addresses[i] = reinterpret_cast<void *>(payload.tensor_addresses[operand.index]);
        out->sizes[i] = payload.tensor_bytes[operand.index];
        break;
      case ImageOperandKind::kBaked:
        out->addresses[i] = reinterpret_cast<void *>(sections.baked_base + operand.value);
        out->sizes[i] = operand.bytes;
        break;
      case ImageOperandKind::kView:
        if (const OperandError error = resolve_view(i, operand.index, sections, payload, read, out);
            error != OperandError::kNone) {
          return error;
        }
        break;
      case ImageOperandKind::kScalar:
      case ImageOperandKind::kImmediate:
      case ImageOperandKind::kDeviceValue:
        return OperandError::kWrongKindForPosition;
      default:
        return OperandError::kUnknownKind;
    }
  }
  for (std::uint32_t i = 0; i < task.num_scalars; ++i) {
    const OperandRecord &operand = records[task.num_tensors + i];
    switch (static_cast<ImageOperandKind>(operand.kind)) {
      case ImageOperandKind::kScalar:
        if (operand.index >= payload.scalars.size()) {
          return OperandError::kScalarOutOfRange;
        }
        out->scalars[i] = payload.scalars[operand.index];
        break;
      case ImageOperandKind::kImmediate:
        out->scalars[i] = operand.value;
        break;
      case ImageOperandKind::kDeviceValue: {
        std::uint64_t where = 0;
        std::uint32_t dtype = 0;
        if (const OperandError error =
                locate_device_value(operand.index, sections, payload, &where, &dtype);
            error != OperandError::kNone) {
          return error;
        }
        if (read == nullptr) {
          out->scalars[i] = 0;
          defer(out, RRT_DEVICE_OPERAND_SCALAR, i, where, dtype, 0, 0);
          break;
        }
        std::int64_t integer = 0;
        bool is_integer = false;
        read_device_value(read, where, dtype, &out->scalars[i], &integer, &is_integer);
        break;
      }
      case ImageOperandKind::kParam:
      case ImageOperandKind::kBaked:
      case ImageOperandKind::kView:
        return OperandError::kWrongKindForPosition;
      default:
        return OperandError::kUnknownKind;
    }
  }
  return OperandError::kNone;
}

}  // namespace replayrt
