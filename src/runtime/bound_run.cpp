#include "runtime/bound_run.h"

namespace replayrt {

namespace {

Status enqueue_each(Executor &executor, const PreparedExecutable &executable, const BoundRun &bound,
                    Stream &stream) {
  for (const StagedCopy &copy : bound.copies_in) {
    RRT_RETURN_IF_ERROR(stream.enqueue_copy_host_to_device(copy.dst, copy.src, copy.bytes));
  }
  RRT_RETURN_IF_ERROR(executor.enqueue(stream, executable, bound.binding()));
  for (const StagedCopy &copy : bound.copies_out) {
    RRT_RETURN_IF_ERROR(stream.enqueue_copy_device_to_host(copy.dst, copy.src, copy.bytes));
  }
  return Status::ok();
}

}  // namespace

Status enqueue_bound(Executor &executor, const PreparedExecutable &executable,
                     const BoundRun &bound, Stream &stream) {
  const bool capturing = stream.is_capturing();
  try {
    return enqueue_each(executor, executable, bound, stream);
  } catch (...) {
    // A refused enqueue spoils the capture by itself; a throw leaves it going, holding part
    // of the launch.
    if (capturing) {
      stream.fail_enqueue(Status::error_without_detail(RRT_ERR_INTERNAL));
    }
    throw;
  }
}

}  // namespace replayrt
