#include "runtime/program_pipeline.h"

#include <algorithm>
#include <utility>

#include "platform/record_or_wait.h"
#include "runtime/run_args.h"

namespace replayrt {

namespace {

// A claimed pipeline slot that goes back to the context when the claim ends (an early return
// or an exception) unless keep() handed it to the run being published.
class SlotClaim {
 public:
  SlotClaim(DeviceContext &context, int slot) noexcept : context_(context), slot_(slot) {}
  ~SlotClaim() {
    if (slot_ >= 0) {
      context_.release_slot(slot_);
    }
  }
  SlotClaim(const SlotClaim &) = delete;
  SlotClaim &operator=(const SlotClaim &) = delete;
  SlotClaim(SlotClaim &&) = delete;
  SlotClaim &operator=(SlotClaim &&) = delete;

  void keep() noexcept { slot_ = -1; }

 private:
  DeviceContext &context_;
  int slot_;
};

}  // namespace

Status ProgramPipeline::create(Device &device, DeviceContext &context, Executor &executor,
                               LaunchOrder &order, std::unique_ptr<ProgramPipeline> *out) {
  std::unique_ptr<ProgramPipeline> pipeline(new ProgramPipeline(device, context, executor, order));
  for (auto &stream : pipeline->own_streams_) {
    RRT_RETURN_IF_ERROR(device.create_stream(&stream));
  }
  for (auto &event : pipeline->slot_done_) {
    RRT_RETURN_IF_ERROR(device.create_event(&event));
  }
  for (auto &event : pipeline->slot_used_) {
    RRT_RETURN_IF_ERROR(device.create_event(&event));
  }
  *out = std::move(pipeline);
  return Status::ok();
}

ProgramPipeline::~ProgramPipeline() {
  (void)synchronize_own_streams();
}

Status ProgramPipeline::prepare(std::int32_t callable_id, const CallableTable::Record &record,
                                const RunArgsView &args, std::uint64_t session,
                                std::unique_ptr<ProgramRun> *out) {
  RRT_RETURN_IF_ERROR(validate_run_args(*record.callable, args, device_));
  std::vector<CapturedAddress> device_tensors;
  RRT_RETURN_IF_ERROR(device_tensor_allocations(args, device_, &device_tensors));

  auto run = std::make_unique<ProgramRun>();
  int slot = -1;
  RRT_RETURN_IF_ERROR(context_.claim_slot(&slot));
  SlotClaim claim(context_, slot);
  const auto tasks = static_cast<std::uint32_t>(record.callable->tasks().size());
  std::unique_lock<std::mutex> lock(order_.mutex(), std::defer_lock);
  RRT_RETURN_IF_ERROR(wait_until_unused(slot, tasks, lock));
  run->slot_ = slot;
  run->callable_ = record.callable;
  run->executable_ = record.executable;
  run->strategy_ = &bind_strategy(record.callable->bind());
  run->device_tensors_ = std::move(device_tensors);
  run->session_ = session;
  RRT_RETURN_IF_ERROR(run->strategy_->bind(context_.slot(slot),
                                           bind_request(callable_id, record, args), &run->bound_));
  claim.keep();
  *out = std::move(run);
  return Status::ok();
}

Status ProgramPipeline::wait_until_unused(int slot, std::uint32_t tasks,
                                          std::unique_lock<std::mutex> &lock) {
  for (;;) {
    bool rebuild = false;
    RRT_RETURN_IF_ERROR(context_.check_collectors_rebuild(slot, tasks, &rebuild));
    slot_used_[static_cast<std::size_t>(slot)]->wait();
    if (rebuild) {
      for (auto &used : slot_used_) {
        used->wait();
      }
    }
    lock.lock();
    // Under the lock no replay is admitted and no other bind runs, so what holds now holds
    // through the caller's bind; a slot claimed meanwhile makes that bind refuse a rebuild.
    RRT_RETURN_IF_ERROR(context_.check_collectors_rebuild(slot, tasks, &rebuild));
    const auto unused = [](const std::unique_ptr<Event> &used) { return used->query(); };
    if (rebuild ? std::all_of(slot_used_.begin(), slot_used_.end(), unused)
                : unused(slot_used_[static_cast<std::size_t>(slot)])) {
      return Status::ok();
    }
    lock.unlock();
  }
}

Status ProgramPipeline::launch(ProgramRun &run, Stream *stream, std::uint64_t session) {
  if (run.session_ != session) {
    run.state_ = ProgramRun::State::kAbandoned;
  }
  if (run.state_ != ProgramRun::State::kPrepared) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "the run is not in the prepared state (it was launched already, or "
                         "its context was finalized)");
  }
  Stream &target = stream != nullptr ? *stream : *own_streams_[static_cast<std::size_t>(run.slot_)];
  if (target.capture_is_foreign()) {
    // A program-mode run's buffers may move later (free + malloc); a graph replayrt does not
    // own could not be checked for it at replay.
    return Status::error(RRT_ERR_INVALID_STATE,
                         "program-mode runs cannot be captured by a capture replayrt does not "
                         "own (the stream's native stream is being captured by its owner); "
                         "capture a kernel-mode launch, whose addresses never move, instead");
  }
  // Under the admission lock, so a free of a tensor's buffer comes wholly before or after
  // the launch.
  const std::lock_guard<std::mutex> lock(order_.mutex());
  RRT_RETURN_IF_ERROR(check_device_tensor_allocations(run.device_tensors_, device_));
  run.captured_ = target.is_capturing();
  if (!run.captured_) {
    // A refusal enqueues nothing, so the run stays prepared and can be launched again.
    RRT_RETURN_IF_ERROR(order_.end_previous_capture(target));
  }
  Status enqueued;
  try {
    enqueued = enqueue_run(run, target);
  } catch (...) {
    settle_failed_launch(run, target);
    throw;
  }
  if (!enqueued.is_ok()) {
    settle_failed_launch(run, target);
    return enqueued;
  }
  run.stream_ = &target;
  run.state_ = ProgramRun::State::kLaunched;
  context_.counters().launches.fetch_add(1, std::memory_order_relaxed);
  return Status::ok();
}

