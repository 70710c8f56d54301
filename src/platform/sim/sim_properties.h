// What the simulated device reports through Device::properties().
#pragma once

#include "platform/device.h"

namespace replayrt::sim {

// Bases are 1024-byte aligned (the hardware DMA granularity the simulator models), and device
// memory is host memory, so the host can dereference it.
inline constexpr DeviceProperties kSimDeviceProperties{1024, true};

}  // namespace replayrt::sim
