// Callable: a validated, immutable task graph of kernel tasks over tensor parameters,
// intermediates and scalars, with its dependencies, its gm_heap layout and what it needs from
// the device.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <replayrt/kernel_abi.h>

#include "common/status.h"
#include "platform/launch/kernel_registry.h"
#include "runtime/callable_spec.h"

namespace replayrt {

struct TensorLayout {
  rrt_dtype_t dtype = RRT_DTYPE_F32;
  std::uint32_t ndim = 0;
  std::uint64_t shape[RRT_MAX_DIMS] = {};
  std::uint64_t bytes = 0;
  rrt_direction_t direction = RRT_DIR_IN;  // parameters only
  // Parameters only: where runs pass it (ANY unless a 1.2 callable desc declares it).
  rrt_param_space_t space = RRT_PARAM_SPACE_ANY;
};

// A view (rrt_view_desc_t) as the image needs it: byte offsets and sizes, the dtype its base's.
struct ViewLayout {
  OperandRef base;  // RRT_OPERAND_PARAM or RRT_OPERAND_INTERMEDIATE
  rrt_dtype_t dtype = RRT_DTYPE_F32;
  std::uint32_t ndim = 0;
  std::uint64_t shape[RRT_MAX_DIMS] = {};
  std::uint64_t bytes = 0;
  std::uint64_t byte_offset = 0;
  std::int32_t offset_value = -1;  // -1: fixed; else an index into device_values()
  std::uint64_t offset_stride_bytes = 0;
  std::uint64_t offset_value_max = 0;
};

// A device value (rrt_device_value_desc_t); its dtype is its source tensor's.
struct DeviceValueLayout {
  OperandRef source;  // RRT_OPERAND_PARAM or RRT_OPERAND_INTERMEDIATE
  std::uint64_t element = 0;
  rrt_dtype_t dtype = RRT_DTYPE_I32;
};

struct TaskPlan {
  std::int32_t kernel_id = -1;
  std::uint32_t first_operand = 0;  // into operands()
  std::uint32_t num_tensors = 0;
  std::uint32_t num_scalars = 0;      // scalar, immediate and device-value operands
  std::uint32_t first_successor = 0;  // into successors()
  std::uint32_t num_successors = 0;
  std::uint32_t num_predecessors = 0;
};

// What one run of the callable needs from the device, in bytes.
struct CallableRequirements {
  std::uint64_t gm_heap = 0;          // intermediates, laid out at intermediate_offsets()
  std::uint64_t scheduler_state = 0;  // the device scheduler's working state
  std::uint64_t image = 0;            // the task-graph image
  std::uint64_t staged_all_host = 0;  // staging when every HOST and ANY parameter is HOST
};

// Validation (Callable::create) of a spec that keeps CallableSpec's promises (the C ABI's
// decode_callable_desc checks those): every violation RRT_ERR_INVALID_ARGUMENT with a message
// that names the parameter, intermediate, view, device value, task or operand:
//   - tensors: every dimension >= 1, a byte size that does not overflow and stays within
//     kMaxTensorBytes, and all intermediates together within kMaxTensorBytes of gm_heap;
//   - tasks: a registered kernel, at most kMaxTensorOperandsPerTask tensor operands and
//     kMaxScalarOperandsPerTask scalar operands, tensors before scalars, every index in range,
//     the operand counts the kernel declares;
//   - a device value names a source of dtype I32, I64 or F32 and an element inside it. A view
//     names a base in range, has at least one dimension, each >= 1, takes the base's dtype, and
//     satisfies offset + offset_value_max * offset_stride + elements(view) <= elements(base)
//     without overflow (offset_stride and offset_value_max are ignored for a fixed offset); a
//     dynamic offset names an I32 or I64 device value;
//   - data flow (for kernels that declare which tensors they write: every built-in, and
//     kernels registered with a descriptor): no task reads an intermediate or an OUT parameter
//     before some earlier task wrote it, and no task writes an IN parameter (the message names
//     the task, the operand, the kernel and the parameter).
// A view touches its whole base; a device value (a DEVICE_VALUE operand, or the dynamic offset
// of a view the task uses) is a read of its source tensor, checked as a read above whatever
// the kernel declares.
// Dependencies are derived from program order: a task depends on the last earlier writer of
// every tensor it touches, and a task that writes a tensor also depends on every reader since
// the previous write. A dependency therefore always points to an earlier task, so the graph
// is acyclic by construction. Tasks that only read a tensor are not ordered by it. A kernel
// that does not declare its writes (rrt_kernel_register, rrt_kernel_register_native) counts as
// reading and writing every tensor operand.
//
// Thread safety: immutable after create(); share freely.
class Callable {
 public:
  static constexpr std::uint32_t kMaxParams = 1024;
  static constexpr std::uint32_t kMaxIntermediates = 65536;
  static constexpr std::uint32_t kMaxScalars = 1024;
  static constexpr std::uint32_t kMaxTasks = 65536;
  // What one task takes: the executors' limits (platform/launch/operand_resolution.h), which
  // are also the most a kernel may declare (KernelRegistry).
  static constexpr std::uint32_t kMaxTensorOperandsPerTask = RRT_KERNEL_MAX_TENSORS;
  static constexpr std::uint32_t kMaxScalarOperandsPerTask = RRT_KERNEL_MAX_SCALARS;
  static constexpr std::uint32_t kMaxOperandsPerTask =
      kMaxTensorOperandsPerTask + kMaxScalarOperandsPerTask;
  static constexpr std::uint32_t kMaxViews = 65536;
  static constexpr std::uint32_t kMaxDeviceValues = 65536;
  static constexpr std::uint64_t kMaxTensorBytes = std::uint64_t{1} << 40;
  static constexpr std::uint64_t kIntermediateAlignment = 256;

