// TaskLauncher: the host-side executor of bound launches for backends whose kernels run as
// native work (CUDA). It expands one invocation into one NativeWork per task, in program
// order, on the launch's stream; under capture that is a plain native graph.
#pragma once

#include <cstddef>
#include <mutex>
#include <span>
#include <vector>

#include "common/status.h"
#include "platform/device.h"
#include "platform/launch/kernel_registry.h"
#include "platform/launch/operand_resolution.h"

namespace replayrt {

// Per enqueue:
//   1. decode the invocation (platform/launch/invocation_header.h);
//   2. read the task-graph image it names from device memory (Device::copy_device_to_host)
//      and check it as the simulator's executor does: magic, version, callable and generation,
//      counts, section layout;
//   3. check that program order is a topological order (every edge goes from a task to a
//      later one) and that every task names a kernel with a native launcher;
//   4. resolve every task's operands (resolve_task_operands) and run its kernel's host-side
//      check (KernelEntry::check_operands). Views with fixed offsets resolve here; a device
//      value (a DEVICE_VALUE operand or a view's device-resident offset) cannot be read on the
//      host at enqueue time without synchronizing, so a task that reads one is
//      RRT_ERR_UNSUPPORTED;
//   5. only when all of that passed: per task, Stream::enqueue_native with a work item that
//      calls the kernel's native_launch(args, native stream, user). Its referenced addresses
//      are the task's tensor addresses; the first task's also include the launch's
//      `referenced`.
// A failure in 1-4 enqueues nothing; a launcher returning nonzero in 5 stops the expansion.
// Either is RRT_ERR_KERNEL_FAILED (the device value of 4: RRT_ERR_UNSUPPORTED) naming the callable,
// the task and the kernel; it is also handed to Stream::fail_enqueue: sticky on the stream, or,
// while capturing, the capture's failure, so a graph never silently lacks part of a launch.
// Profiling (task timings, the device-wall record) is RRT_ERR_UNSUPPORTED on this path.
//
// Steady state allocates nothing: the image copy and the resolved operands live in buffers
// kept between calls (host memory only; the device allocator is never called).
// Thread safety: enqueue() may be called from any thread; calls are serialized.
class TaskLauncher final : public Executor {
 public:
  // `device` and `kernels` must outlive the launcher.
  TaskLauncher(Device &device, const KernelRegistry &kernels);

  Status enqueue(Stream &stream, std::span<const std::byte> invocation,
                 std::span<const void *const> referenced) override;

 private:
  Status expand(Stream &stream, std::span<const std::byte> invocation,
                std::span<const void *const> referenced);

  Device &device_;
  const KernelRegistry &kernels_;
  std::mutex mutex_;
  // Guarded by mutex_; kept between calls.
  std::vector<std::uint64_t> invocation_copy_;
  std::vector<std::uint64_t> image_;
  std::vector<ResolvedOperands> resolved_;
  std::vector<const void *> referenced_;
};

}  // namespace replayrt
