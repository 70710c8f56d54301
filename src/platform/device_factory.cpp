#include "platform/device_factory.h"

#include "common/format.h"
#include "platform/cuda/cuda_device_factory.h"
#include "platform/sim/sim_device.h"

namespace replayrt {

Status create_device(rrt_platform_t platform, std::int32_t device_id,
                     std::unique_ptr<Device> *out) {
  if (device_id < 0) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("device id %d is negative", static_cast<int>(device_id)));
  }
  switch (platform) {
    case RRT_PLATFORM_SIM:
      *out = std::make_unique<sim::SimDevice>();
      return Status::ok();
    case RRT_PLATFORM_CUDA:
      return create_cuda_device(device_id, out);
  }
  return Status::error(RRT_ERR_INVALID_ARGUMENT,
                       format("unknown platform %d", static_cast<int>(platform)));
}

bool platform_supports_kernel_mode(rrt_platform_t platform) noexcept {
  return platform == RRT_PLATFORM_SIM || (platform == RRT_PLATFORM_CUDA && cuda_backend_built());
}

}  // namespace replayrt
