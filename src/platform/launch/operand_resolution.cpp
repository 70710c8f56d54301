#include "platform/launch/operand_resolution.h"

namespace replayrt {

rrt_kernel_args_t ResolvedOperands::args() const noexcept {
  return rrt_kernel_args_t{num_tensors, addresses.data(), sizes.data(), num_scalars,
                           scalars.data()};
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
  }
  return "operand record of unknown kind";
}

OperandError resolve_task_operands(const TaskRecord &task, std::span<const OperandRecord> operands,
                                   const InvocationPayloadView &payload,
                                   ResolvedOperands *out) noexcept {
  if (task.num_tensors > kMaxTaskOperands || task.num_scalars > kMaxTaskOperands) {
    return OperandError::kTooManyOperands;
  }
  const std::uint64_t count = std::uint64_t{task.num_tensors} + task.num_scalars;
  if (task.first_operand > operands.size() || count > operands.size() - task.first_operand) {
    return OperandError::kRangeOutsideImage;
  }
  out->num_tensors = task.num_tensors;
  out->num_scalars = task.num_scalars;
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
        out->addresses[i] = reinterpret_cast<void *>(operand.value);
        out->sizes[i] = operand.bytes;
        break;
      case ImageOperandKind::kScalar:
      case ImageOperandKind::kImmediate:
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
      case ImageOperandKind::kParam:
      case ImageOperandKind::kBaked:
        return OperandError::kWrongKindForPosition;
      default:
        return OperandError::kUnknownKind;
    }
  }
  return OperandError::kNone;
}

}  // namespace replayrt
