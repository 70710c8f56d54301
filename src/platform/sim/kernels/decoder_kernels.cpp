#include "platform/sim/kernels/decoder_kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "platform/launch/builtin_checks.h"
#include "platform/launch/builtin_kernels.h"
#include "platform/launch/float_formats.h"
#include "platform/sim/kernels/kernel_parts.h"

namespace replayrt::sim_kernels {
namespace {

using namespace kernel_result;  // NOLINT(google-build-using-namespace)

const float *f32_tensor(const rrt_kernel_args_t &args, std::size_t index) {
  return static_cast<const float *>(args.tensors[index]);
}

float *f32_output(const rrt_kernel_args_t &args, std::size_t index) {
  return static_cast<float *>(args.tensors[index]);
}

std::int32_t read_i32(const rrt_kernel_args_t &args, std::size_t index, std::size_t element) {
  std::int32_t value = 0;
  std::memcpy(&value, static_cast<const std::byte *>(args.tensors[index]) + element * 4,
              sizeof value);
  return value;
}

// Widens `count` weights starting at element `first` of a weight tensor of `wdtype` into out.
void widen(const void *weights, std::uint64_t wdtype, std::size_t first, std::size_t count,
           float *out) {
  if (wdtype == RRT_DTYPE_F32) {
    std::memcpy(out, static_cast<const float *>(weights) + first, count * sizeof(float));
    return;
  }
  const auto *halves = static_cast<const std::uint16_t *>(weights) + first;
  if (wdtype == RRT_DTYPE_F16) {
    for (std::size_t i = 0; i < count; ++i) {
      out[i] = f32_from_f16(halves[i]);
    }
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      out[i] = f32_from_bf16(halves[i]);
    }
  }
}

// The fixed-order float dot product every decoder kernel uses: eight partial sums, lane j
// taking the products k = j, j + 8, ... of the whole blocks of eight in increasing k, combined
// as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), then the remaining products in order.
constexpr std::size_t kLanes = 8;

struct Lanes {
  std::array<float, kLanes> sums{};

  void add_blocks(const float *a, const float *b, std::size_t blocks) {
    for (std::size_t block = 0; block < blocks; ++block, a += kLanes, b += kLanes) {
      for (std::size_t lane = 0; lane < kLanes; ++lane) {
        sums[lane] += a[lane] * b[lane];
      }
    }
  }

  float total() const {
    return ((sums[0] + sums[1]) + (sums[2] + sums[3])) +
           ((sums[4] + sums[5]) + (sums[6] + sums[7]));
  }
};

float dot(const float *a, const float *b, std::size_t count) {
  Lanes lanes;
  const std::size_t blocks = count / kLanes;
  lanes.add_blocks(a, b, blocks);
  float sum = lanes.total();
  for (std::size_t i = blocks * kLanes; i < count; ++i) {
    sum += a[i] * b[i];
  }
  return sum;
}

// The same sum as dot(x, widened weight row), widening the row a chunk at a time.
constexpr std::size_t kChunk = 256;  // a multiple of kLanes

float dot_widened(const float *x, const void *weights, std::uint64_t wdtype, std::size_t row_begin,
                  std::size_t count) {
  std::array<float, kChunk> chunk;
  Lanes lanes;
  const std::size_t whole = count / kLanes * kLanes;
  for (std::size_t done = 0; done < whole; done += kChunk) {
    const std::size_t length = std::min(kChunk, whole - done);
    widen(weights, wdtype, row_begin + done, length, chunk.data());
    lanes.add_blocks(x + done, chunk.data(), length / kLanes);
  }
  float sum = lanes.total();
  if (whole < count) {
    widen(weights, wdtype, row_begin + whole, count - whole, chunk.data());
    for (std::size_t i = whole; i < count; ++i) {
      sum += x[i] * chunk[i - whole];
    }
  }
  return sum;
}

// Writes output columns [first_col, end_col) of every row of a linear that passed its check.
// Output column outermost: one weight row stays in cache while every x row meets it.
void linear_columns(const rrt_kernel_args_t &args, std::size_t first_col, std::size_t end_col) {
  const auto m = static_cast<std::size_t>(args.scalars[0]);
  const auto k = static_cast<std::size_t>(args.scalars[1]);
  const auto n = static_cast<std::size_t>(args.scalars[2]);
  const std::uint64_t wdtype = args.scalars[3];
  const float *x = f32_tensor(args, 0);
  const void *w = args.tensors[1];
  float *y = f32_output(args, 2);
  for (std::size_t col = first_col; col < end_col; ++col) {
    for (std::size_t row = 0; row < m; ++row) {
      y[row * n + col] = wdtype == RRT_DTYPE_F32
                             ? dot(x + row * k, static_cast<const float *>(w) + col * k, k)
                             : dot_widened(x + row * k, w, wdtype, col * k, k);
    }
  }
}

}  // namespace

