// DeviceRuntime: the simulator's executor of bound launches. The sim stream launches it like any
// function; it reads the invocation, then the task-graph image and the scheduler state from
// device memory, and runs the tasks on the device's worker team.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "common/status.h"
#include "platform/device.h"
#include "platform/launch/kernel_registry.h"
#include "platform/launch/profile_records.h"
#include "platform/sim/executor/worker_pool.h"

namespace replayrt::sim {

// Execution of one invocation:
//   1. decode and check the invocation header (reserved fields zero, no host-only copies,
//      payload size consistent);
//   2. read the task-graph image at the payload's image address and check that it is one
//      (magic, version) and that it is the callable and generation the header names: an image
//      that was freed, moved or replaced after capture fails here instead of computing garbage;
//      check that its section offsets and size are the ones its counts give;
//   3. reset the scheduler state (from the image, or from the host-built seed it names, which
//      must be a reset state: nothing taken or completed, ready slots naming tasks);
//   4. run every task once its predecessors completed, on up to 1 + helpers workers; a task
//      whose kernel divides into parts (HostKernelParts: the large built-ins) has its parts run
//      by every worker that is idle meanwhile, at most one such task at a time, and completes
//      when its last part has;
//   5. report the first kernel failure as RRT_ERR_KERNEL_FAILED naming the callable, the task
//      and the kernel; later tasks are skipped.
// Every index read from device memory (ready slots, successor ranges and indices, operand
// ranges and payload indices) is checked against the image's counts before it is used. An
// inconsistent image or state stops every worker and is RRT_ERR_KERNEL_FAILED naming the
// inconsistency: when no task is running or ready but some never ran, when more tasks
// complete or become ready than exist, or when a claimed ready slot stays empty for 10 s.
// Waiting for running tasks has no time bound.
// When the invocation carries profiling addresses, every executed task writes its TaskTiming
// there and the launch writes its LaunchRecord to the device-wall record.
// Thread safety: entry() may run concurrently for invocations whose scheduler states differ.
class DeviceRuntime final : public Executor {
 public:
  // `workers` >= 1 device workers per invocation. `kernels` must outlive this object.
  DeviceRuntime(const KernelRegistry &kernels, unsigned workers);

  // Checks the image (view_task_graph) and that every task's kernel has a host function; the
  // executable it makes holds nothing else (the device reads the uploaded image).
  Status prepare(const TaskGraphSpec &spec, std::unique_ptr<PreparedExecutable> *out) override;
  // Enqueues entry() with this object and the binding's invocation as a launch on `stream`;
  // the image the invocation names is read from device memory when it executes (the
  // binding's gm_heap is baked into that image and not used here).
  Status enqueue(Stream &stream, const PreparedExecutable &executable,
                 const LaunchBinding &binding) override;

  // The DeviceEntry the sim stream calls; `self` is this object.
  static Status entry(void *self, const std::byte *invocation, std::size_t bytes);

  unsigned workers() const noexcept { return pool_.helpers() + 1; }

 private:
  Status execute(const std::byte *invocation, std::size_t bytes);

  const KernelRegistry &kernels_;
  WorkerPool pool_;
};

}  // namespace replayrt::sim
