// The platform's Device interface: the narrow contract every backend implements.
//
// Backends: sim (platform/sim, always built) and cuda (optional). Exactly one factory
// (platform/device_factory.h) chooses a backend; nothing above the platform layer names one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/status.h"

namespace replayrt {

// The allocation a device address belongs to. A generation is unique for the life of the
// backend and never reused, so (base, generation) tells the same allocation from a new one
// that happens to get the same base.
struct AllocationInfo {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  std::uint64_t generation = 0;
};

struct MemoryCounters {
  std::uint64_t allocation_calls = 0;  // successful allocations
  std::uint64_t free_calls = 0;        // successful frees
  std::uint64_t live_bytes = 0;
  std::uint64_t peak_live_bytes = 0;
};

// Device memory. Shared preconditions: a device range [ptr, ptr + bytes) must lie inside one
// live allocation, else the call returns RRT_ERR_INVALID_ARGUMENT and does nothing. Copies and
// memset here are synchronous. Every member is thread-safe.
class Device {
 public:
  Device() = default;
  virtual ~Device() = default;
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  Device(Device &&) = delete;
  Device &operator=(Device &&) = delete;

  // A 1024-byte-aligned allocation of at least `bytes` (> 0) bytes, or null when the device
  // cannot provide it. A fault-injecting wrapper may also throw.
  virtual void *allocate(std::size_t bytes) = 0;
  // Frees an allocation base. An unknown pointer, an interior pointer or a second free returns
  // RRT_ERR_INVALID_ARGUMENT and changes nothing.
  virtual Status free(void *ptr) = 0;

  virtual Status copy_host_to_device(void *dst, const void *src, std::size_t bytes) = 0;
  virtual Status copy_device_to_host(void *dst, const void *src, std::size_t bytes) = 0;
  virtual Status copy_device_to_device(void *dst, const void *src, std::size_t bytes) = 0;
  virtual Status memset(void *dst, int value, std::size_t bytes) = 0;

  // The live allocation containing `address`, if any.
  virtual std::optional<AllocationInfo> find_allocation(const void *address) const = 0;
  virtual MemoryCounters memory_counters() const = 0;
};

}  // namespace replayrt
