// The platform an ABI suite runs on: the simulator, or CUDA in the builds linked with the fake
// CUDA platform (REPLAYRT_TEST_ON_FAKE_CUDA, support/fake_cuda_platform.h), where every CUDA
// path of libreplayrt runs on FakeCuda.
#pragma once

#include <cstdint>

#include <replayrt/replayrt.h>

#if defined(REPLAYRT_TEST_ON_FAKE_CUDA)
#include "support/fake_cuda_platform.h"
#endif

namespace replayrt::testing {

inline rrt_platform_t test_platform() {
#if defined(REPLAYRT_TEST_ON_FAKE_CUDA)
  return RRT_PLATFORM_CUDA;
#else
  return RRT_PLATFORM_SIM;
#endif
}

inline bool testing_on_cuda() {
  return test_platform() == RRT_PLATFORM_CUDA;
}

// Registers a host function as a kernel the test platform runs: rrt_kernel_register on the
// simulator; on the fake CUDA platform a native launcher whose kernel calls it on the stream.
inline rrt_status_t register_host_kernel(rrt_context_t ctx, const char *name, rrt_kernel_fn fn,
                                         void *user, std::int32_t *out_kernel_id) {
#if defined(REPLAYRT_TEST_ON_FAKE_CUDA)
  return register_host_kernel_on_fake_cuda(ctx, name, fn, user, out_kernel_id);
#else
  return rrt_kernel_register(ctx, name, fn, user, out_kernel_id);
#endif
}

}  // namespace replayrt::testing
