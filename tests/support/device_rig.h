// A simulated device wrapped in a fault injector, and the allocator memory objects take.
#pragma once

#include "memory/device_allocator.h"
#include "platform/sim/sim_device.h"
#include "support/fault_injecting_device.h"

namespace replayrt::testing {

struct DeviceRig {
  DeviceRig() = default;
  explicit DeviceRig(sim::SimDeviceOptions options) : device(options) {}

  sim::SimDevice device;
  FaultInjectingDevice faults{device};
  DeviceAllocator allocator = device_allocator(faults);

  MemoryCounters counters() const { return device.memory_counters(); }
};

}  // namespace replayrt::testing
