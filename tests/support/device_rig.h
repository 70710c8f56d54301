// A simulated device wrapped in a fault injector.
#pragma once

#include "platform/sim/sim_device.h"
#include "support/fault_injecting_device.h"

namespace replayrt::testing {

struct DeviceRig {
  DeviceRig() = default;
  explicit DeviceRig(sim::SimDeviceOptions options) : device(options) {}

  sim::SimDevice device;
  FaultInjectingDevice faults{device};

  MemoryCounters counters() const { return device.memory_counters(); }
};

}  // namespace replayrt::testing
