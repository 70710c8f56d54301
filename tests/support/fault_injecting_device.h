// FaultInjectingDevice: a test double that wraps any Device and makes chosen allocations,
// transfers and stream enqueues fail.
// Part of the testing library (replayrt_testing_support); it does not ship in libreplayrt.so.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "platform/device.h"
#include "support/fault_injecting_stream.h"

namespace replayrt {

// Forwards every call to the wrapped device, except that
//   - allocate() can be made to return null on the Nth allocation from now
//     (fail_nth_allocation), to throw std::bad_alloc on it (throw_on_nth_allocation), or to
//     return null whenever the wrapped device's live bytes plus the request would exceed a
//     budget (fail_beyond_live_bytes);
//   - the Nth transfer from now (a synchronous copy in any direction or a memset) can be made
//     to fail with RRT_ERR_INTERNAL without reaching the device (fail_nth_transfer);
//   - every stream it creates is a FaultInjectingStream, and the Nth enqueue from now on any
//     of them can be made to return a failure (fail_nth_enqueue) or to throw std::bad_alloc
//     (throw_on_nth_enqueue).
// N counts attempts of its kind from the arming call, starting at 1; a one-shot fault fires
// once and disarms. Attempts that fail are still counted.
// The wrapped device must outlive the wrapper.
// Thread safety: every member is thread-safe.
class FaultInjectingDevice final : public Device {
 public:
  explicit FaultInjectingDevice(Device &inner) noexcept : inner_(inner) {}

  void fail_nth_allocation(std::uint64_t n);
  void throw_on_nth_allocation(std::uint64_t n);
  void fail_beyond_live_bytes(std::uint64_t budget);
  void fail_nth_transfer(std::uint64_t n);
  void fail_nth_enqueue(std::uint64_t n) { enqueues_->arm(n, EnqueueFaults::Fault::kReturnStatus); }
  void throw_on_nth_enqueue(std::uint64_t n) {
    enqueues_->arm(n, EnqueueFaults::Fault::kThrowBadAlloc);
  }
  void clear_faults();

  std::uint64_t allocation_attempts() const;
  std::uint64_t transfer_attempts() const;
  std::uint64_t enqueue_attempts() const { return enqueues_->attempts(); }
  std::uint64_t injected_failures() const;

  DeviceProperties properties() const override { return inner_.properties(); }
  std::span<const BuiltinLauncher> builtin_launchers() const override {
    return inner_.builtin_launchers();
  }
  void *allocate(std::size_t bytes) override;
  Status free(void *ptr) override { return inner_.free(ptr); }
  Status copy_host_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status copy_device_to_host(void *dst, const void *src, std::size_t bytes) override;
  Status copy_device_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status memset(void *dst, int value, std::size_t bytes) override;
  std::optional<AllocationInfo> find_allocation(const void *address) const override {
    return inner_.find_allocation(address);
  }
  std::size_t first_range_outside_allocations(std::span<const AddressRange> ranges) const override {
    return inner_.first_range_outside_allocations(ranges);
  }
  MemoryCounters memory_counters() const override { return inner_.memory_counters(); }
  Status create_stream(std::unique_ptr<Stream> *out) override;
  Status create_event(std::unique_ptr<Event> *out) override { return inner_.create_event(out); }
  void set_host_wait_policy(const HostWaitPolicy &policy) override {
    inner_.set_host_wait_policy(policy);
  }
  Status create_executor(const ExecutorConfig &config, std::unique_ptr<Executor> *out) override {
    return inner_.create_executor(config, out);
  }

 private:
  enum class OneShot { kNone, kReturnNull, kThrow };

  // Counts a transfer attempt; true when it is the one armed to fail.
  bool transfer_fails();

  Device &inner_;
  mutable std::mutex mutex_;
  std::uint64_t attempts_ = 0;
  std::uint64_t fire_at_ = 0;
  OneShot one_shot_ = OneShot::kNone;
  bool budget_armed_ = false;
  std::uint64_t budget_ = 0;
  std::uint64_t injected_ = 0;
  std::uint64_t transfers_ = 0;
  std::uint64_t transfer_fails_at_ = 0;  // 0: disarmed
  std::shared_ptr<EnqueueFaults> enqueues_ = std::make_shared<EnqueueFaults>();
};

}  // namespace replayrt
