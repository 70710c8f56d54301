// The one place that chooses a platform backend.
#pragma once

#include <cstdint>
#include <memory>

#include <replayrt/values.h>

#include "common/status.h"
#include "platform/device.h"

namespace replayrt {

// RRT_PLATFORM_SIM: a simulated device (always available). RRT_PLATFORM_CUDA:
// RRT_ERR_UNSUPPORTED unless this build has a CUDA backend and a device with that id.
Status create_device(rrt_platform_t platform, std::int32_t device_id, std::unique_ptr<Device> *out);

// 1 when contexts on `platform` can run kernel-mode launches in this build.
bool platform_supports_kernel_mode(rrt_platform_t platform) noexcept;

}  // namespace replayrt
