// The built-in kernels (platform/launch/builtin_kernels.h) as CUDA kernels, and their native
// launchers. A launcher validates the operands on the host with the built-in's check (the
// kernels themselves never fail), then launches one kernel on the given stream with one
// parameter struct passed by value.
//
// Numerics: fill, copy, add, mul, scale and matmul use round-to-nearest intrinsics
// (__fadd_rn, __fmul_rn), which the compiler never contracts into FMAs, and matmul sums its k
// products in increasing order from zero, as the CPU kernels do: their results match the CPU
// kernels bit for bit. softmax, silu and gelu use expf (within 2 ulp of the CPU's exp) and
// softmax's and rmsnorm's reductions run in a different order, so those match within a
// relative error, not bitwise.
#include <cstdint>
#include <cuda_runtime.h>
#include <string_view>

#include "platform/cuda/cuda_device.h"
#include "platform/launch/builtin_kernels.h"

namespace replayrt::cuda {

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxBlocks = 4096;

enum class Op : int { kFill, kCopy, kAdd, kMul, kScale, kSilu, kGelu };

struct ElementwiseParams {
  const float *a;
  const float *b;
  float *out;
  std::uint64_t count;
  float scalar;
};

struct MatmulParams {
  const float *a;
  const float *b;
  float *out;
  std::uint64_t m;
  std::uint64_t k;
  std::uint64_t n;
};

struct RowParams {
  const float *in;
  const float *weight;  // rmsnorm only
  float *out;
  std::uint64_t rows;
  std::uint64_t cols;
  float eps;
};

__device__ float sigmoid(float x) {
  if (x >= 0.0F) {
    return 1.0F / (1.0F + expf(-x));
  }
  const float e = expf(x);
  return e / (1.0F + e);
}

template <Op kOp>
__global__ void elementwise_kernel(ElementwiseParams p) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < p.count; i += stride) {
    if constexpr (kOp == Op::kFill) {
      p.out[i] = p.scalar;
    } else if constexpr (kOp == Op::kCopy) {
      p.out[i] = p.a[i];
    } else if constexpr (kOp == Op::kAdd) {
      p.out[i] = __fadd_rn(p.a[i], p.b[i]);
    } else if constexpr (kOp == Op::kMul) {
      p.out[i] = __fmul_rn(p.a[i], p.b[i]);
    } else if constexpr (kOp == Op::kScale) {
      p.out[i] = __fmul_rn(p.a[i], p.scalar);
    } else if constexpr (kOp == Op::kSilu) {
      const float x = p.a[i];
      p.out[i] = x * sigmoid(x);
    } else {
      constexpr float kTwiceSqrtTwoOverPi = 1.5957691216057308F;
      constexpr float kCubicCoefficient = 0.044715F;
      const float x = p.a[i];
      p.out[i] = x * sigmoid(kTwiceSqrtTwoOverPi * (x + kCubicCoefficient * x * x * x));
    }
  }
}

__global__ void matmul_kernel(MatmulParams p) {
  const std::uint64_t total = p.m * p.n;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total; i += stride) {
    const std::uint64_t row = i / p.n;
    const std::uint64_t col = i % p.n;
    float sum = 0.0F;
    for (std::uint64_t step = 0; step < p.k; ++step) {
      sum = __fadd_rn(sum, __fmul_rn(p.a[row * p.k + step], p.b[step * p.n + col]));
    }
    p.out[i] = sum;
  }
}

// One block per row: the row maximum, then exp(x - max) and its sum in double, then the scale.
__global__ void softmax_kernel(RowParams p) {
  __shared__ float max_part[kThreads];
  __shared__ double sum_part[kThreads];
  for (std::uint64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    const float *in = p.in + row * p.cols;
    float *out = p.out + row * p.cols;
    float row_max = in[0];
    for (std::uint64_t col = threadIdx.x; col < p.cols; col += blockDim.x) {
      row_max = fmaxf(row_max, in[col]);
    }
    max_part[threadIdx.x] = row_max;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        max_part[threadIdx.x] = fmaxf(max_part[threadIdx.x], max_part[threadIdx.x + half]);
      }
      __syncthreads();
    }
    row_max = max_part[0];
    double sum = 0.0;
    for (std::uint64_t col = threadIdx.x; col < p.cols; col += blockDim.x) {
      const float e = expf(in[col] - row_max);
      out[col] = e;
      sum += e;
    }
    sum_part[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        sum_part[threadIdx.x] += sum_part[threadIdx.x + half];
      }
      __syncthreads();
    }
    const auto inverse_sum = static_cast<float>(1.0 / sum_part[0]);
    for (std::uint64_t col = threadIdx.x; col < p.cols; col += blockDim.x) {
      out[col] *= inverse_sum;
    }
    __syncthreads();
  }
}

// One block per row: the mean of squares in double, then in * inverse_rms * weight in double.
__global__ void rmsnorm_kernel(RowParams p) {
  __shared__ double sum_part[kThreads];
  for (std::uint64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    const float *in = p.in + row * p.cols;
    float *out = p.out + row * p.cols;
    double sum = 0.0;
    for (std::uint64_t col = threadIdx.x; col < p.cols; col += blockDim.x) {
      const double x = in[col];
      sum += x * x;
    }
    sum_part[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        sum_part[threadIdx.x] += sum_part[threadIdx.x + half];
      }
      __syncthreads();
    }
    const double mean_square = sum_part[0] / static_cast<double>(p.cols);
    const double inverse_rms = 1.0 / sqrt(mean_square + static_cast<double>(p.eps));
    for (std::uint64_t col = threadIdx.x; col < p.cols; col += blockDim.x) {
      out[col] = static_cast<float>(in[col] * inverse_rms * p.weight[col]);
    }
    __syncthreads();
  }
}

