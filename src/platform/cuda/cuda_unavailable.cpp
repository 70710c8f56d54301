// The CUDA backend's entry points in a build without CUDA (REPLAYRT_ENABLE_CUDA=OFF, or AUTO
// without a CUDA compiler).
#include "platform/cuda/cuda_device_factory.h"

namespace replayrt {

Status create_cuda_device(std::int32_t /*device_id*/, std::unique_ptr<Device> * /*out*/) {
  return Status::error(RRT_ERR_UNSUPPORTED,
                       "this build of replayrt was built without CUDA (REPLAYRT_ENABLE_CUDA)");
}

bool cuda_backend_built() noexcept {
  return false;
}

}  // namespace replayrt
