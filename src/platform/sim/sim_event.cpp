#include "platform/sim/sim_event.h"

#include <new>

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
    std::uint64_t through = executed_through_.load(std::memory_order_relaxed);
    if (sequence == through + 1) {
      ++through;
      while (!executed_ahead_.empty() && *executed_ahead_.begin() == through + 1) {
        executed_ahead_.erase(executed_ahead_.begin());
        ++through;
      }
      executed_through_.store(through, std::memory_order_release);
    } else if (sequence > through) {
      try {
        executed_ahead_.insert(sequence);
      } catch (const std::bad_alloc &) {
        // Out of host memory (this runs on a stream's runner, which must not throw): from
        // here on a record counts as executed once it or a later one has, rather than never.
        ahead_untracked_ = true;
      }
    }
    if (sequence > highest_executed_) {
      highest_executed_ = sequence;
      origin_ = std::move(origin);
      serial_ = serial;
    }
    completions_.fetch_add(1, std::memory_order_release);
  }
  completions_.notify_all();
}

bool SimEventState::is_complete_locked(std::uint64_t sequence) const {
  return executed_through_.load(std::memory_order_relaxed) >= sequence ||
         executed_ahead_.count(sequence) != 0 ||
         (ahead_untracked_ && highest_executed_ >= sequence);
}

bool SimEventState::is_complete(std::uint64_t sequence) const noexcept {
  if (executed_through_.load(std::memory_order_acquire) >= sequence) {
    return true;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  return is_complete_locked(sequence);
}

void SimEventState::wait_for(std::uint64_t sequence,
                             std::chrono::nanoseconds budget) const noexcept {
  for (;;) {
    const std::uint64_t seen = completions_.load(std::memory_order_acquire);
    if (is_complete(sequence)) {
      return;
    }
    wait_until_at_least(completions_, seen + 1, budget);
  }
}

void SimEventState::host_wait_for(std::uint64_t sequence,
                                  const HostWaitPolicy &policy) const noexcept {
  for (;;) {
    const std::uint64_t seen = completions_.load(std::memory_order_acquire);
    if (is_complete(sequence)) {
      return;
    }
    host_wait_until_at_least(completions_, seen + 1, policy);
  }
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
