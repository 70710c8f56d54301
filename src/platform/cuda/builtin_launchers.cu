// The built-in kernels (platform/launch/builtin_kernels.h) as CUDA kernels, their launcher, and
// the profiling kernel. Every kernel takes one BuiltinParams (platform/cuda/builtin_params.h)
// by value: the operands the host resolved, plus the device operands it reads itself first.
// The launcher runs on operands that passed the built-in's host check, so the kernels never
// fail; a device operand out of its range makes a kernel write NaN over its output, or nothing
// when the output's own offset is out of range (kv_store writes nothing either way).
//
// Numerics: fill, copy, add, mul, scale and matmul use round-to-nearest intrinsics
// (__fadd_rn, __fmul_rn), which the compiler never contracts into FMAs, and matmul sums its k
// products in increasing order from zero (16 x 16 shared-memory tiles, k in order), as the CPU
// kernels do: their results match the CPU kernels bit for bit. softmax, silu and gelu use expf
// (within 2 ulp of the CPU's exp) and softmax's and rmsnorm's reductions run in a different
// order, so those match within a relative error, not bitwise.
//
// The decoder built-ins read their device-resident values (ids, pos) on the device: an id or
// position out of range writes NaN to the output elements it concerns (kv_store writes
// nothing). linear gives each warp one output column over a tile of up to kLinearRows rows of
// x, so a weight row is read once per tile instead of once per row; attention splits each
// (query row, head) over a cluster of kAttentionSplit blocks, each taking a slice of the KV
// positions with an online softmax, then combines the slices through distributed shared
// memory (sm_90 clusters). linear and attention reduce in another order than the CPU kernels;
// embedding and kv_store copy exactly, and rope computes its angles and rotations in double as
// the CPU does.
#include <cooperative_groups.h>
#include <cstdint>
#include <cuda_runtime.h>
#include <type_traits>

#include "platform/cuda/builtin_launchers.h"
#include "platform/launch/builtin_kernels.h"
#include "platform/launch/float_formats.h"
#include "platform/launch/profile_records.h"

