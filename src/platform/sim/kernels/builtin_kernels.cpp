#include "platform/sim/kernels/builtin_kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "platform/launch/builtin_checks.h"
#include "platform/launch/builtin_kernels.h"
#include "platform/launch/operand_checks.h"
#include "platform/sim/kernels/decoder_kernels.h"
#include "platform/sim/kernels/kernel_parts.h"

namespace replayrt {
namespace {

using namespace kernel_result;  // NOLINT(google-build-using-namespace)
using sim_kernels::part_count;
using sim_kernels::saturating_product;
using sim_kernels::UnitRange;
using sim_kernels::units_of_parts;

// The number of floats tensor `index` holds; it fits in size_t, the tensor being in memory.
std::size_t float_count(const rrt_kernel_args_t &args, std::size_t index) {
  return static_cast<std::size_t>(operand_checks::floats(args, index));
}

const float *input(const rrt_kernel_args_t &args, std::size_t index) {
  return static_cast<const float *>(args.tensors[index]);
}

float *output(const rrt_kernel_args_t &args, std::size_t index) {
  return static_cast<float *>(args.tensors[index]);
}

float float_scalar(const rrt_kernel_args_t &args, std::size_t index) {
  return rrt_scalar_to_f32(args.scalars[index]);
}

// The logistic function, evaluated so that exp never overflows.
float sigmoid(float x) {
  if (x >= 0.0F) {
    return 1.0F / (1.0F + std::exp(-x));
  }
  const float e = std::exp(x);
  return e / (1.0F + e);
}

// Writes out[i] = op(in[i]) over (in, out) operands that passed their check.
template <typename Op>
void apply_unary(const rrt_kernel_args_t &args, Op op) {
  const std::size_t count = float_count(args, 0);
  const float *in = input(args, 0);
  float *out = output(args, 1);
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = op(in[i]);
  }
}

// Runs out[i] = op(a[i], b[i]) over tensors (a, b, out) that pass check_binary.
template <typename Op>
int map_binary(const rrt_kernel_args_t *args, Op op) {
  if (const int code = builtin_checks::check_binary(args); code != kOk) {
    return code;
  }
  const std::size_t count = float_count(*args, 0);
  const float *a = input(*args, 0);
  const float *b = input(*args, 1);
  float *out = output(*args, 2);
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = op(a[i], b[i]);
  }
  return kOk;
}

int fill_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_fill(args); code != kOk) {
    return code;
  }
  std::fill_n(output(*args, 0), float_count(*args, 0), float_scalar(*args, 0));
  return kOk;
}

int copy_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_unary(args); code != kOk) {
    return code;
  }
  if (args->tensors[1] != args->tensors[0]) {
    std::memcpy(args->tensors[1], args->tensors[0],
                static_cast<std::size_t>(args->tensor_bytes[0]));
  }
  return kOk;
}

int add_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  return map_binary(args, [](float a, float b) { return a + b; });
}

int mul_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  return map_binary(args, [](float a, float b) { return a * b; });
}

int scale_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_scale(args); code != kOk) {
    return code;
  }
  const float factor = float_scalar(*args, 0);
  apply_unary(*args, [factor](float x) { return x * factor; });
  return kOk;
}

// The operands of one validated matmul: a is rows x inner, b is inner x cols, out rows x cols.
struct MatmulOperands {
  const float *a;
  const float *b;
  float *out;
  std::size_t inner;
  std::size_t cols;
};

// A tile of output the compiler keeps in registers while it sums over k.
constexpr std::size_t kTileRows = 4;
constexpr std::size_t kTileCols = 8;

// Writes out[first_row, first_row + kRows) x [first_col, first_col + kTileCols).
template <std::size_t kRows>
void matmul_tile(const MatmulOperands &mm, std::size_t first_row, std::size_t first_col) {
  std::array<std::array<float, kTileCols>, kRows> sums{};
  const float *a_column = mm.a + first_row * mm.inner;
  const float *b_segment = mm.b + first_col;
  for (std::size_t step = 0; step < mm.inner; ++step, ++a_column, b_segment += mm.cols) {
    std::array<float, kTileCols> b_values;
    std::copy_n(b_segment, kTileCols, b_values.begin());
    for (std::size_t row = 0; row < kRows; ++row) {
      const float weight = a_column[row * mm.inner];
      for (std::size_t col = 0; col < kTileCols; ++col) {
        sums[row][col] += weight * b_values[col];
      }
    }
  }
  for (std::size_t row = 0; row < kRows; ++row) {
    std::copy(sums[row].begin(), sums[row].end(), mm.out + (first_row + row) * mm.cols + first_col);
  }
}

