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
//
// The decoder built-ins (linear, embedding, rope, kv_store, attention) read their
// device-resident values (ids, pos) on the device, where no check can fail the task: an id or
// position out of range writes NaN to the output elements it concerns (kv_store writes nothing),
// and no kernel reads or writes outside its tensors. linear and attention reduce in another
// order than the CPU kernels (one warp per output, one block per query head), embedding and
// kv_store copy exactly, and rope computes its angles and rotations in double as the CPU does.
#include <cstdint>
#include <cuda_runtime.h>
#include <string_view>
#include <type_traits>

#include "platform/cuda/cuda_device.h"
#include "platform/launch/builtin_kernels.h"
#include "platform/launch/float_formats.h"

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

// ---- decoder built-ins ----------------------------------------------------------------------

constexpr unsigned kWarp = 32;

struct LinearParams {
  const float *x;
  const void *w;
  float *y;
  std::uint64_t m;
  std::uint64_t k;
  std::uint64_t n;
};

struct EmbeddingParams {
  const void *table;
  const std::int32_t *ids;
  float *out;
  std::uint64_t v;
  std::uint64_t d;
  std::uint64_t t;
};

struct RopeParams {
  const std::int32_t *pos;
  float *x;
  std::uint64_t t;
  std::uint64_t h;
  std::uint64_t hd;
  double theta;
};

struct KvStoreParams {
  const float *src;
  const std::int32_t *pos;
  float *cache;
  std::uint64_t t;
  std::uint64_t w;
  std::uint64_t s;
};

struct AttentionParams {
  const float *q;
  const float *k_cache;
  const float *v_cache;
  const std::int32_t *pos;
  float *out;
  std::uint64_t t;
  std::uint64_t h;
  std::uint64_t kvh;
  std::uint64_t hd;
  std::uint64_t s;
};

__device__ float quiet_nan() {
  return __int_as_float(0x7FC00000);
}

template <int kWdtype>
__device__ float weight_at(const void *weights, std::uint64_t index) {
  if constexpr (kWdtype == RRT_DTYPE_F32) {
    return static_cast<const float *>(weights)[index];
  } else if constexpr (kWdtype == RRT_DTYPE_F16) {
    return f32_from_f16(static_cast<const std::uint16_t *>(weights)[index]);
  } else {
    return f32_from_bf16(static_cast<const std::uint16_t *>(weights)[index]);
  }
}

// One warp per output element y[row, col]; lanes stride over k, then a shuffle reduction.
template <int kWdtype>
__global__ void linear_kernel(LinearParams p) {
  const unsigned lane = threadIdx.x % kWarp;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * blockDim.x / kWarp;
  const std::uint64_t total = p.m * p.n;
  for (std::uint64_t item =
           (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
       item < total; item += warps) {
    const std::uint64_t row = item / p.n;
    const std::uint64_t col = item % p.n;
    const float *x = p.x + row * p.k;
    const std::uint64_t w_row = col * p.k;
    float sum = 0.0F;
    for (std::uint64_t step = lane; step < p.k; step += kWarp) {
      sum += x[step] * weight_at<kWdtype>(p.w, w_row + step);
    }
    for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) {
      sum += __shfl_down_sync(0xFFFFFFFFU, sum, offset);
    }
    if (lane == 0) {
      p.y[item] = sum;
    }
  }
}

template <int kWdtype>
__global__ void embedding_kernel(EmbeddingParams p) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < p.t * p.d; i += stride) {
    const std::int32_t id = p.ids[i / p.d];
    p.out[i] = id >= 0 && static_cast<std::uint64_t>(id) < p.v
                   ? weight_at<kWdtype>(p.table, static_cast<std::uint64_t>(id) * p.d + i % p.d)
                   : quiet_nan();
  }
}

// One thread per rotated pair.
__global__ void rope_kernel(RopeParams p) {
  const std::uint64_t half = p.hd / 2;
  const std::uint64_t pairs = p.t * p.h * half;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::int32_t pos = *p.pos;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < pairs; i += stride) {
    const std::uint64_t row = i / (p.h * half);
    const std::uint64_t pair_index = i % half;
    float *pair = p.x + i / half * p.hd + 2 * pair_index;
    if (pos < 0) {
      pair[0] = quiet_nan();
      pair[1] = quiet_nan();
      continue;
    }
    const double position = static_cast<double>(pos) + static_cast<double>(row);
    const double angle =
        position * pow(p.theta, -static_cast<double>(2 * pair_index) / static_cast<double>(p.hd));
    double s = 0.0;
    double c = 0.0;
    sincos(angle, &s, &c);
    const double x0 = pair[0];
    const double x1 = pair[1];
    pair[0] = static_cast<float>(x0 * c - x1 * s);
    pair[1] = static_cast<float>(x0 * s + x1 * c);
  }
}

