#include "platform/sticky_failure.h"

#include <utility>

namespace replayrt {

void StickyFailure::fail(Status failure) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.load(std::memory_order_relaxed)) {
    return;
  }
  failure_ = std::move(failure);
  ++serial_;
  pending_.store(true, std::memory_order_release);
}

void StickyFailure::fail_on_exception() noexcept {
  try {
    fail(Status::error(RRT_ERR_KERNEL_FAILED, kThrewMessage));
  } catch (...) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!pending_.load(std::memory_order_relaxed)) {
      failure_ = Status::ok();
      detail_lost_ = true;
      ++serial_;
      pending_.store(true, std::memory_order_release);
    }
  }
}

std::uint64_t StickyFailure::pending_serial() const noexcept {
  if (!is_pending()) {
    return 0;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  return pending_.load(std::memory_order_relaxed) ? serial_ : 0;
}

Status StickyFailure::take_locked() {
  if (!pending_.load(std::memory_order_relaxed)) {
    return Status::ok();
  }
  Status failure = detail_lost_ ? Status::error(RRT_ERR_KERNEL_FAILED, kThrewMessage)
                                : std::exchange(failure_, Status::ok());
  detail_lost_ = false;
  pending_.store(false, std::memory_order_release);
  return failure;
}

Status StickyFailure::report() {
  if (!is_pending()) {
    return Status::ok();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  return take_locked();
}

Status StickyFailure::report(std::uint64_t serial) {
  if (serial == 0 || !is_pending()) {
    return Status::ok();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  return serial == serial_ ? take_locked() : Status::ok();
}

}  // namespace replayrt