// Writes out[first_row, first_row + kRows) x [first_col, cols), fewer than kTileCols columns.
template <std::size_t kRows>
void matmul_column_tail(const MatmulOperands &mm, std::size_t first_row, std::size_t first_col) {
  for (std::size_t row = first_row; row < first_row + kRows; ++row) {
    float *out_row = mm.out + row * mm.cols;
    std::fill(out_row + first_col, out_row + mm.cols, 0.0F);
    const float *a_row = mm.a + row * mm.inner;
    for (std::size_t step = 0; step < mm.inner; ++step) {
      const float weight = a_row[step];
      const float *b_row = mm.b + step * mm.cols;
      for (std::size_t col = first_col; col < mm.cols; ++col) {
        out_row[col] += weight * b_row[col];
      }
    }
  }
}

// Writes out[first_row, first_row + kRows) x [0, cols).
template <std::size_t kRows>
void matmul_rows(const MatmulOperands &mm, std::size_t first_row) {
  std::size_t col = 0;
  for (; col + kTileCols <= mm.cols; col += kTileCols) {
    matmul_tile<kRows>(mm, first_row, col);
  }
  if (col < mm.cols) {
    matmul_column_tail<kRows>(mm, first_row, col);
  }
}

// The operands of a matmul that passed its check.
MatmulOperands matmul_operands(const rrt_kernel_args_t &args) {
  // Each dimension product fits in size_t: it counts the floats of a tensor.
  return MatmulOperands{input(args, 0), input(args, 1), output(args, 2),
                        static_cast<std::size_t>(args.scalars[1]),
                        static_cast<std::size_t>(args.scalars[2])};
}

// Writes output rows [first_row, end_row). Every element sums its k products in increasing
// order starting from zero, whichever tile computes it, so any division into row ranges gives
// the same bits.
void matmul_row_range(const MatmulOperands &mm, std::size_t first_row, std::size_t end_row) {
  std::size_t row = first_row;
  for (; row + kTileRows <= end_row; row += kTileRows) {
    matmul_rows<kTileRows>(mm, row);
  }
  for (; row < end_row; ++row) {
    matmul_rows<1>(mm, row);
  }
}

// The row tiles of an m-row matmul: the units its parts divide.
std::uint64_t matmul_row_tiles(std::uint64_t m) {
  return (m + kTileRows - 1) / kTileRows;
}

int matmul_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_matmul(args); code != kOk) {
    return code;
  }
  matmul_row_range(matmul_operands(*args), 0, static_cast<std::size_t>(args->scalars[0]));
  return kOk;
}

std::uint64_t matmul_parts(const rrt_kernel_args_t *args) {
  if (builtin_checks::check_matmul(args) != kOk) {
    return 1;
  }
  const std::uint64_t m = args->scalars[0];
  return part_count(matmul_row_tiles(m),
                    saturating_product(saturating_product(m, args->scalars[1]), args->scalars[2]));
}

void run_matmul_parts(const rrt_kernel_args_t *args, std::uint64_t first, std::uint64_t end,
                      std::uint64_t count) {
  const auto m = static_cast<std::size_t>(args->scalars[0]);
  const UnitRange tiles = units_of_parts(matmul_row_tiles(m), first, end, count);
  matmul_row_range(matmul_operands(*args), tiles.begin * kTileRows,
                   std::min(tiles.end * kTileRows, m));
}

// Writes rows [first_row, end_row) of a softmax over rows of `cols` that passed its check.
void softmax_rows(const rrt_kernel_args_t &args, std::size_t first_row, std::size_t end_row) {
  const auto cols = static_cast<std::size_t>(args.scalars[0]);
  const float *in = input(args, 0);
  float *out = output(args, 1);
  for (std::size_t row = first_row; row < end_row; ++row) {
    const float *in_row = in + row * cols;
    float *out_row = out + row * cols;
    float row_max = in_row[0];
    for (std::size_t col = 1; col < cols; ++col) {
      row_max = std::max(row_max, in_row[col]);
    }
    double sum = 0.0;
    for (std::size_t col = 0; col < cols; ++col) {
      const float e = std::exp(in_row[col] - row_max);
      out_row[col] = e;
      sum += e;
    }
    const auto inverse_sum = static_cast<float>(1.0 / sum);
    for (std::size_t col = 0; col < cols; ++col) {
      out_row[col] *= inverse_sum;
    }
  }
}

// The rows of a row-wise built-in (softmax, rmsnorm) over `cols` columns that passed its check.
std::size_t row_count(const rrt_kernel_args_t &args) {
  return float_count(args, 0) / static_cast<std::size_t>(args.scalars[0]);
}

// Per-element operations of a row-wise built-in's part sizing: an exponential costs about as
// much as eight multiply-adds, a square and a scaling about two.
constexpr std::uint64_t kSoftmaxElementWork = 8;
constexpr std::uint64_t kRmsnormElementWork = 2;

int softmax_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_softmax(args); code != kOk) {
    return code;
  }
  softmax_rows(*args, 0, row_count(*args));
  return kOk;
}

