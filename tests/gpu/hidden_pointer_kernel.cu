// A user launcher for the GPU tests: it adds `*user`'s floats into its tensor through a
// pointer passed inside a by-value struct, a pointer the task's operands do not declare. The
// end-of-capture audit must find it.
#include <cstdint>
#include <cuda_runtime.h>

#include "hidden_pointer_kernel.h"

namespace {

struct HiddenParams {
  float *data;
  const float *hidden;  // not among the task's tensors
  std::uint64_t count;
};

__global__ void add_hidden(HiddenParams p) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < p.count) {
    p.data[i] += p.hidden[i];
  }
}

}  // namespace

int hidden_pointer_launcher(const rrt_kernel_args_t *args, void *stream, void *user) {
  if (args == nullptr || args->num_tensors != 1) {
    return 1;
  }
  HiddenParams params{static_cast<float *>(args->tensors[0]), static_cast<const float *>(user),
                      args->tensor_bytes[0] / sizeof(float)};
  const unsigned blocks = static_cast<unsigned>((params.count + 255) / 256);
  add_hidden<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(params);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

int warm_hidden_pointer_kernel() {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, &add_hidden) == cudaSuccess ? 0 : 1;
}
