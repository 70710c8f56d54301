// The CUDA API table of the platform factory: the CUDA runtime's. Linked into libreplayrt and
// replayrt_internal only, so that a test build can link its fake in this file's place.
#include "platform/cuda/cuda_api.h"

namespace replayrt::cuda {

const CudaApi &platform_cuda_api() noexcept {
  return real_cuda_api();
}

}  // namespace replayrt::cuda
