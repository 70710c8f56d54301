#include "support/fake_cuda_platform.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>

#include "platform/cuda/cuda_api.h"
#include "platform/launch/operand_resolution.h"

namespace replayrt::cuda {

const CudaApi &platform_cuda_api() noexcept {
  return testing::platform_fake_cuda().api();
}

}  // namespace replayrt::cuda

namespace replayrt::testing {

namespace {

constexpr std::uint32_t kMaxTensors = kMaxTaskTensors;
constexpr std::uint32_t kMaxScalars = kMaxTaskScalars;

// The one parameter of the host-kernel fake kernel: the function and a copy of its operands, as
// many as a task takes.
struct HostKernelParams {
  rrt_kernel_fn fn = nullptr;
  void *user = nullptr;
  std::uint32_t num_tensors = 0;
  std::uint32_t num_scalars = 0;
  void *tensors[kMaxTensors] = {};
  std::uint64_t tensor_bytes[kMaxTensors] = {};
  std::uint64_t scalars[kMaxScalars] = {};
};

const char kHostKernel = 0;

void run_host_kernel(const FakeKernelLaunch &launch, void * /*context*/) {
  HostKernelParams p;
  std::memcpy(&p, launch.parameters[0].data(), sizeof p);
  const rrt_kernel_args_t args{p.num_tensors, p.tensors, p.tensor_bytes, p.num_scalars,
                               p.scalars,     0,         nullptr};
  if (p.fn(&args, p.user) != 0) {
    platform_fake_cuda().fault(cudaErrorLaunchFailure);
  }
}

struct HostKernel {
  rrt_kernel_fn fn;
  void *user;
};

int launch_host_kernel(const rrt_kernel_args_t *args, void *stream, void *user) {
  const auto *kernel = static_cast<const HostKernel *>(user);
  HostKernelParams p;
  p.fn = kernel->fn;
  p.user = kernel->user;
  p.num_tensors = std::min(args->num_tensors, kMaxTensors);
  p.num_scalars = std::min(args->num_scalars, kMaxScalars);
  std::copy_n(args->tensors, p.num_tensors, p.tensors);
  std::copy_n(args->tensor_bytes, p.num_tensors, p.tensor_bytes);
  std::copy_n(args->scalars, p.num_scalars, p.scalars);
  void *parameters[] = {&p};
  return platform_fake_cuda().api().launch_kernel(&kHostKernel, dim3(1), dim3(1), parameters, 0,
                                                  static_cast<cudaStream_t>(stream)) == cudaSuccess
             ? 0
             : 1;
}

}  // namespace

FakeCuda &platform_fake_cuda() {
  static FakeCuda fake;
  static std::once_flag registered;
  std::call_once(registered, [] {
    FakeKernel kernel;
    kernel.name = "host_kernel";
    kernel.parameter_sizes = {sizeof(HostKernelParams)};
    kernel.run = &run_host_kernel;
    fake.register_kernel(&kHostKernel, std::move(kernel));
  });
  return fake;
}

namespace {

// The platform table is noexcept, like the CUDA runtime's: the fake is built before main, so
// its first use inside the library allocates nothing (a host out-of-memory test may be
// failing every allocation then).
[[maybe_unused]] const bool fake_built_before_main = (platform_fake_cuda(), true);

}  // namespace

rrt_status_t register_host_kernel_on_fake_cuda(rrt_context_t ctx, const char *name,
                                               rrt_kernel_fn fn, void *user,
                                               std::int32_t *out_kernel_id) {
  static std::mutex mutex;
  static std::deque<HostKernel> kernels;
  HostKernel *kernel = nullptr;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    kernel = &kernels.emplace_back(HostKernel{fn, user});
  }
  return rrt_kernel_register_native(ctx, name, &launch_host_kernel, kernel, out_kernel_id);
}

}  // namespace replayrt::testing
