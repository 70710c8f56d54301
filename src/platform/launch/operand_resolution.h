// Resolving a task's operands: what every backend does before it launches a task's kernel.
// A task's operand records (platform/launch/task_graph_image.h) select tensor addresses,
// tensor sizes and scalars from the invocation payload (platform/launch/invocation_header.h)
// or carry them baked in; resolution turns them into the rrt_kernel_args_t the kernel gets.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include <replayrt/replayrt.h>

#include "platform/launch/invocation_header.h"
#include "platform/launch/task_graph_image.h"

namespace replayrt {

// The most tensors, and separately the most scalars, one task may take.
inline constexpr std::size_t kMaxTaskOperands = 32;

// A task's resolved operands. Only the first num_tensors entries of `addresses` and `sizes`
// and the first num_scalars entries of `scalars` are written and meaningful; the arrays are
// left uninitialized otherwise, since resolution runs once per executed task.
struct ResolvedOperands {
  std::uint32_t num_tensors = 0;
  std::uint32_t num_scalars = 0;
  std::array<void *, kMaxTaskOperands> addresses;
  std::array<std::uint64_t, kMaxTaskOperands> sizes;
  std::array<std::uint64_t, kMaxTaskOperands> scalars;

  // The kernel arguments; they point into this object, which must outlive them.
  rrt_kernel_args_t args() const noexcept;
};

// Why an image's operand records could not be resolved.
enum class OperandError {
  kNone,
  kTooManyOperands,       // more than kMaxTaskOperands tensors or scalars
  kRangeOutsideImage,     // [first_operand, first_operand + count) is not inside the operands
  kWrongKindForPosition,  // a scalar record among the tensors, or a tensor record among the scalars
  kParamOutOfRange,       // a kParam index at or past the payload's tensors
  kScalarOutOfRange,      // a kScalar index at or past the payload's scalars
  kUnknownKind,
};

// What went wrong, as a phrase ("operand range outside the image").
const char *describe(OperandError error) noexcept;

// Resolves `task`'s operands: its first num_tensors records are tensors (kParam or kBaked),
// the next num_scalars are scalars (kScalar or kImmediate). `operands` is the image's whole
// operand array (num_operands records); every index is checked against it and against
// `payload` before it is used, so a corrupted image yields an error, never an access outside
// them. On error `out` holds no meaningful operands.
OperandError resolve_task_operands(const TaskRecord &task, std::span<const OperandRecord> operands,
                                   const InvocationPayloadView &payload,
                                   ResolvedOperands *out) noexcept;

}  // namespace replayrt
