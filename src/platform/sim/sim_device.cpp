#include "platform/sim/sim_device.h"

namespace replayrt::sim {

SimDevice::SimDevice(SimDeviceOptions options) : memory_(options.memory) {}

SimDevice::~SimDevice() = default;

void *SimDevice::allocate(std::size_t bytes) {
  return memory_.allocate(bytes);
}

Status SimDevice::free(void *ptr) {
  return memory_.free(ptr);
}

Status SimDevice::copy_host_to_device(void *dst, const void *src, std::size_t bytes) {
  return memory_.copy_host_to_device(dst, src, bytes);
}

Status SimDevice::copy_device_to_host(void *dst, const void *src, std::size_t bytes) {
  return memory_.copy_device_to_host(dst, src, bytes);
}

Status SimDevice::copy_device_to_device(void *dst, const void *src, std::size_t bytes) {
  return memory_.copy_device_to_device(dst, src, bytes);
}

Status SimDevice::memset(void *dst, int value, std::size_t bytes) {
  return memory_.memset(dst, value, bytes);
}

std::optional<AllocationInfo> SimDevice::find_allocation(const void *address) const {
  return memory_.find_allocation(address);
}

MemoryCounters SimDevice::memory_counters() const {
  return memory_.counters();
}

}  // namespace replayrt::sim