int linear_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_linear(args); code != kOk) {
    return code;
  }
  linear_columns(*args, 0, static_cast<std::size_t>(args->scalars[2]));
  return kOk;
}

std::uint64_t linear_parts(const rrt_kernel_args_t *args) {
  if (builtin_checks::check_linear(args) != kOk) {
    return 1;
  }
  const std::uint64_t n = args->scalars[2];
  return part_count(n,
                    saturating_product(saturating_product(args->scalars[0], args->scalars[1]), n));
}

void run_linear_parts(const rrt_kernel_args_t *args, std::uint64_t first, std::uint64_t end,
                      std::uint64_t count) {
  const UnitRange cols = units_of_parts(args->scalars[2], first, end, count);
  linear_columns(*args, cols.begin, cols.end);
}

int embedding_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_embedding(args); code != kOk) {
    return code;
  }
  const std::uint64_t v = args->scalars[0];
  const auto d = static_cast<std::size_t>(args->scalars[1]);
  const auto t = static_cast<std::size_t>(args->scalars[2]);
  for (std::size_t i = 0; i < t; ++i) {
    const std::int32_t id = read_i32(*args, 1, i);
    if (id < 0 || static_cast<std::uint64_t>(id) >= v) {
      return kIndexOutOfRange;
    }
  }
  float *out = f32_output(*args, 2);
  for (std::size_t i = 0; i < t; ++i) {
    const auto id = static_cast<std::size_t>(read_i32(*args, 1, i));
    widen(args->tensors[0], args->scalars[3], id * d, d, out + i * d);
  }
  return kOk;
}

int rope_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_rope(args); code != kOk) {
    return code;
  }
  const auto t = static_cast<std::size_t>(args->scalars[0]);
  const auto h = static_cast<std::size_t>(args->scalars[1]);
  const auto hd = static_cast<std::size_t>(args->scalars[2]);
  const double theta = rrt_scalar_to_f32(args->scalars[3]);
  const std::int32_t pos = read_i32(*args, 0, 0);
  if (pos < 0) {
    return kIndexOutOfRange;
  }
  float *x = f32_output(*args, 1);
  for (std::size_t row = 0; row < t; ++row) {
    const double position = static_cast<double>(pos) + static_cast<double>(row);
    float *x_row = x + row * h * hd;
    for (std::size_t i = 0; i < hd / 2; ++i) {
      const double angle =
          position * std::pow(theta, -static_cast<double>(2 * i) / static_cast<double>(hd));
      const double c = std::cos(angle);
      const double s = std::sin(angle);
      for (std::size_t head = 0; head < h; ++head) {
        float *pair = x_row + head * hd + 2 * i;
        const double x0 = pair[0];
        const double x1 = pair[1];
        pair[0] = static_cast<float>(x0 * c - x1 * s);
        pair[1] = static_cast<float>(x0 * s + x1 * c);
      }
    }
  }
  return kOk;
}

int kv_store_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_kv_store(args); code != kOk) {
    return code;
  }
  const std::uint64_t t = args->scalars[0];
  const std::uint64_t w = args->scalars[1];
  const std::uint64_t s = args->scalars[2];
  const std::int32_t pos = read_i32(*args, 1, 0);
  if (pos < 0 || static_cast<std::uint64_t>(pos) + t > s) {
    return kIndexOutOfRange;
  }
  std::memcpy(f32_output(*args, 2) + static_cast<std::size_t>(pos) * w, f32_tensor(*args, 0),
              static_cast<std::size_t>(t * w) * sizeof(float));
  return kOk;
}

