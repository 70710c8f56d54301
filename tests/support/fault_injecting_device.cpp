#include "support/fault_injecting_device.h"

#include <new>
#include <utility>

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

void FaultInjectingDevice::fail_nth_transfer(std::uint64_t n) {
  const std::lock_guard<std::mutex> lock(mutex_);
  transfer_fails_at_ = n == 0 ? 0 : transfers_ + n;
}

void FaultInjectingDevice::clear_faults() {
  const std::lock_guard<std::mutex> lock(mutex_);
  one_shot_ = OneShot::kNone;
  budget_armed_ = false;
  transfer_fails_at_ = 0;
  enqueues_->clear();
}

std::uint64_t FaultInjectingDevice::transfer_attempts() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return transfers_;
}

bool FaultInjectingDevice::transfer_fails() {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++transfers_;
  if (transfer_fails_at_ == 0 || transfers_ != transfer_fails_at_) {
    return false;
  }
  transfer_fails_at_ = 0;
  ++injected_;
  return true;
}

Status FaultInjectingDevice::copy_host_to_device(void *dst, const void *src, std::size_t bytes) {
  if (transfer_fails()) {
    return Status::error(RRT_ERR_INTERNAL, "injected failure of a host-to-device copy");
  }
  return inner_.copy_host_to_device(dst, src, bytes);
}

Status FaultInjectingDevice::copy_device_to_host(void *dst, const void *src, std::size_t bytes) {
  if (transfer_fails()) {
    return Status::error(RRT_ERR_INTERNAL, "injected failure of a device-to-host copy");
  }
  return inner_.copy_device_to_host(dst, src, bytes);
}

Status FaultInjectingDevice::copy_device_to_device(void *dst, const void *src, std::size_t bytes) {
  if (transfer_fails()) {
    return Status::error(RRT_ERR_INTERNAL, "injected failure of a device-to-device copy");
  }
  return inner_.copy_device_to_device(dst, src, bytes);
}

Status FaultInjectingDevice::memset(void *dst, int value, std::size_t bytes) {
  if (transfer_fails()) {
    return Status::error(RRT_ERR_INTERNAL, "injected failure of a device memset");
  }
  return inner_.memset(dst, value, bytes);
}

std::uint64_t FaultInjectingDevice::allocation_attempts() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return attempts_;
}

std::uint64_t FaultInjectingDevice::injected_failures() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return injected_ + enqueues_->injected();
}

Status FaultInjectingDevice::create_stream(std::unique_ptr<Stream> *out) {
  std::unique_ptr<Stream> inner;
  RRT_RETURN_IF_ERROR(inner_.create_stream(&inner));
  *out = std::make_unique<FaultInjectingStream>(std::move(inner), enqueues_);
  return Status::ok();
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
