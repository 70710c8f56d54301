#include "platform/cuda/cuda_device.h"
#include "support/fake_cuda.h"

#include <utility>

namespace replayrt::testing {

void register_builtin_kernels(FakeCuda &fake) {
  for (const void *function : cuda::builtin_device_functions()) {
    FakeKernel kernel;
    kernel.name = "builtin";
    fake.register_kernel(function, std::move(kernel));
  }
}

}  // namespace replayrt::testing
