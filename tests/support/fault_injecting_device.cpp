#include "support/fault_injecting_device.h"

#include <new>

namespace replayrt {

void FaultInjectingDevice::fail_nth_allocation(std::uint64_t n) {
  const std::lock_guard<std::mutex> lock(mutex_);
  one_shot_ = n == 0 ? OneShot::kNone : OneShot::kReturnNull;
  fire_at_ = attempts_ + n;
}

void FaultInjectingDevice::throw_on_nth_allocation(std::uint64_t n) {
  const std::lock_guard<std::mutex> lock(mutex_);
  one_shot_ = n == 0 ? OneShot::kNone : OneShot::kThrow;
  fire_at_ = attempts_ + n;
}

void FaultInjectingDevice::fail_beyond_live_bytes(std::uint64_t budget) {
  const std::lock_guard<std::mutex> lock(mutex_);
  budget_armed_ = true;
  budget_ = budget;
}

void FaultInjectingDevice::clear_faults() {
  const std::lock_guard<std::mutex> lock(mutex_);
  one_shot_ = OneShot::kNone;
  budget_armed_ = false;
}

std::uint64_t FaultInjectingDevice::allocation_attempts() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return attempts_;
}

std::uint64_t FaultInjectingDevice::injected_failures() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return injected_;
}

void *FaultInjectingDevice::allocate(std::size_t bytes) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++attempts_;
    if (one_shot_ != OneShot::kNone && attempts_ == fire_at_) {
      const OneShot fired = one_shot_;
      one_shot_ = OneShot::kNone;
      ++injected_;
      if (fired == OneShot::kThrow) {
        throw std::bad_alloc();
      }
      return nullptr;
    }
    if (budget_armed_ && inner_.memory_counters().live_bytes + bytes > budget_) {
      ++injected_;
      return nullptr;
    }
  }
  return inner_.allocate(bytes);
}

}  // namespace replayrt