__global__ void kv_store_kernel(KvStoreParams p) {
  const std::int32_t pos = *p.pos;
  if (pos < 0 || static_cast<std::uint64_t>(pos) + p.t > p.s) {
    return;
  }
  float *rows = p.cache + static_cast<std::uint64_t>(pos) * p.w;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < p.t * p.w; i += stride) {
    rows[i] = p.src[i];
  }
}

__device__ float head_dot(const float *a, const float *b, std::uint64_t count) {
  float sum = 0.0F;
  for (std::uint64_t i = 0; i < count; ++i) {
    sum += a[i] * b[i];
  }
  return sum;
}

// One block per (query row, head): the maximum score, then the weights of kThreads cache rows
// at a time in shared memory, each thread accumulating the output elements it owns.
__global__ void attention_kernel(AttentionParams p) {
  __shared__ float weights[kThreads];
  __shared__ float reduce[kThreads];
  const std::int32_t pos = *p.pos;
  const bool in_range = pos >= 0 && static_cast<std::uint64_t>(pos) + p.t <= p.s;
  const std::uint64_t group = p.h / p.kvh;
  const std::uint64_t kv_stride = p.kvh * p.hd;
  const float scale = 1.0F / sqrtf(static_cast<float>(p.hd));
  for (std::uint64_t item = blockIdx.x; item < p.t * p.h; item += gridDim.x) {
    float *result = p.out + item * p.hd;
    if (!in_range) {
      for (std::uint64_t d = threadIdx.x; d < p.hd; d += blockDim.x) {
        result[d] = quiet_nan();
      }
      continue;
    }
    const std::uint64_t last = static_cast<std::uint64_t>(pos) + item / p.h;
    const float *query = p.q + item * p.hd;
    const std::uint64_t kv_offset = item % p.h / group * p.hd;
    float max_score = -INFINITY;
    for (std::uint64_t j = threadIdx.x; j <= last; j += blockDim.x) {
      max_score =
          fmaxf(max_score, head_dot(query, p.k_cache + j * kv_stride + kv_offset, p.hd) * scale);
    }
    reduce[threadIdx.x] = max_score;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        reduce[threadIdx.x] = fmaxf(reduce[threadIdx.x], reduce[threadIdx.x + half]);
      }
      __syncthreads();
    }
    max_score = reduce[0];
    __syncthreads();
    for (std::uint64_t d = threadIdx.x; d < p.hd; d += blockDim.x) {
      result[d] = 0.0F;
    }
    float sum = 0.0F;
    for (std::uint64_t base = 0; base <= last; base += blockDim.x) {
      const std::uint64_t j = base + threadIdx.x;
      float weight = 0.0F;
      if (j <= last) {
        weight =
            expf(head_dot(query, p.k_cache + j * kv_stride + kv_offset, p.hd) * scale - max_score);
      }
      weights[threadIdx.x] = weight;
      sum += weight;
      __syncthreads();
      const std::uint64_t count = last + 1 - base < blockDim.x ? last + 1 - base : blockDim.x;
      for (std::uint64_t d = threadIdx.x; d < p.hd; d += blockDim.x) {
        float acc = result[d];
        const float *value = p.v_cache + base * kv_stride + kv_offset + d;
        for (std::uint64_t c = 0; c < count; ++c) {
          acc += weights[c] * value[c * kv_stride];
        }
        result[d] = acc;
      }
      __syncthreads();
    }
    reduce[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        reduce[threadIdx.x] += reduce[threadIdx.x + half];
      }
      __syncthreads();
    }
    const float inverse_sum = 1.0F / reduce[0];
    for (std::uint64_t d = threadIdx.x; d < p.hd; d += blockDim.x) {
      result[d] *= inverse_sum;
    }
    __syncthreads();
  }
}

cudaStream_t as_stream(void *stream) {
  return static_cast<cudaStream_t>(stream);
}

// Calls launch(std::integral_constant<int, W>{}) for the weight dtype W that `wdtype` names
// (the host check admits only F32, F16 and BF16).
template <class Launch>
void with_weight_dtype(std::uint64_t wdtype, Launch launch) {
  switch (wdtype) {
    case RRT_DTYPE_F16:
      launch(std::integral_constant<int, RRT_DTYPE_F16>{});
      break;
    case RRT_DTYPE_BF16:
      launch(std::integral_constant<int, RRT_DTYPE_BF16>{});
      break;
    default:
      launch(std::integral_constant<int, RRT_DTYPE_F32>{});
      break;
  }
}