namespace {

// The operands of an attention that passed its check, with its position read.
struct Attention {
  std::size_t t = 0;
  std::size_t h = 0;
  std::size_t kvh = 0;
  std::size_t hd = 0;
  std::size_t pos = 0;
  const float *q = nullptr;
  const float *k_cache = nullptr;
  const float *v_cache = nullptr;
  float *out = nullptr;
};

// kOk with *out filled, or kIndexOutOfRange for a position outside the cache.
int attention_operands(const rrt_kernel_args_t &args, Attention *out) {
  const std::uint64_t s = args.scalars[4];
  const std::int32_t pos = read_i32(args, 3, 0);
  if (pos < 0 || static_cast<std::uint64_t>(pos) + args.scalars[0] > s) {
    return kIndexOutOfRange;
  }
  *out = Attention{static_cast<std::size_t>(args.scalars[0]),
                   static_cast<std::size_t>(args.scalars[1]),
                   static_cast<std::size_t>(args.scalars[2]),
                   static_cast<std::size_t>(args.scalars[3]),
                   static_cast<std::size_t>(pos),
                   f32_tensor(args, 0),
                   f32_tensor(args, 1),
                   f32_tensor(args, 2),
                   f32_output(args, 4)};
  return kOk;
}

// Writes the results of (row, head) pairs [first, end), pair p being row p / h, head p % h.
void attention_pairs(const Attention &a, std::size_t first, std::size_t end) {
  const std::size_t group = a.h / a.kvh;
  const float scale = 1.0F / std::sqrt(static_cast<float>(a.hd));
  for (std::size_t pair = first; pair < end; ++pair) {
    const std::size_t row = pair / a.h;
    const std::size_t head = pair % a.h;
    const std::size_t last = a.pos + row;
    const float *query = a.q + (row * a.h + head) * a.hd;
    const std::size_t kv_offset = head / group * a.hd;
    float *result = a.out + (row * a.h + head) * a.hd;
    float max_score = dot(query, a.k_cache + kv_offset, a.hd) * scale;
    for (std::size_t j = 1; j <= last; ++j) {
      max_score =
          std::max(max_score, dot(query, a.k_cache + j * a.kvh * a.hd + kv_offset, a.hd) * scale);
    }
    std::fill_n(result, a.hd, 0.0F);
    float sum = 0.0F;
    for (std::size_t j = 0; j <= last; ++j) {
      const float weight =
          std::exp(dot(query, a.k_cache + j * a.kvh * a.hd + kv_offset, a.hd) * scale - max_score);
      sum += weight;
      const float *value = a.v_cache + j * a.kvh * a.hd + kv_offset;
      for (std::size_t d = 0; d < a.hd; ++d) {
        result[d] += weight * value[d];
      }
    }
    const float inverse_sum = 1.0F / sum;
    for (std::size_t d = 0; d < a.hd; ++d) {
      result[d] *= inverse_sum;
    }
  }
}

}  // namespace

int attention_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_attention(args); code != kOk) {
    return code;
  }
  Attention a;
  if (const int code = attention_operands(*args, &a); code != kOk) {
    return code;
  }
  attention_pairs(a, 0, a.t * a.h);
  return kOk;
}

std::uint64_t attention_parts(const rrt_kernel_args_t *args) {
  Attention a;
  if (builtin_checks::check_attention(args) != kOk || attention_operands(*args, &a) != kOk) {
    return 1;
  }
  // Each pair scores and sums up to pos + t cached positions of hd elements, twice.
  const std::uint64_t pairs = std::uint64_t{a.t} * a.h;
  return part_count(pairs, saturating_product(saturating_product(pairs, a.pos + a.t), 2 * a.hd));
}

void run_attention_parts(const rrt_kernel_args_t *args, std::uint64_t first, std::uint64_t end,
                         std::uint64_t count) {
  Attention a;
  (void)attention_operands(*args, &a);
  const UnitRange pairs = units_of_parts(std::uint64_t{a.t} * a.h, first, end, count);
  attention_pairs(a, pairs.begin, pairs.end);
}

}  // namespace replayrt::sim_kernels
