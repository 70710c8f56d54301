// What the simulated device reports through Device::properties().
#pragma once

#include "common/align.h"
#include "platform/device.h"

namespace replayrt::sim {

// Bases have the ABI's alignment (the hardware DMA granularity the simulator models), and
// device memory is host memory, so the host can dereference it.
inline constexpr DeviceProperties kSimDeviceProperties{kDeviceAddressAlignment, true, true, "sim"};

}  // namespace replayrt::sim
