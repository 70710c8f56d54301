// ForwardingDevice: a Device that passes every call to another one, for test devices that
// change one or two calls and keep the rest of the inner device's behaviour.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>

#include "platform/device.h"

namespace replayrt::testing {

// Every pure virtual member forwards to `inner`, which must outlive this object. A subclass
// overrides what it changes and reaches the inner device through inner(). The members Device
// defines keep their defaults: first_range_outside_allocations asks this object's
// find_allocation (so a subclass that changes find_allocation changes the range checks too),
// and free_epoch() is untracked.
class ForwardingDevice : public Device {
 public:
  explicit ForwardingDevice(Device &inner) : inner_(inner) {}

  DeviceProperties properties() const override { return inner_.properties(); }
  std::span<const BuiltinLauncher> builtin_launchers() const override {
    return inner_.builtin_launchers();
  }
  void *allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  Status free(void *ptr) override { return inner_.free(ptr); }
  Status copy_host_to_device(void *dst, const void *src, std::size_t bytes) override {
    return inner_.copy_host_to_device(dst, src, bytes);
  }
  Status copy_device_to_host(void *dst, const void *src, std::size_t bytes) override {
    return inner_.copy_device_to_host(dst, src, bytes);
  }
  Status copy_device_to_device(void *dst, const void *src, std::size_t bytes) override {
    return inner_.copy_device_to_device(dst, src, bytes);
  }
  Status memset(void *dst, int value, std::size_t bytes) override {
    return inner_.memset(dst, value, bytes);
  }
  std::optional<AllocationInfo> find_allocation(const void *address) const override {
    return inner_.find_allocation(address);
  }
  MemoryCounters memory_counters() const override { return inner_.memory_counters(); }
  Status create_stream(std::unique_ptr<Stream> *out) override { return inner_.create_stream(out); }
  Status create_event(std::unique_ptr<Event> *out) override { return inner_.create_event(out); }
  Status create_executor(const ExecutorConfig &config, std::unique_ptr<Executor> *out) override {
    return inner_.create_executor(config, out);
  }

 protected:
  Device &inner() const noexcept { return inner_; }

 private:
  Device &inner_;
};

}  // namespace replayrt::testing