std::uint64_t softmax_parts(const rrt_kernel_args_t *args) {
  if (builtin_checks::check_softmax(args) != kOk) {
    return 1;
  }
  return part_count(row_count(*args),
                    saturating_product(float_count(*args, 0), kSoftmaxElementWork));
}

void run_softmax_parts(const rrt_kernel_args_t *args, std::uint64_t first, std::uint64_t end,
                       std::uint64_t count) {
  const UnitRange rows = units_of_parts(row_count(*args), first, end, count);
  softmax_rows(*args, rows.begin, rows.end);
}

// Writes rows [first_row, end_row) of an rmsnorm over rows of `cols` that passed its check.
void rmsnorm_rows(const rrt_kernel_args_t &args, std::size_t first_row, std::size_t end_row) {
  const auto cols = static_cast<std::size_t>(args.scalars[0]);
  const float eps = float_scalar(args, 1);
  const float *in = input(args, 0);
  const float *weight = input(args, 1);
  float *out = output(args, 2);
  for (std::size_t row = first_row; row < end_row; ++row) {
    const float *in_row = in + row * cols;
    float *out_row = out + row * cols;
    double sum_of_squares = 0.0;
    for (std::size_t col = 0; col < cols; ++col) {
      const double x = in_row[col];
      sum_of_squares += x * x;
    }
    const double mean_square = sum_of_squares / static_cast<double>(cols);
    const double inverse_rms = 1.0 / std::sqrt(mean_square + static_cast<double>(eps));
    for (std::size_t col = 0; col < cols; ++col) {
      out_row[col] = static_cast<float>(in_row[col] * inverse_rms * weight[col]);
    }
  }
}

int rmsnorm_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_rmsnorm(args); code != kOk) {
    return code;
  }
  rmsnorm_rows(*args, 0, row_count(*args));
  return kOk;
}

std::uint64_t rmsnorm_parts(const rrt_kernel_args_t *args) {
  if (builtin_checks::check_rmsnorm(args) != kOk) {
    return 1;
  }
  return part_count(row_count(*args),
                    saturating_product(float_count(*args, 0), kRmsnormElementWork));
}

void run_rmsnorm_parts(const rrt_kernel_args_t *args, std::uint64_t first, std::uint64_t end,
                       std::uint64_t count) {
  const UnitRange rows = units_of_parts(row_count(*args), first, end, count);
  rmsnorm_rows(*args, rows.begin, rows.end);
}

int silu_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  if (const int code = builtin_checks::check_unary(args); code != kOk) {
    return code;
  }
  apply_unary(*args, [](float x) { return x * sigmoid(x); });
  return kOk;
}

int gelu_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  // 0.5 (1 + tanh(u)) == sigmoid(2 u); twice sqrt(2/pi) folds the doubling into the constant.
  constexpr float kTwiceSqrtTwoOverPi = 1.5957691216057308F;
  constexpr float kCubicCoefficient = 0.044715F;
  if (const int code = builtin_checks::check_unary(args); code != kOk) {
    return code;
  }
  apply_unary(*args, [](float x) {
    return x * sigmoid(kTwiceSqrtTwoOverPi * (x + kCubicCoefficient * x * x * x));
  });
  return kOk;
}

// In builtin_kernel_specs() order.
constexpr std::array<BuiltinLauncher, 15> kLaunchers{{
    {fill_kernel, nullptr, nullptr},
    {copy_kernel, nullptr, nullptr},
    {add_kernel, nullptr, nullptr},
    {mul_kernel, nullptr, nullptr},
    {scale_kernel, nullptr, nullptr},
    {matmul_kernel, nullptr, nullptr, {matmul_parts, run_matmul_parts}},
    {softmax_kernel, nullptr, nullptr, {softmax_parts, run_softmax_parts}},
    {rmsnorm_kernel, nullptr, nullptr, {rmsnorm_parts, run_rmsnorm_parts}},
    {silu_kernel, nullptr, nullptr},
    {gelu_kernel, nullptr, nullptr},
    {sim_kernels::linear_kernel,
     nullptr,
     nullptr,
     {sim_kernels::linear_parts, sim_kernels::run_linear_parts}},
    {sim_kernels::embedding_kernel, nullptr, nullptr},
    {sim_kernels::rope_kernel, nullptr, nullptr},
    {sim_kernels::kv_store_kernel, nullptr, nullptr},
    {sim_kernels::attention_kernel,
     nullptr,
     nullptr,
     {sim_kernels::attention_parts, sim_kernels::run_attention_parts}},
}};

}  // namespace

namespace sim {

std::span<const BuiltinLauncher> builtin_launchers() noexcept {
  return kLaunchers;
}

rrt_kernel_fn builtin_host_kernel(std::string_view name) noexcept {
  const std::span<const BuiltinKernelSpec> specs = builtin_kernel_specs();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name == name) {
      return kLaunchers[i].host_fn;
    }
  }
  return nullptr;
}

}  // namespace sim

}  // namespace replayrt
