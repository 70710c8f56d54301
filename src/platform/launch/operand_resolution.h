// Resolving a task's operands: what every backend does before it launches a task's kernel.
// A task's operand records (platform/launch/task_graph_image.h) select tensor addresses,
// tensor sizes and scalars from the invocation payload (platform/launch/invocation_header.h)
// or carry them baked in; resolution turns them into the rrt_kernel_args_t the kernel gets.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include <replayrt/kernel_abi.h>

#include "platform/launch/invocation_header.h"
#include "platform/launch/task_graph_image.h"

namespace replayrt {

// The most tensor operands, and separately the most scalar operands, one task may take. The
// tensor limit is the public one (RRT_KERNEL_MAX_TENSORS, which a kernel's 64-bit `writes` mask
// also bounds). Callable (what prepares) and KernelRegistry (what a kernel may declare) hold
// the same limits; static_asserts in their sources keep them equal.
inline constexpr std::size_t kMaxTaskTensors = RRT_KERNEL_MAX_TENSORS;
inline constexpr std::size_t kMaxTaskScalars = RRT_KERNEL_MAX_SCALARS;

// A task's resolved operands. Only the first num_tensors entries of `addresses` and `sizes`
// and the first num_scalars entries of `scalars` are written and meaningful; the arrays are
// left uninitialized otherwise, since resolution runs once per executed task.
struct ResolvedOperands {
  std::uint32_t num_tensors = 0;
  std::uint32_t num_scalars = 0;
  std::array<void *, kMaxTaskTensors> addresses;
  std::array<std::uint64_t, kMaxTaskTensors> sizes;
  std::array<std::uint64_t, kMaxTaskScalars> scalars;
  // Resolution without a reader: the device values the task's work reads itself, at most one
  // per operand (the first num_device_operands entries).
  std::uint32_t num_device_operands = 0;
  std::array<rrt_device_operand_t, kMaxTaskTensors + kMaxTaskScalars> device_operands;
  // Written only with OperandError::kViewOffsetOutOfRange: the tensor operand, its view
  // record, the device value read and the view's offset_value_max.
  std::uint32_t failed_operand = 0;
  std::uint32_t failed_view = 0;
  std::int64_t failed_value = 0;
  std::uint64_t failed_max = 0;

  // The kernel arguments; they point into this object, which must outlive them.
  rrt_kernel_args_t args() const noexcept;
};

// Why an image's operand records could not be resolved.
enum class OperandError {
  kNone,
  kTooManyOperands,       // more than kMaxTaskTensors tensors or kMaxTaskScalars scalars
  kRangeOutsideImage,     // [first_operand, first_operand + count) is not inside the operands
  kWrongKindForPosition,  // a scalar record among the tensors, or a tensor record among the scalars
  kParamOutOfRange,       // a kParam index at or past the payload's tensors
  kScalarOutOfRange,      // a kScalar index at or past the payload's scalars
  kUnknownKind,
  kBadView,         // a view record that is not in the image, or reaches outside its base
  kBadDeviceValue,  // a device-value record that is not in the image, or lies outside its source
  // Not an inconsistency: the device value a view's dynamic offset reads lies outside
  // [0, offset_value_max] (ResolvedOperands names it). The task must fail, not run.
  kViewOffsetOutOfRange,
};

// What went wrong, as a phrase ("operand range outside the image").
const char *describe(OperandError error) noexcept;

// The image sections that operand records index: the whole operand, view and device-value
// arrays (num_operands, num_views and num_device_values records), and what baked addresses
// are relative to (0 for an image with absolute addresses; a launch's gm_heap for a
// relocatable image, TaskGraphSpec).
struct OperandSections {
  std::span<const OperandRecord> operands;
  std::span<const ViewRecord> views;
  std::span<const DeviceValueRecord> device_values;
  std::uint64_t baked_base = 0;
};

// Reads `bytes` bytes of device memory at `address` into `out`. A backend passes one when
// resolution runs where device memory is readable at the time the task runs (the simulator's
// device workers); a backend that resolves on the host at enqueue time passes none, and the
// task's work then reads each device value itself (ResolvedOperands::device_operands).
using DeviceMemoryReader = void (*)(const void *address, void *out, std::size_t bytes);

// Resolves `task`'s operands: its first num_tensors records are tensors (kParam, kBaked or
// kView), the next num_scalars are scalars (kScalar, kImmediate or kDeviceValue). Every index
// is checked against `sections` and against `payload` before it is used, and a view's range
// against its base's bytes, so a corrupted image yields an error, never an access outside
// them. A baked address is sections.baked_base plus the record's. A view resolves to its base's
// address plus byte_offset (plus the offset device value times offset_stride_bytes) and its own
// bytes. A device value is read with `read` (I32 sign-extended, I64 as is, F32 as its binary32
// bits); without a reader it becomes a device operand: a DEVICE_VALUE scalar resolves to 0, a
// view with a device-resident offset to its address at offset value 0, after checking that
// every admissible offset keeps it inside its base. On error `out` holds no meaningful operands
// (but see kViewOffsetOutOfRange).
OperandError resolve_task_operands(const TaskRecord &task, const OperandSections &sections,
                                   const InvocationPayloadView &payload, DeviceMemoryReader read,
                                   ResolvedOperands *out) noexcept;

// The same for an image without views or device values.
OperandError resolve_task_operands(const TaskRecord &task, std::span<const OperandRecord> operands,
                                   const InvocationPayloadView &payload,
                                   ResolvedOperands *out) noexcept;

}  // namespace replayrt
