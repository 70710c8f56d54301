// SimDevice: the simulator backend of the Device interface.
#pragma once

#include "platform/device.h"
#include "platform/sim/sim_memory.h"

namespace replayrt::sim {

struct SimDeviceOptions {
  SimMemoryOptions memory;
};

class SimDevice final : public Device {
 public:
  explicit SimDevice(SimDeviceOptions options = {});
  ~SimDevice() override;

  void *allocate(std::size_t bytes) override;
  Status free(void *ptr) override;
  Status copy_host_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status copy_device_to_host(void *dst, const void *src, std::size_t bytes) override;
  Status copy_device_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status memset(void *dst, int value, std::size_t bytes) override;
  std::optional<AllocationInfo> find_allocation(const void *address) const override;
  MemoryCounters memory_counters() const override;

  SimMemory &memory() noexcept { return memory_; }

 private:
  SimMemory memory_;
};

}  // namespace replayrt::sim
