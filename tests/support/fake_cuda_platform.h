// The CUDA platform of a test build whose create_device(RRT_PLATFORM_CUDA) runs on FakeCuda
// (the replayrt_fake_cuda_platform library: libreplayrt's objects with this platform table):
// C-ABI suites and examples run their CUDA paths there without a GPU.
#pragma once

#include <cstdint>

#include <replayrt/replayrt.h>

#include "support/fake_cuda.h"

namespace replayrt::testing {

// The process's fake, made on first use; every CUDA context of the process runs on it.
FakeCuda &platform_fake_cuda();

// Registers `fn` under `name` as a kernel the CUDA platform runs: a native launcher that
// enqueues one fake kernel whose CPU implementation calls fn(args, user) when the stream
// reaches it (at every replay of a graph that captured it). A nonzero return is a device fault
// of the fake's context, as a failing kernel is on a GPU. `user` must outlive the context.
rrt_status_t register_host_kernel_on_fake_cuda(rrt_context_t ctx, const char *name,
                                               rrt_kernel_fn fn, void *user,
                                               std::int32_t *out_kernel_id);

}  // namespace replayrt::testing