Status ProgramPipeline::enqueue_run(ProgramRun &run, Stream &target) {
  if (run.captured_) {
    return enqueue_bound(executor_, *run.executable_, run.bound_, target);
  }
  RRT_RETURN_IF_ERROR(order_.wait_for_previous(target));
  order_.mark_last(target);
  const auto slot = static_cast<std::size_t>(run.slot_);
  RRT_RETURN_IF_ERROR(enqueue_bound(executor_, *run.executable_, run.bound_, target));
  RRT_RETURN_IF_ERROR(target.record_event(*slot_done_[slot]));
  return target.record_event(*slot_used_[slot]);
}

void ProgramPipeline::settle_failed_launch(ProgramRun &run, Stream &target) {
  run.state_ = ProgramRun::State::kFailed;
  if (run.captured_) {
    // enqueue_bound spoiled the capture.
    return;
  }
  const auto slot = static_cast<std::size_t>(run.slot_);
  (void)record_or_wait_idle(target, *slot_used_[slot]);
  if (&target == own_streams_[slot].get()) {
    (void)target.synchronize();
  }
}

Status ProgramPipeline::wait(ProgramRun &run, std::uint64_t session) {
  if (run.state_ == ProgramRun::State::kCompleted) {
    return Status::ok();
  }
  if (run.state_ != ProgramRun::State::kLaunched) {
    return Status::error(RRT_ERR_INVALID_STATE, "the run was not launched");
  }
  if (run.session_ != session) {
    // The slot's events now mark the next session's runs.
    return Status::error(RRT_ERR_INVALID_STATE,
                         "the run's context was finalized since (finalize waited for the run "
                         "and reported its failure, if any)");
  }
  if (run.captured_) {
    run.state_ = ProgramRun::State::kCompleted;
    return Status::ok();
  }
  Status done = slot_done_[static_cast<std::size_t>(run.slot_)]->synchronize();
  if (!done.is_ok()) {
    run.state_ = ProgramRun::State::kFailed;
    return done;
  }
  run.state_ = ProgramRun::State::kCompleted;
  return Status::ok();
}

Status ProgramPipeline::finalize(ProgramRun &run, std::uint64_t session) {
  Status waited;
  if (run.state_ == ProgramRun::State::kLaunched && run.session_ == session) {
    waited = wait(run, session);
  }
  if (run.session_ == session && run.state_ != ProgramRun::State::kAbandoned) {
    context_.release_slot(run.slot_);
  }
  run.state_ = ProgramRun::State::kAbandoned;
  return waited;
}

Status ProgramPipeline::profile(const ProgramRun &run, std::uint64_t session,
                                LaunchProfile *out) const {
  if (run.session_ != session) {
    return Status::error(RRT_ERR_INVALID_STATE, "the run's context was finalized since");
  }
  if (run.state_ != ProgramRun::State::kCompleted || run.captured_) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "the run has not completed (wait for it before reading its profile)");
  }
  out->tasks.resize(run.callable_->tasks().size());
  std::uint32_t read = 0;
  RRT_RETURN_IF_ERROR(context_.read_task_records(run.slot_, &out->launch, out->tasks.data(),
                                                 static_cast<std::uint32_t>(out->tasks.size()),
                                                 &read));
  out->tasks.resize(std::min<std::size_t>(read, out->launch.tasks));
  return Status::ok();
}

void ProgramPipeline::record_replay(Stream &stream) noexcept {
  for (auto &used : slot_used_) {
    (void)record_or_wait_idle(stream, *used);
  }
}

Status ProgramPipeline::synchronize_own_streams() {
  Status first;
  for (auto &stream : own_streams_) {
    if (stream) {
      keep_first_failure(first, stream->synchronize());
    }
  }
  return first;
}

Status ProgramPipeline::wait_own_streams_idle() {
  for (auto &stream : own_streams_) {
    RRT_RETURN_IF_ERROR(stream->wait_idle());
  }
  return Status::ok();
}

}  // namespace replayrt