unsigned blocks_for(std::uint64_t items) {
  const std::uint64_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? (blocks == 0 ? 1 : blocks) : kMaxBlocks);
}

unsigned row_blocks(std::uint64_t rows) {
  return static_cast<unsigned>(rows < kMaxBlocks ? rows : kMaxBlocks);
}

// A launch error, as a launcher result distinct from the built-ins' check codes (1 to 7).
int launch_result() {
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? 0 : 1000 + static_cast<int>(error);
}

const float *tensor(const rrt_kernel_args_t *args, unsigned index) {
  return static_cast<const float *>(args->tensors[index]);
}

float *output(const rrt_kernel_args_t *args, unsigned index) {
  return static_cast<float *>(args->tensors[index]);
}

template <Op kOp>
int launch_elementwise(const rrt_kernel_args_t *args, void *stream, void * /*user*/) {
  constexpr const char *kNames[] = {"fill", "copy", "add", "mul", "scale", "silu", "gelu"};
  if (const int code = builtin_operand_check(kNames[static_cast<int>(kOp)])(args); code != 0) {
    return code;
  }
  ElementwiseParams params{};
  const unsigned out_index = args->num_tensors - 1;
  params.out = output(args, out_index);
  params.count = args->tensor_bytes[out_index] / sizeof(float);
  if (args->num_tensors >= 2) {
    params.a = tensor(args, 0);
  }
  if (args->num_tensors == 3) {
    params.b = tensor(args, 1);
  }
  if (args->num_scalars == 1) {
    params.scalar = rrt_scalar_to_f32(args->scalars[0]);
  }
  elementwise_kernel<kOp>
      <<<blocks_for(params.count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(params);
  return launch_result();
}

int launch_matmul(const rrt_kernel_args_t *args, void *stream, void * /*user*/) {
  if (const int code = builtin_operand_check("matmul")(args); code != 0) {
    return code;
  }
  const MatmulParams params{tensor(args, 0),  tensor(args, 1),  output(args, 2),
                            args->scalars[0], args->scalars[1], args->scalars[2]};
  matmul_kernel<<<blocks_for(params.m * params.n), kThreads, 0,
                  static_cast<cudaStream_t>(stream)>>>(params);
  return launch_result();
}

int launch_softmax(const rrt_kernel_args_t *args, void *stream, void * /*user*/) {
  if (const int code = builtin_operand_check("softmax")(args); code != 0) {
    return code;
  }
  RowParams params{};
  params.in = tensor(args, 0);
  params.out = output(args, 1);
  params.cols = args->scalars[0];
  params.rows = args->tensor_bytes[0] / sizeof(float) / params.cols;
  softmax_kernel<<<row_blocks(params.rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      params);
  return launch_result();
}

int launch_rmsnorm(const rrt_kernel_args_t *args, void *stream, void * /*user*/) {
  if (const int code = builtin_operand_check("rmsnorm")(args); code != 0) {
    return code;
  }
  RowParams params{};
  params.in = tensor(args, 0);
  params.weight = tensor(args, 1);
  params.out = output(args, 2);
  params.cols = args->scalars[0];
  params.rows = args->tensor_bytes[0] / sizeof(float) / params.cols;
  params.eps = rrt_scalar_to_f32(args->scalars[1]);
  rmsnorm_kernel<<<row_blocks(params.rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      params);
  return launch_result();
}

const void *const kDeviceFunctions[] = {
    reinterpret_cast<const void *>(&elementwise_kernel<Op::kFill>),
    reinterpret_cast<const void *>(&elementwise_kernel<Op::kCopy>),
    reinterpret_cast<const void *>(&elementwise_kernel<Op::kAdd>),
    reinterpret_cast<const void *>(&elementwise_kernel<Op::kMul>),
    reinterpret_cast<const void *>(&elementwise_kernel<Op::kScale>),
    reinterpret_cast<const void *>(&elementwise_kernel<Op::kSilu>),
    reinterpret_cast<const void *>(&elementwise_kernel<Op::kGelu>),
    reinterpret_cast<const void *>(&matmul_kernel),
    reinterpret_cast<const void *>(&softmax_kernel),
    reinterpret_cast<const void *>(&rmsnorm_kernel),
};

}  // namespace

std::span<const void *const> builtin_device_functions() noexcept {
  return kDeviceFunctions;
}

}  // namespace replayrt::cuda

namespace replayrt {

rrt_native_launch_fn builtin_native_launcher(std::string_view name) noexcept {
  using cuda::Op;
  if (name == "fill") {
    return &cuda::launch_elementwise<Op::kFill>;
  }
  if (name == "copy") {
    return &cuda::launch_elementwise<Op::kCopy>;
  }
  if (name == "add") {
    return &cuda::launch_elementwise<Op::kAdd>;
  }
  if (name == "mul") {
    return &cuda::launch_elementwise<Op::kMul>;
  }
  if (name == "scale") {
    return &cuda::launch_elementwise<Op::kScale>;
  }
  if (name == "silu") {
    return &cuda::launch_elementwise<Op::kSilu>;
  }
  if (name == "gelu") {
    return &cuda::launch_elementwise<Op::kGelu>;
  }
  if (name == "matmul") {
    return &cuda::launch_matmul;
  }
  if (name == "softmax") {
    return &cuda::launch_softmax;
  }
  if (name == "rmsnorm") {
    return &cuda::launch_rmsnorm;
  }
  return nullptr;
}

}  // namespace replayrt
