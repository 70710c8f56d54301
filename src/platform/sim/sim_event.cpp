#include "platform/sim/sim_event.h"

#include "platform/sim/spin_wait.h"

namespace replayrt::sim {

std::uint64_t SimEventState::begin_record() noexcept {
  return recorded_.fetch_add(1, std::memory_order_acq_rel) + 1;
}

std::uint64_t SimEventState::latest_record() const noexcept {
  return recorded_.load(std::memory_order_acquire);
}

void SimEventState::complete_record(std::uint64_t sequence, std::shared_ptr<StickyFailure> origin,
                                    std::uint64_t serial) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (sequence <= completed_.load(std::memory_order_relaxed)) {
      return;
    }
    origin_ = std::move(origin);
    serial_ = serial;
    completed_.store(sequence, std::memory_order_release);
  }
  completed_.notify_all();
}

bool SimEventState::is_complete(std::uint64_t sequence) const noexcept {
  return completed_.load(std::memory_order_acquire) >= sequence;
}

void SimEventState::wait_for(std::uint64_t sequence,
                             std::chrono::nanoseconds budget) const noexcept {
  wait_until_at_least(completed_, sequence, budget);
}

void SimEventState::host_wait_for(std::uint64_t sequence,
                                  const HostWaitPolicy &policy) const noexcept {
  host_wait_until_at_least(completed_, sequence, policy);
}

Status SimEventState::report_carried_failure() {
  std::shared_ptr<StickyFailure> origin;
  std::uint64_t serial = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    origin = origin_;
    serial = serial_;
  }
  return origin != nullptr ? origin->report(serial) : Status::ok();
}

SimEvent::SimEvent(HostWaitPolicy host_wait)
    : state_(std::make_shared<SimEventState>()), host_wait_(host_wait) {}

SimEvent::~SimEvent() = default;

Status SimEvent::synchronize() {
  const std::uint64_t target = state_->latest_record();
  if (target == 0) {
    return Status::ok();
  }
  state_->host_wait_for(target, host_wait_);
  return state_->report_carried_failure();
}

void SimEvent::wait() {
  const std::uint64_t target = state_->latest_record();
  if (target != 0) {
    state_->host_wait_for(target, host_wait_);
  }
}

bool SimEvent::query() const {
  return state_->is_complete(state_->latest_record());
}

}  // namespace replayrt::sim
