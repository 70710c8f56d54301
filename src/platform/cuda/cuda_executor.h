// CudaExecutor: the CUDA backend's executor of bound launches (platform/device.h). It expands
// one launch into native work on the caller's stream, one piece per task, on the host.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "common/status.h"
#include "platform/cuda/cuda_api.h"
#include "platform/device.h"
#include "platform/launch/kernel_registry.h"

namespace replayrt::cuda {

// prepare() decodes and checks the relocatable image (view_task_graph), requires every task's
// kernel to have a native launcher, and keeps the decoded plan with each task's predecessors.
// A launch never reads the image back from device memory.
//
// enqueue(), per launch:
//   1. decodes the invocation and checks it against the plan: callable, generation, tensor and
//      scalar counts;
//   2. resolves every task's operands on the host (resolve_task_operands, baked addresses
//      relative to the binding's gm_heap); device values become device operands the launched
//      work reads itself (rrt_device_operand_t), so nothing reads device memory here;
//   3. runs every task's host-side check (KernelEntry::check_operands; a device scalar is
//      checked as 1.0f, its kernel checks the real value on the device) and, for a built-in,
//      refuses a device value in a scalar the built-in needs on the host (a shape):
//      RRT_ERR_UNSUPPORTED naming the task, kernel and scalar;
//   4. only when all of that passed: one Stream::enqueue_native per task, in program order,
//      that calls the kernel's native launcher with the stream's cudaStream_t. While the
//      stream is being captured (by replayrt or by the caller), each task's work is made to
//      depend on exactly its predecessors' work (cudaStreamUpdateCaptureDependencies), so
//      independent tasks become parallel branches of the graph; after the last task the
//      stream depends on every task without successors (the branches join). Outside a capture
//      tasks run in program order on the stream.
// With profiling records in the invocation, each task's work is bracketed by the "profile"
// kernel writing its TaskTiming (start and end, %globaltimer ns) and the launch by its
// LaunchRecord; nothing synchronizes.
// A failure in 1-3 enqueues nothing; a launcher returning nonzero in 4 stops the expansion.
// Either is RRT_ERR_KERNEL_FAILED (the refusals of 3: RRT_ERR_UNSUPPORTED) naming the callable,
// the task and the kernel (a built-in's failed launch: the CUDA error); it is also handed to
// Stream::fail_enqueue: sticky on the stream, or, while capturing, the capture's failure, so a
// graph never silently lacks part of a launch.
//
// Steady state allocates nothing: per thread, the resolved operands live in buffers kept
// between calls. Thread safety: every member may be called from any thread.
class CudaExecutor final : public Executor {
 public:
  // `api` and `kernels` must outlive the executor.
  CudaExecutor(const CudaApi &api, const KernelRegistry &kernels);

  Status prepare(const TaskGraphSpec &spec, std::unique_ptr<PreparedExecutable> *out) override;
  Status enqueue(Stream &stream, const PreparedExecutable &prepared,
                 const LaunchBinding &binding) override;

 private:
  const CudaApi &api_;
  const KernelRegistry &kernels_;
};

}  // namespace replayrt::cuda