namespace replayrt::cuda {

namespace {

namespace cg = cooperative_groups;

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxBlocks = 4096;
constexpr unsigned kWarp = 32;
constexpr unsigned kMatmulTile = 16;
constexpr unsigned kLinearRows = 8;
constexpr unsigned kAttentionSplit = 8;
constexpr unsigned kAttentionTile = 32;

// Indices into builtin_kernel_specs().
enum Builtin : std::uint32_t {
  kFill,
  kCopy,
  kAdd,
  kMul,
  kScale,
  kMatmul,
  kSoftmax,
  kRmsnorm,
  kSilu,
  kGelu,
  kLinear,
  kEmbedding,
  kRope,
  kKvStore,
  kAttention,
  kBuiltinCount
};

// ---- device operands -----------------------------------------------------------------------

using Operands = BuiltinOperands;

__device__ float quiet_nan() {
  return __int_as_float(0x7FC00000);
}

__device__ std::uint64_t thread_rank() {
  return (static_cast<std::uint64_t>(blockIdx.x) * blockDim.y + threadIdx.y) * blockDim.x +
         threadIdx.x;
}

__device__ std::uint64_t thread_count() {
  return static_cast<std::uint64_t>(gridDim.x) * blockDim.x * blockDim.y;
}

// Resolves the task's operands; false when the kernel must not compute (it wrote NaN over its
// output first when `nan_on_failure` and the output is addressable).
__device__ bool begin(const BuiltinParams &p, Operands *o, bool strict = false,
                      bool nan_on_failure = true) {
  const DeviceOperandResult result = apply_device_operands(p, strict, o);
  if (result == DeviceOperandResult::kOk) {
    return true;
  }
  if (result == DeviceOperandResult::kBadInput && nan_on_failure) {
    const unsigned out = p.num_tensors - 1;
    auto *values = static_cast<float *>(o->tensors[out]);
    const std::uint64_t count = o->bytes[out] / sizeof(float);
    for (std::uint64_t i = thread_rank(); i < count; i += thread_count()) {
      values[i] = quiet_nan();
    }
  }
  return false;
}

// Writes NaN over the output (a scalar out of its domain, read on the device).
__device__ void poison_output(const Operands &o, unsigned out) {
  auto *values = static_cast<float *>(o.tensors[out]);
  const std::uint64_t count = o.bytes[out] / sizeof(float);
  for (std::uint64_t i = thread_rank(); i < count; i += thread_count()) {
    values[i] = quiet_nan();
  }
}

__device__ float scalar_f32(const Operands &o, unsigned index) {
  return __uint_as_float(static_cast<unsigned>(o.scalars[index]));
}

template <typename T = float>
__device__ T *tensor(const Operands &o, unsigned index) {
  return static_cast<T *>(o.tensors[index]);
}

__device__ std::uint64_t floats(const Operands &o, unsigned index) {
  return o.bytes[index] / sizeof(float);
}

// ---- elementwise, matmul, softmax, rmsnorm -------------------------------------------------

enum class Op : int { kFill, kCopy, kAdd, kMul, kScale, kSilu, kGelu };

__device__ float sigmoid(float x) {
  if (x >= 0.0F) {
    return 1.0F / (1.0F + expf(-x));
  }
  const float e = expf(x);
  return e / (1.0F + e);
}

template <Op kOp>
__global__ void elementwise_kernel(BuiltinParams params) {
  Operands o;
  if (!begin(params, &o)) {
    return;
  }
  const unsigned out_index = params.num_tensors - 1;
  float *out = tensor(o, out_index);
  const float *a = tensor(o, 0);
  const float *b = params.num_tensors == 3 ? tensor(o, 1) : nullptr;
  const std::uint64_t count = floats(o, out_index);
  const float scalar = params.num_scalars == 1 ? scalar_f32(o, 0) : 0.0F;
  for (std::uint64_t i = thread_rank(); i < count; i += thread_count()) {
    if constexpr (kOp == Op::kFill) {
      out[i] = scalar;
    } else if constexpr (kOp == Op::kCopy) {
      out[i] = a[i];
    } else if constexpr (kOp == Op::kAdd) {
      out[i] = __fadd_rn(a[i], b[i]);
    } else if constexpr (kOp == Op::kMul) {
      out[i] = __fmul_rn(a[i], b[i]);
    } else if constexpr (kOp == Op::kScale) {
      out[i] = __fmul_rn(a[i], scalar);
    } else if constexpr (kOp == Op::kSilu) {
      const float x = a[i];
      out[i] = x * sigmoid(x);
    } else {
      constexpr float kTwiceSqrtTwoOverPi = 1.5957691216057308F;
      constexpr float kCubicCoefficient = 0.044715F;
      const float x = a[i];
      out[i] = x * sigmoid(kTwiceSqrtTwoOverPi * (x + kCubicCoefficient * x * x * x));
    }
  }
}

// 16 x 16 output tiles, one output per thread (blocks of 16 x 16 threads), k in tiles of 16 in
// increasing order; every output sums its products from zero in increasing k.
__global__ void matmul_kernel(BuiltinParams params) {
  __shared__ float a_tile[kMatmulTile][kMatmulTile];
  __shared__ float b_tile[kMatmulTile][kMatmulTile];
  Operands o;
  if (!begin(params, &o, true)) {
    return;
  }
  const float *a = tensor(o, 0);
  const float *b = tensor(o, 1);
  float *out = tensor(o, 2);
  const std::uint64_t m = o.scalars[0];
  const std::uint64_t k = o.scalars[1];
  const std::uint64_t n = o.scalars[2];
  const std::uint64_t tiles_n = (n + kMatmulTile - 1) / kMatmulTile;
  const std::uint64_t tiles = (m + kMatmulTile - 1) / kMatmulTile * tiles_n;
  const unsigned tx = threadIdx.x;
  const unsigned ty = threadIdx.y;
  for (std::uint64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::uint64_t row = tile / tiles_n * kMatmulTile + ty;
    const std::uint64_t col = tile % tiles_n * kMatmulTile + tx;
    float sum = 0.0F;
    for (std::uint64_t k0 = 0; k0 < k; k0 += kMatmulTile) {
      a_tile[ty][tx] = row < m && k0 + tx < k ? a[row * k + k0 + tx] : 0.0F;
      b_tile[ty][tx] = k0 + ty < k && col < n ? b[(k0 + ty) * n + col] : 0.0F;
      __syncthreads();
      const std::uint64_t steps = k - k0 < kMatmulTile ? k - k0 : kMatmulTile;
      for (std::uint64_t step = 0; step < steps; ++step) {
        sum = __fadd_rn(sum, __fmul_rn(a_tile[ty][step], b_tile[step][tx]));
      }
      __syncthreads();
    }
    if (row < m && col < n) {
      out[row * n + col] = sum;
    }
  }
}

// One block per row: the row maximum, then exp(x - max) and its sum in double, then the scale.
__global__ void softmax_kernel(BuiltinParams params) {
  __shared__ float max_part[kThreads];
  __shared__ double sum_part[kThreads];
  Operands o;
  if (!begin(params, &o)) {
    return;
  }
  const std::uint64_t cols = o.scalars[0];
  const std::uint64_t rows = floats(o, 0) / cols;
  for (std::uint64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float *in = tensor(o, 0) + row * cols;
    float *out = tensor(o, 1) + row * cols;
    float row_max = in[0];
    for (std::uint64_t col = threadIdx.x; col < cols; col += blockDim.x) {
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
    for (std::uint64_t col = threadIdx.x; col < cols; col += blockDim.x) {
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
    for (std::uint64_t col = threadIdx.x; col < cols; col += blockDim.x) {
      out[col] *= inverse_sum;
    }
    __syncthreads();
  }
}

// One block per row: the mean of squares in double, then in * inverse_rms * weight in double.
__global__ void rmsnorm_kernel(BuiltinParams params) {
  __shared__ double sum_part[kThreads];
  Operands o;
  if (!begin(params, &o)) {
    return;
  }
  const float eps = scalar_f32(o, 1);
  if (!(eps >= 0.0F) || isinf(eps)) {
    poison_output(o, 2);
    return;
  }
  const std::uint64_t cols = o.scalars[0];
  const std::uint64_t rows = floats(o, 0) / cols;
  const float *weight = tensor(o, 1);
  for (std::uint64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float *in = tensor(o, 0) + row * cols;
    float *out = tensor(o, 2) + row * cols;
    double sum = 0.0;
    for (std::uint64_t col = threadIdx.x; col < cols; col += blockDim.x) {
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
    const double mean_square = sum_part[0] / static_cast<double>(cols);
    const double inverse_rms = 1.0 / sqrt(mean_square + static_cast<double>(eps));
    for (std::uint64_t col = threadIdx.x; col < cols; col += blockDim.x) {
      out[col] = static_cast<float>(in[col] * inverse_rms * weight[col]);
    }
    __syncthreads();
  }
}

// ---- decoder built-ins ----------------------------------------------------------------------

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

// y[m, n] = x[m, k] W[n, k]^T. One warp per (output column, tile of up to kLinearRows rows):
// lanes stride over k, each weight element read once for the whole tile, then one shuffle
// reduction per row.
template <int kWdtype>
__global__ void linear_kernel(BuiltinParams params) {
  Operands o;
  if (!begin(params, &o)) {
    return;
  }
  const float *x = tensor(o, 0);
  const void *w = o.tensors[1];
  float *y = tensor(o, 2);
  const std::uint64_t m = o.scalars[0];
  const std::uint64_t k = o.scalars[1];
  const std::uint64_t n = o.scalars[2];
  const unsigned lane = threadIdx.x % kWarp;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * blockDim.x / kWarp;
  const std::uint64_t row_tiles = (m + kLinearRows - 1) / kLinearRows;
  const std::uint64_t items = n * row_tiles;
  for (std::uint64_t item =
           (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
       item < items; item += warps) {
    const std::uint64_t col = item % n;
    const std::uint64_t row0 = item / n * kLinearRows;
    const unsigned rows =
        static_cast<unsigned>(m - row0 < kLinearRows ? m - row0 : std::uint64_t{kLinearRows});
    const std::uint64_t w_row = col * k;
    float sum[kLinearRows] = {};
    for (std::uint64_t step = lane; step < k; step += kWarp) {
      const float weight = weight_at<kWdtype>(w, w_row + step);
#pragma unroll
      for (unsigned r = 0; r < kLinearRows; ++r) {
        if (r < rows) {
          sum[r] += x[(row0 + r) * k + step] * weight;
        }
      }
    }
#pragma unroll
    for (unsigned r = 0; r < kLinearRows; ++r) {
      for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) {
        sum[r] += __shfl_down_sync(0xFFFFFFFFU, sum[r], offset);
      }
      if (lane == 0 && r < rows) {
        y[(row0 + r) * n + col] = sum[r];
      }
    }
  }
}

template <int kWdtype>
__global__ void embedding_kernel(BuiltinParams params) {
  Operands o;
  if (!begin(params, &o)) {
    return;
  }
  const void *table = o.tensors[0];
  const auto *ids = tensor<const std::int32_t>(o, 1);
  float *out = tensor(o, 2);
  const std::uint64_t v = o.scalars[0];
  const std::uint64_t d = o.scalars[1];
  const std::uint64_t t = o.scalars[2];
  for (std::uint64_t i = thread_rank(); i < t * d; i += thread_count()) {
    const std::int32_t id = ids[i / d];
    out[i] = id >= 0 && static_cast<std::uint64_t>(id) < v
                 ? weight_at<kWdtype>(table, static_cast<std::uint64_t>(id) * d + i % d)
                 : quiet_nan();
  }
}

// One thread per rotated pair.
__global__ void rope_kernel(BuiltinParams params) {
  Operands o;
  if (!begin(params, &o)) {
    return;
  }
  const float theta_f32 = scalar_f32(o, 3);
  if (!(theta_f32 > 0.0F) || isinf(theta_f32)) {
    poison_output(o, 1);
    return;
  }
  const std::int32_t pos = *tensor<const std::int32_t>(o, 0);
  float *x = tensor(o, 1);
  const std::uint64_t t = o.scalars[0];
  const std::uint64_t h = o.scalars[1];
  const std::uint64_t hd = o.scalars[2];
  const double theta = theta_f32;
  const std::uint64_t half = hd / 2;
  const std::uint64_t pairs = t * h * half;
  for (std::uint64_t i = thread_rank(); i < pairs; i += thread_count()) {
    const std::uint64_t row = i / (h * half);
    const std::uint64_t pair_index = i % half;
    float *pair = x + i / half * hd + 2 * pair_index;
    if (pos < 0) {
      pair[0] = quiet_nan();
      pair[1] = quiet_nan();
      continue;
    }
    const double position = static_cast<double>(pos) + static_cast<double>(row);
    const double angle =
        position * pow(theta, -static_cast<double>(2 * pair_index) / static_cast<double>(hd));
    double s = 0.0;
    double c = 0.0;
    sincos(angle, &s, &c);
    const double x0 = pair[0];
    const double x1 = pair[1];
    pair[0] = static_cast<float>(x0 * c - x1 * s);
    pair[1] = static_cast<float>(x0 * s + x1 * c);
  }
}

__global__ void kv_store_kernel(BuiltinParams params) {
  Operands o;
  if (!begin(params, &o, false, false)) {
    return;
  }
  const float *src = tensor(o, 0);
  const std::int32_t pos = *tensor<const std::int32_t>(o, 1);
  const std::uint64_t t = o.scalars[0];
  const std::uint64_t w = o.scalars[1];
  const std::uint64_t s = o.scalars[2];
  if (pos < 0 || static_cast<std::uint64_t>(pos) + t > s) {
    return;
  }
  float *rows = tensor(o, 2) + static_cast<std::uint64_t>(pos) * w;
  for (std::uint64_t i = thread_rank(); i < t * w; i += thread_count()) {
    rows[i] = src[i];
  }
}

// One cluster of kAttentionSplit blocks per (query row, head). Block `rank` of the cluster
// takes the rank-th slice of the KV positions up to the row's own, kAttentionTile positions at
// a time: one warp per position computes the score (lanes over hd), then an online softmax
// rescales the slice's running sum and output. The slices combine through distributed shared
// memory: each block finishes a share of the head's hd outputs from every slice's maximum, sum
// and partial output.
//
// Dynamic shared memory: query[hd], partial[hd], scores[kAttentionTile], stats[3] (maximum,
// sum, rescale).
__global__ void __cluster_dims__(kAttentionSplit, 1, 1) attention_kernel(BuiltinParams params) {
  extern __shared__ float shared[];
  Operands o;
  if (!begin(params, &o)) {
    return;
  }
  const float *q = tensor(o, 0);
  const float *k_cache = tensor(o, 1);
  const float *v_cache = tensor(o, 2);
  const std::int32_t pos = *tensor<const std::int32_t>(o, 3);
  float *out = tensor(o, 4);
  const std::uint64_t t = o.scalars[0];
  const std::uint64_t h = o.scalars[1];
  const std::uint64_t kvh = o.scalars[2];
  const std::uint64_t hd = o.scalars[3];
  const std::uint64_t s = o.scalars[4];

  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const std::uint64_t item = blockIdx.x / kAttentionSplit;
  float *result = out + item * hd;
  if (pos < 0 || static_cast<std::uint64_t>(pos) + t > s) {
    for (std::uint64_t d = rank * blockDim.x + threadIdx.x; d < hd;
         d += kAttentionSplit * blockDim.x) {
      result[d] = quiet_nan();
    }
    return;
  }
  float *query = shared;
  float *partial = shared + hd;
  float *scores = partial + hd;
  float *stats = scores + kAttentionTile;

  const std::uint64_t group = h / kvh;
  const std::uint64_t kv_stride = kvh * hd;
  const std::uint64_t kv_offset = item % h / group * hd;
  const std::uint64_t positions = static_cast<std::uint64_t>(pos) + item / h + 1;
  const std::uint64_t slice = (positions + kAttentionSplit - 1) / kAttentionSplit;
  const std::uint64_t first = rank * slice;
  const std::uint64_t end = first + slice < positions ? first + slice : positions;
  const float scale = 1.0F / sqrtf(static_cast<float>(hd));
  const unsigned warp = threadIdx.x / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warps = blockDim.x / kWarp;

  for (std::uint64_t d = threadIdx.x; d < hd; d += blockDim.x) {
    query[d] = q[item * hd + d];
    partial[d] = 0.0F;
  }
  if (threadIdx.x == 0) {
    stats[0] = -INFINITY;
    stats[1] = 0.0F;
  }
  __syncthreads();
  for (std::uint64_t tile = first; tile < end; tile += kAttentionTile) {
    const std::uint64_t count = end - tile < kAttentionTile ? end - tile : kAttentionTile;
    for (unsigned c = warp; c < kAttentionTile; c += warps) {
      float dot = 0.0F;
      if (c < count) {
        const float *key = k_cache + (tile + c) * kv_stride + kv_offset;
        for (std::uint64_t d = lane; d < hd; d += kWarp) {
          dot += query[d] * key[d];
        }
      }
      for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) {
        dot += __shfl_down_sync(0xFFFFFFFFU, dot, offset);
      }
      if (lane == 0) {
        scores[c] = c < count ? dot * scale : -INFINITY;
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      float tile_max = -INFINITY;
      for (std::uint64_t c = 0; c < count; ++c) {
        tile_max = fmaxf(tile_max, scores[c]);
      }
      const float old_max = stats[0];
      const float new_max = fmaxf(old_max, tile_max);
      stats[2] = old_max == -INFINITY ? 0.0F : expf(old_max - new_max);
      stats[0] = new_max;
    }
    __syncthreads();
    if (threadIdx.x < kAttentionTile) {
      scores[threadIdx.x] = threadIdx.x < count ? expf(scores[threadIdx.x] - stats[0]) : 0.0F;
    }
    __syncthreads();
    const float rescale = stats[2];
    if (threadIdx.x == 0) {
      float sum = 0.0F;
      for (std::uint64_t c = 0; c < count; ++c) {
        sum += scores[c];
      }
      stats[1] = stats[1] * rescale + sum;
    }
    for (std::uint64_t d = threadIdx.x; d < hd; d += blockDim.x) {
      float acc = partial[d] * rescale;
      const float *value = v_cache + tile * kv_stride + kv_offset + d;
      for (std::uint64_t c = 0; c < count; ++c) {
        acc += scores[c] * value[c * kv_stride];
      }
      partial[d] = acc;
    }
    __syncthreads();
  }

  cluster.sync();
  float maximum = -INFINITY;
  for (unsigned r = 0; r < kAttentionSplit; ++r) {
    maximum = fmaxf(maximum, cluster.map_shared_rank(stats, r)[0]);
  }
  float total = 0.0F;
  float weight[kAttentionSplit];
  for (unsigned r = 0; r < kAttentionSplit; ++r) {
    const float *remote = cluster.map_shared_rank(stats, r);
    weight[r] = remote[0] == -INFINITY ? 0.0F : expf(remote[0] - maximum);
    total += remote[1] * weight[r];
  }
  const float inverse_total = 1.0F / total;
  for (std::uint64_t d = rank * blockDim.x + threadIdx.x; d < hd;
       d += kAttentionSplit * blockDim.x) {
    float value = 0.0F;
    for (unsigned r = 0; r < kAttentionSplit; ++r) {
      value += cluster.map_shared_rank(partial, r)[d] * weight[r];
    }
    result[d] = value * inverse_total;
  }
  // Every block's shared memory stays readable until the whole cluster combined.
  cluster.sync();
}

// ---- profiling ------------------------------------------------------------------------------

__global__ void profile_kernel(ProfileParams p) {
  if (blockIdx.x != 0 || threadIdx.x != 0) {
    return;
  }
  std::uint64_t now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  switch (p.op) {
    case ProfileParams::kTaskStart: {
      auto *timing = static_cast<TaskTiming *>(p.record);
      timing->start_ns = now;
      timing->task = p.value;
      timing->worker = 0;
      break;
    }
    case ProfileParams::kTaskEnd:
      static_cast<TaskTiming *>(p.record)->end_ns = now;
      break;
    case ProfileParams::kLaunchStart:
      static_cast<LaunchRecord *>(p.record)->start_ns = now;
      break;
    default: {
      auto *launch = static_cast<LaunchRecord *>(p.record);
      launch->end_ns = now;
      launch->tasks = p.value;
      launch->workers = 1;
      ++launch->launches;
      break;
    }
  }
}

// ---- launchers ------------------------------------------------------------------------------

unsigned blocks_for(std::uint64_t items) {
  const std::uint64_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? (blocks == 0 ? 1 : blocks) : kMaxBlocks);
}

unsigned row_blocks(std::uint64_t rows) {
  return static_cast<unsigned>(rows < kMaxBlocks ? (rows == 0 ? 1 : rows) : kMaxBlocks);
}

template <typename Kernel>
const void *stub(Kernel kernel) {
  return reinterpret_cast<const void *>(kernel);
}

// The kernel of a weight-typed built-in for the weight dtype `wdtype` (the host check admits
// only F32, F16 and BF16).
template <template <int> class Table>
const void *by_weight_dtype(std::uint64_t wdtype) {
  switch (wdtype) {
    case RRT_DTYPE_F16:
      return Table<RRT_DTYPE_F16>::value;
    case RRT_DTYPE_BF16:
      return Table<RRT_DTYPE_BF16>::value;
    default:
      return Table<RRT_DTYPE_F32>::value;
  }
}

template <int kWdtype>
struct LinearStub {
  static inline const void *const value = stub(&linear_kernel<kWdtype>);
};
template <int kWdtype>
struct EmbeddingStub {
  static inline const void *const value = stub(&embedding_kernel<kWdtype>);
};

std::uint64_t attention_shared_bytes(std::uint64_t hd) {
  return (2 * hd + kAttentionTile + 3) * sizeof(float);
}

struct LaunchShape {
  const void *function = nullptr;
  dim3 grid;
  dim3 block;
  std::size_t shared_bytes = 0;
};

LaunchShape shape_of(std::uint32_t builtin, const BuiltinParams &p) {
  const auto elementwise = [&](const void *function) {
    return LaunchShape{function, dim3(blocks_for(p.tensor_bytes[p.num_tensors - 1] / 4)),
                       dim3(kThreads), 0};
  };
  switch (builtin) {
    case kFill:
      return elementwise(stub(&elementwise_kernel<Op::kFill>));
    case kCopy:
      return elementwise(stub(&elementwise_kernel<Op::kCopy>));
    case kAdd:
      return elementwise(stub(&elementwise_kernel<Op::kAdd>));
    case kMul:
      return elementwise(stub(&elementwise_kernel<Op::kMul>));
    case kScale:
      return elementwise(stub(&elementwise_kernel<Op::kScale>));
    case kSilu:
      return elementwise(stub(&elementwise_kernel<Op::kSilu>));
    case kGelu:
      return elementwise(stub(&elementwise_kernel<Op::kGelu>));
    case kMatmul: {
      const std::uint64_t tiles = (p.scalars[0] + kMatmulTile - 1) / kMatmulTile *
                                  ((p.scalars[2] + kMatmulTile - 1) / kMatmulTile);
      return LaunchShape{stub(&matmul_kernel), dim3(row_blocks(tiles)),
                         dim3(kMatmulTile, kMatmulTile), 0};
    }
    case kSoftmax:
      return LaunchShape{stub(&softmax_kernel),
                         dim3(row_blocks(p.tensor_bytes[0] / 4 / p.scalars[0])), dim3(kThreads),
                         0};
    case kRmsnorm:
      return LaunchShape{stub(&rmsnorm_kernel),
                         dim3(row_blocks(p.tensor_bytes[0] / 4 / p.scalars[0])), dim3(kThreads),
                         0};
    case kLinear: {
      const std::uint64_t items = p.scalars[2] * ((p.scalars[0] + kLinearRows - 1) / kLinearRows);
      return LaunchShape{by_weight_dtype<LinearStub>(p.scalars[3]), dim3(blocks_for(items * kWarp)),
                         dim3(kThreads), 0};
    }
    case kEmbedding:
      return LaunchShape{by_weight_dtype<EmbeddingStub>(p.scalars[3]),
                         dim3(blocks_for(p.scalars[2] * p.scalars[1])), dim3(kThreads), 0};
    case kRope:
      return LaunchShape{stub(&rope_kernel),
                         dim3(blocks_for(p.scalars[0] * p.scalars[1] * (p.scalars[2] / 2))),
                         dim3(kThreads), 0};
    case kKvStore:
      return LaunchShape{stub(&kv_store_kernel), dim3(blocks_for(p.scalars[0] * p.scalars[1])),
                         dim3(kThreads), 0};
    default: {
      const std::uint64_t items = p.scalars[0] * p.scalars[1];
      return LaunchShape{stub(&attention_kernel),
                         dim3(static_cast<unsigned>(items * kAttentionSplit)), dim3(kThreads),
                         attention_shared_bytes(p.scalars[3])};
    }
  }
}

}  // namespace

int launch_builtin(const rrt_kernel_args_t *args, void *native_stream, void *user) {
  const auto *context = static_cast<const BuiltinLaunchContext *>(user);
  BuiltinParams params;
  params.num_tensors = args->num_tensors;
  params.num_scalars = args->num_scalars;
  for (std::uint32_t i = 0; i < args->num_tensors && i < kMaxBuiltinTensors; ++i) {
    params.tensors[i] = args->tensors[i];
    params.tensor_bytes[i] = args->tensor_bytes[i];
  }
  for (std::uint32_t i = 0; i < args->num_scalars && i < kMaxBuiltinScalars; ++i) {
    params.scalars[i] = args->scalars[i];
  }
  for (std::uint32_t i = 0; i < args->num_device_operands && i < kMaxBuiltinDeviceOperands; ++i) {
    const rrt_device_operand_t &operand = args->device_operands[i];
    params.device_operands[i] = BuiltinDeviceOperand{
        operand.value,
        operand.kind == RRT_DEVICE_OPERAND_SCALAR ? BuiltinDeviceOperand::kScalar
                                                  : BuiltinDeviceOperand::kViewOffset,
        operand.index,
        operand.dtype,
        0,
        operand.stride_bytes,
        operand.value_max};
    ++params.num_device_operands;
  }
  const LaunchShape shape = shape_of(context->builtin, params);
  void *kernel_args[] = {&params};
  const cudaError_t launched =
      context->api->launch_kernel(shape.function, shape.grid, shape.block, kernel_args,
                                  shape.shared_bytes, static_cast<cudaStream_t>(native_stream));
  if (launched != cudaSuccess) {
    (void)context->api->get_last_error();
    return kLaunchErrorBase + static_cast<int>(launched);
  }
  return 0;
}

bool builtin_takes_device_scalar(std::uint32_t builtin, std::uint32_t scalar) noexcept {
  switch (builtin) {
    case kFill:
    case kScale:
      return scalar == 0;
    case kRmsnorm:
      return scalar == 1;
    case kRope:
      return scalar == 3;
    default:
      return false;
  }
}

cudaError_t launch_profile(const CudaApi &api, cudaStream_t stream, const ProfileParams &params) {
  ProfileParams copy = params;
  void *kernel_args[] = {&copy};
  const cudaError_t launched =
      api.launch_kernel(stub(&profile_kernel), dim3(1), dim3(1), kernel_args, 0, stream);
  if (launched != cudaSuccess) {
    (void)api.get_last_error();
  }
  return launched;
}

std::span<const DeviceKernel> device_kernels() noexcept {
  static const DeviceKernel kKernels[] = {
      {"fill", "fill", stub(&elementwise_kernel<Op::kFill>), sizeof(BuiltinParams), 1},
      {"copy", "copy", stub(&elementwise_kernel<Op::kCopy>), sizeof(BuiltinParams), 1},
      {"add", "add", stub(&elementwise_kernel<Op::kAdd>), sizeof(BuiltinParams), 1},
      {"mul", "mul", stub(&elementwise_kernel<Op::kMul>), sizeof(BuiltinParams), 1},
      {"scale", "scale", stub(&elementwise_kernel<Op::kScale>), sizeof(BuiltinParams), 1},
      {"silu", "silu", stub(&elementwise_kernel<Op::kSilu>), sizeof(BuiltinParams), 1},
      {"gelu", "gelu", stub(&elementwise_kernel<Op::kGelu>), sizeof(BuiltinParams), 1},
      {"matmul", "matmul", stub(&matmul_kernel), sizeof(BuiltinParams), 1},
      {"softmax", "softmax", stub(&softmax_kernel), sizeof(BuiltinParams), 1},
      {"rmsnorm", "rmsnorm", stub(&rmsnorm_kernel), sizeof(BuiltinParams), 1},
      {"linear.f32", "linear", stub(&linear_kernel<RRT_DTYPE_F32>), sizeof(BuiltinParams), 1},
      {"linear.f16", "linear", stub(&linear_kernel<RRT_DTYPE_F16>), sizeof(BuiltinParams), 1},
      {"linear.bf16", "linear", stub(&linear_kernel<RRT_DTYPE_BF16>), sizeof(BuiltinParams), 1},
      {"embedding.f32", "embedding", stub(&embedding_kernel<RRT_DTYPE_F32>),
       sizeof(BuiltinParams), 1},
      {"embedding.f16", "embedding", stub(&embedding_kernel<RRT_DTYPE_F16>),
       sizeof(BuiltinParams), 1},
      {"embedding.bf16", "embedding", stub(&embedding_kernel<RRT_DTYPE_BF16>),
       sizeof(BuiltinParams), 1},
      {"rope", "rope", stub(&rope_kernel), sizeof(BuiltinParams), 1},
      {"kv_store", "kv_store", stub(&kv_store_kernel), sizeof(BuiltinParams), 1},
      {"attention", "attention", stub(&attention_kernel), sizeof(BuiltinParams),
       kAttentionSplit},
      {"profile", "profile", stub(&profile_kernel), sizeof(ProfileParams), 1},
  };
  return kKernels;
}

static_assert(kBuiltinCount == 15, "one index per built-in of builtin_kernel_specs()");

}  // namespace replayrt::cuda