  // How create() treats a kernel id the registry does not hold.
  enum class UnknownKernels {
    kReject,         // RRT_ERR_INVALID_ARGUMENT (preparing for a context)
    kAsUserKernels,  // a user kernel that declares nothing (sizing without a context)
  };

  static Status create(const CallableSpec &spec, const KernelRegistry &kernels,
                       std::unique_ptr<const Callable> *out,
                       UnknownKernels unknown = UnknownKernels::kReject);

  rrt_bind_strategy_t bind() const noexcept { return bind_; }
  std::span<const TensorLayout> params() const noexcept { return params_; }
  std::span<const TensorLayout> intermediates() const noexcept { return intermediates_; }
  std::span<const std::uint64_t> intermediate_offsets() const noexcept {
    return intermediate_offsets_;
  }
  std::uint32_t num_scalars() const noexcept { return num_scalars_; }
  std::span<const TaskPlan> tasks() const noexcept { return tasks_; }
  std::span<const OperandRef> operands() const noexcept { return operands_; }
  std::span<const ViewLayout> views() const noexcept { return views_; }
  std::span<const DeviceValueLayout> device_values() const noexcept { return device_values_; }
  std::span<const std::uint32_t> successors() const noexcept { return successors_; }
  // A 64-bit hash of everything that shapes the image (FNV-1a over a canonical encoding).
  std::uint64_t content_key() const noexcept { return content_key_; }
  const CallableRequirements &requirements() const noexcept { return requirements_; }

 private:
  Callable() = default;

  // The steps of create() (callable.cpp says what each does).
  Status lay_out_params(const CallableSpec &spec);
  Status lay_out_intermediates(const CallableSpec &spec);
  Status lay_out_views_and_device_values(const CallableSpec &spec);
  Status plan_tasks(const CallableSpec &spec, const KernelRegistry &kernels, UnknownKernels unknown,
                    std::vector<std::vector<std::uint32_t>> *predecessors);
  Status plan_task_operands(const CallableSpec &spec, std::uint32_t t);
  Status count_operand(const CallableSpec &spec, std::uint32_t t, std::uint32_t o);
  void link_successors(const std::vector<std::vector<std::uint32_t>> &predecessors);
  void size_requirements();

  rrt_bind_strategy_t bind_ = RRT_BIND_DEVICE_BUILD;
  std::vector<TensorLayout> params_;
  std::vector<TensorLayout> intermediates_;
  std::vector<std::uint64_t> intermediate_offsets_;
  std::uint32_t num_scalars_ = 0;
  std::vector<TaskPlan> tasks_;
  std::vector<OperandRef> operands_;
  std::vector<ViewLayout> views_;
  std::vector<DeviceValueLayout> device_values_;
  std::vector<std::uint32_t> successors_;
  std::uint64_t content_key_ = 0;
  CallableRequirements requirements_;
};

// Bytes of one element of `dtype` (an rrt_dtype_t value); 0 for an unknown dtype.
std::uint64_t dtype_bytes(std::int32_t dtype) noexcept;

}  // namespace replayrt