int launch_linear(const rrt_kernel_args_t *args, void *stream, void * /*user*/) {
  if (const int code = builtin_operand_check("linear")(args); code != 0) {
    return code;
  }
  const LinearParams params{tensor(args, 0),  args->tensors[1], output(args, 2),
                            args->scalars[0], args->scalars[1], args->scalars[2]};
  const unsigned blocks = blocks_for(params.m * params.n * kWarp);
  with_weight_dtype(args->scalars[3], [&](auto wdtype) {
    linear_kernel<decltype(wdtype)::value><<<blocks, kThreads, 0, as_stream(stream)>>>(params);
  });
  return launch_result();
}

int launch_embedding(const rrt_kernel_args_t *args, void *stream, void * /*user*/) {
  if (const int code = builtin_operand_check("embedding")(args); code != 0) {
    return code;
  }
  const EmbeddingParams params{
      args->tensors[0], static_cast<const std::int32_t *>(args->tensors[1]),
      output(args, 2),  args->scalars[0],
      args->scalars[1], args->scalars[2]};
  const unsigned blocks = blocks_for(params.t * params.d);
  with_weight_dtype(args->scalars[3], [&](auto wdtype) {
    embedding_kernel<decltype(wdtype)::value><<<blocks, kThreads, 0, as_stream(stream)>>>(params);
  });
  return launch_result();
}

int launch_rope(const rrt_kernel_args_t *args, void *stream, void * /*user*/) {
  if (const int code = builtin_operand_check("rope")(args); code != 0) {
    return code;
  }
  const RopeParams params{static_cast<const std::int32_t *>(args->tensors[0]),
                          output(args, 1),
                          args->scalars[0],
                          args->scalars[1],
                          args->scalars[2],
                          rrt_scalar_to_f32(args->scalars[3])};
  rope_kernel<<<blocks_for(params.t * params.h * (params.hd / 2)), kThreads, 0,
                as_stream(stream)>>>(params);
  return launch_result();
}

int launch_kv_store(const rrt_kernel_args_t *args, void *stream, void * /*user*/) {
  if (const int code = builtin_operand_check("kv_store")(args); code != 0) {
    return code;
  }
  const KvStoreParams params{tensor(args, 0),  static_cast<const std::int32_t *>(args->tensors[1]),
                             output(args, 2),  args->scalars[0],
                             args->scalars[1], args->scalars[2]};
  kv_store_kernel<<<blocks_for(params.t * params.w), kThreads, 0, as_stream(stream)>>>(params);
  return launch_result();
}

int launch_attention(const rrt_kernel_args_t *args, void *stream, void * /*user*/) {
  if (const int code = builtin_operand_check("attention")(args); code != 0) {
    return code;
  }
  const AttentionParams params{
      tensor(args, 0),  tensor(args, 1),
      tensor(args, 2),  static_cast<const std::int32_t *>(args->tensors[3]),
      output(args, 4),  args->scalars[0],
      args->scalars[1], args->scalars[2],
      args->scalars[3], args->scalars[4]};
  attention_kernel<<<row_blocks(params.t * params.h), kThreads, 0, as_stream(stream)>>>(params);
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
    reinterpret_cast<const void *>(&linear_kernel<RRT_DTYPE_F32>),
    reinterpret_cast<const void *>(&linear_kernel<RRT_DTYPE_F16>),
    reinterpret_cast<const void *>(&linear_kernel<RRT_DTYPE_BF16>),
    reinterpret_cast<const void *>(&embedding_kernel<RRT_DTYPE_F32>),
    reinterpret_cast<const void *>(&embedding_kernel<RRT_DTYPE_F16>),
    reinterpret_cast<const void *>(&embedding_kernel<RRT_DTYPE_BF16>),
    reinterpret_cast<const void *>(&rope_kernel),
    reinterpret_cast<const void *>(&kv_store_kernel),
    reinterpret_cast<const void *>(&attention_kernel),
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
  if (name == "linear") {
    return &cuda::launch_linear;
  }
  if (name == "embedding") {
    return &cuda::launch_embedding;
  }
  if (name == "rope") {
    return &cuda::launch_rope;
  }
  if (name == "kv_store") {
    return &cuda::launch_kv_store;
  }
  if (name == "attention") {
    return &cuda::launch_attention;
  }
  return nullptr;
}

}  // namespace replayrt
