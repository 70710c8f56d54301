// The hidden-pointer launcher of hidden_pointer_kernel.h on the fake CUDA platform: its kernel
// is a FakeKernel of another module than libreplayrt's, first loaded when it is warmed up or
// launched outside a capture (lazy loading), whose CPU implementation adds the hidden floats.
#include <cstdint>
#include <cstring>
#include <mutex>

#include "hidden_pointer_kernel.h"
#include "support/fake_cuda_platform.h"

namespace {

struct HiddenParams {
  float *data;
  const float *hidden;
  std::uint64_t count;
};

const char kAddHidden = 0;

void add_hidden(const replayrt::testing::FakeKernelLaunch &launch, void * /*context*/) {
  HiddenParams p{};
  std::memcpy(&p, launch.parameters[0].data(), sizeof p);
  for (std::uint64_t i = 0; i < p.count; ++i) {
    p.data[i] += p.hidden[i];
  }
}

replayrt::testing::FakeCuda &fake() {
  replayrt::testing::FakeCuda &cuda = replayrt::testing::platform_fake_cuda();
  static std::once_flag registered;
  std::call_once(registered, [&] {
    replayrt::testing::FakeKernel kernel;
    kernel.name = "add_hidden";
    kernel.parameter_sizes = {sizeof(HiddenParams)};
    kernel.run = &add_hidden;
    kernel.other_module = true;
    kernel.loaded = false;
    cuda.register_kernel(&kAddHidden, std::move(kernel));
  });
  return cuda;
}

}  // namespace

int hidden_pointer_launcher(const rrt_kernel_args_t *args, void *stream, void *user) {
  if (args == nullptr || args->num_tensors != 1) {
    return 1;
  }
  HiddenParams params{static_cast<float *>(args->tensors[0]), static_cast<const float *>(user),
                      args->tensor_bytes[0] / sizeof(float)};
  void *parameters[] = {&params};
  const auto blocks = static_cast<unsigned>((params.count + 255) / 256);
  return fake().api().launch_kernel(&kAddHidden, dim3(blocks), dim3(256), parameters, 0,
                                    static_cast<cudaStream_t>(stream)) == cudaSuccess
             ? 0
             : 2;
}

int warm_hidden_pointer_kernel() {
  cudaFuncAttributes attributes{};
  return fake().api().func_get_attributes(&attributes, &kAddHidden) == cudaSuccess ? 0 : 1;
}
