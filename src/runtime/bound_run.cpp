#include "runtime/bound_run.h"

namespace replayrt {

Status enqueue_bound(Executor &executor, const PreparedExecutable &executable,
                     const BoundRun &bound, Stream &stream) {
  for (const StagedCopy &copy : bound.copies_in) {
    RRT_RETURN_IF_ERROR(stream.enqueue_copy_host_to_device(copy.dst, copy.src, copy.bytes));
  }
  RRT_RETURN_IF_ERROR(executor.enqueue(stream, executable, bound.binding()));
  for (const StagedCopy &copy : bound.copies_out) {
    RRT_RETURN_IF_ERROR(stream.enqueue_copy_device_to_host(copy.dst, copy.src, copy.bytes));
  }
  return Status::ok();
}

}  // namespace replayrt
