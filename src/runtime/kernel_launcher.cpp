#include "runtime/kernel_launcher.h"

#include "context/launch_scope.h"
#include "runtime/run_args.h"

namespace replayrt {

Status KernelLauncher::launch(std::int32_t callable_id, const CallableTable::Record &record,
                              const RunArgsView &args, Stream &caller) {
  // The arguments are checked under the admission lock, so a free of a tensor's buffer comes
  // wholly before or after the launch.
  const std::lock_guard<std::mutex> lock(order_.mutex());
  RRT_RETURN_IF_ERROR(validate_run_args(*record.callable, args, device_, &validated_ranges_));
  const bool capturing = caller.is_capturing();
  const auto tasks = static_cast<std::uint32_t>(record.callable->tasks().size());
  BindRequest request = bind_request(callable_id, record, args);
  // With profiling on, the launches one capture holds write their task records one after
  // another, or each from the first record on. An owner's capture of a wrapped stream ends
  // unseen, so its launches are not counted: each writes from the first record on.
  // The capture's count is in place before the enqueue, so nothing after it allocates.
  const bool counts_records = capturing && context_.profiling() && !caller.capture_is_foreign();
  std::uint32_t *capture_tasks = nullptr;
  if (counts_records) {
    capture_tasks = &capture_profile_tasks_.try_emplace(&caller, 0).first->second;
    if (!each_launch_from_the_first_record_) {
      request.profile_offset = *capture_tasks;
    }
  }
  {
    const LaunchScope scope(context_);
    RRT_RETURN_IF_ERROR(
        bind_strategy(record.callable->bind()).bind(context_.slot(0), request, &scratch_));
  }
  if (!capturing) {
    RRT_RETURN_IF_ERROR(order_.wait_for_previous(caller));
    // Before the first enqueue: a failure part-way leaves work queued that uses gm_heap and
    // staging, and the next stream's work must still follow it.
    order_.mark_last(caller);
  }
  RRT_RETURN_IF_ERROR(enqueue_bound(executor_, *record.executable, scratch_, caller));
  if (capture_tasks != nullptr) {
    *capture_tasks = request.profile_offset + tasks;
  }
  if (!capturing) {
    last_profile_tasks_ = tasks;
  }
  context_.counters().launches.fetch_add(1, std::memory_order_relaxed);
  return Status::ok();
}

Status KernelLauncher::profile(LaunchProfile *out) const {
  std::uint32_t records = 0;
  {
    // The records belong to the most recent launch or replay once it has completed.
    const std::lock_guard<std::mutex> lock(order_.mutex());
    RRT_RETURN_IF_ERROR(order_.record_tail());
    records = last_profile_tasks_;
  }
  order_.wait_for_tail();
  out->tasks.resize(records);
  std::uint32_t read = 0;
  RRT_RETURN_IF_ERROR(
      context_.read_task_records(0, &out->launch, out->tasks.data(), records, &read));
  out->tasks.resize(read);
  return Status::ok();
}

std::uint32_t KernelLauncher::take_capture_profile_tasks(const Stream &stream) {
  const auto held = capture_profile_tasks_.find(&stream);
  if (held == capture_profile_tasks_.end()) {
    return 0;
  }
  const std::uint32_t tasks = held->second;
  capture_profile_tasks_.erase(held);
  return tasks;
}

}  // namespace replayrt
