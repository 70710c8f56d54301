// The CUDA backend's launchers of the built-in kernels (platform/cuda/builtin_launchers.cu).
#pragma once

#include <cstdint>
#include <cuda_runtime_api.h>

#include <replayrt/kernel_abi.h>

#include "platform/cuda/builtin_params.h"
#include "platform/cuda/cuda_api.h"

namespace replayrt::cuda {

// The `user` of a CUDA built-in's launcher: the table its launches go through and which
// built-in it is (an index into builtin_kernel_specs()).
struct BuiltinLaunchContext {
  const CudaApi *api = nullptr;
  std::uint32_t builtin = 0;
};

// A launcher's result for a failed cudaLaunchKernel: kLaunchErrorBase plus the cudaError_t.
inline constexpr int kLaunchErrorBase = 1000;

// The native launcher of every CUDA built-in (`user`: a BuiltinLaunchContext). It expects
// operands that passed the built-in's host check (CudaExecutor runs it first), packs them
// into BuiltinParams with their device operands, and launches the built-in's kernel on
// `native_stream` through the context's table with one BuiltinParams by value. Returns 0, or
// kLaunchErrorBase plus the launch's cudaError_t (the thread's last error is cleared).
int launch_builtin(const rrt_kernel_args_t *args, void *native_stream, void *user);

// True when the built-in `builtin`'s scalar `scalar` may be a device value on CUDA: fill's
// value, scale's s, rmsnorm's eps and rope's theta; every other scalar is a shape the launch
// is sized from on the host.
bool builtin_takes_device_scalar(std::uint32_t builtin, std::uint32_t scalar) noexcept;

// Enqueues one profiling record write (the "profile" kernel) on `stream`.
cudaError_t launch_profile(const CudaApi &api, cudaStream_t stream, const ProfileParams &params);

}  // namespace replayrt::cuda
