// The decoder built-ins (linear, embedding, rope, kv_store, attention) on the simulator against
// float64 references, their f16/bf16 weights, and their failures.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "platform/launch/builtin_kernels.h"
#include "platform/launch/float_formats.h"
#include "platform/sim/kernels/builtin_kernels.h"

namespace replayrt {
namespace {

using namespace kernel_result;  // NOLINT(google-build-using-namespace)

using Bytes = std::vector<std::byte>;

constexpr float kUntouched = -7.25F;

int run(std::string_view name, const std::vector<Bytes *> &tensors,
        const std::vector<std::uint64_t> &scalars) {
  std::vector<void *> addresses;
  std::vector<std::uint64_t> sizes;
  for (Bytes *tensor : tensors) {
    addresses.push_back(tensor->data());
    sizes.push_back(tensor->size());
  }
  const rrt_kernel_args_t args{static_cast<std::uint32_t>(addresses.size()),
                               addresses.data(),
                               sizes.data(),
                               static_cast<std::uint32_t>(scalars.size()),
                               scalars.data(),
                               0,
                               nullptr};
  for (const BuiltinKernelSpec &kernel : builtin_kernel_specs()) {
    if (name == kernel.name) {
      const int host = builtin_operand_check(name)(&args);
      const int code = sim::builtin_host_kernel(name)(&args, nullptr);
      if (code != kIndexOutOfRange) {
        EXPECT_EQ(host, code) << name << ": the host check agrees with the kernel";
      } else {
        EXPECT_EQ(host, kOk) << name << ": the host check never reads device values";
      }
      return code;
    }
  }
  ADD_FAILURE() << "no built-in " << name;
  return -1;
}

template <typename T>
Bytes bytes_of(const std::vector<T> &values) {
  Bytes out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

template <typename T>
std::vector<T> values_of(const Bytes &bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

std::vector<float> random_floats(std::size_t count, std::uint32_t seed, float low = -1.0F,
                                 float high = 1.0F) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float &value : values) {
    value = distribution(engine);
  }
  return values;
}

Bytes floats(std::size_t count, float value) {
  return bytes_of(std::vector<float>(count, value));
}

Bytes int32s(const std::vector<std::int32_t> &values) {
  return bytes_of(values);
}

std::uint64_t f32(float value) {
  return rrt_scalar_from_f32(value);
}

// An independent float64 decoding of binary16: (1024 + m) 2^(e - 25), or m 2^-24.
double reference_f16(std::uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  const double sign = (bits & 0x8000) != 0 ? -1.0 : 1.0;
  if (exponent == 0x1F) {
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  }
  if (exponent == 0) {
    return sign * std::ldexp(mantissa, -24);
  }
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

double reference_bf16(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16U;
  float value = 0.0F;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

// Random finite 16-bit weights of `wdtype` (F16 or BF16) in about [-2, 2], with their values.
std::vector<std::uint16_t> random_halves(std::size_t count, std::uint64_t wdtype,
                                         std::uint32_t seed, std::vector<double> *decoded) {
  const std::vector<float> values = random_floats(count, seed, -2.0F, 2.0F);
  std::vector<std::uint16_t> halves(count);
  decoded->resize(count);
  std::mt19937 engine(seed + 1);
  for (std::size_t i = 0; i < count; ++i) {
    if (wdtype == RRT_DTYPE_BF16) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &values[i], sizeof bits);
      halves[i] = static_cast<std::uint16_t>(bits >> 16U);
      (*decoded)[i] = reference_bf16(halves[i]);
    } else {
      // Exponents 0 (subnormal) to 16 (up to 4): every finite binade a weight plausibly uses.
      const auto exponent = static_cast<std::uint16_t>(engine() % 17);
      const auto mantissa = static_cast<std::uint16_t>(engine() % 1024);
      const auto sign = static_cast<std::uint16_t>((engine() % 2) << 15U);
      halves[i] = static_cast<std::uint16_t>(sign | (exponent << 10U) | mantissa);
      (*decoded)[i] = reference_f16(halves[i]);
    }
  }
  return halves;
}

// ---- conversions -------------------------------------------------------------------------------

TEST(HalfConversionTest, EveryBinary16PatternWidensExactly) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto half = static_cast<std::uint16_t>(bits);
    const float widened = f32_from_f16(half);
    const double expected = reference_f16(half);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(widened)) << bits;
      EXPECT_EQ(std::signbit(widened), (bits & 0x8000U) != 0) << bits;
    } else {
      EXPECT_EQ(static_cast<double>(widened), expected) << bits;
      EXPECT_EQ(std::signbit(widened), (bits & 0x8000U) != 0) << bits;
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
// A process built with -ffast-math, or a library it loads, may set denormals-are-zero and
// flush-to-zero; threads the simulator starts inherit them. No binary16 value is subnormal in
// binary32, so widening holds there too.
TEST(HalfConversionTest, EveryBinary16PatternWidensExactlyWithSubnormalsFlushedToZero) {
  constexpr unsigned kFlushToZero = 0x8000U;
  constexpr unsigned kDenormalsAreZero = 0x0040U;
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | kFlushToZero | kDenormalsAreZero);
  std::vector<float> widened(0x10000);
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    widened[bits] = f32_from_f16(static_cast<std::uint16_t>(bits));
  }
  _mm_setcsr(saved);
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const double expected = reference_f16(static_cast<std::uint16_t>(bits));
    if (!std::isnan(expected)) {
      EXPECT_EQ(static_cast<double>(widened[bits]), expected) << bits;
      EXPECT_EQ(std::signbit(widened[bits]), (bits & 0x8000U) != 0) << bits;
    }
  }
}
#endif

TEST(HalfConversionTest, EveryBfloat16PatternWidensToTheFloatWithThoseHighBits) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const float widened = f32_from_bf16(static_cast<std::uint16_t>(bits));
    std::uint32_t wide = 0;
    std::memcpy(&wide, &widened, sizeof wide);
    EXPECT_EQ(wide, bits << 16U) << bits;
  }
}

// ---- linear ------------------------------------------------------------------------------------

// y = x · wᵀ in float64 and, per element, the sum of |x||w| that bounds its rounding error.
struct LinearReference {
  std::vector<double> y;
  std::vector<double> magnitude;
};

LinearReference reference_linear(const std::vector<float> &x, const std::vector<double> &w,
                                 std::size_t m, std::size_t k, std::size_t n) {
  LinearReference ref{std::vector<double>(m * n), std::vector<double>(m * n)};
  for (std::size_t row = 0; row < m; ++row) {
    for (std::size_t col = 0; col < n; ++col) {
      double sum = 0.0;
      double magnitude = 0.0;
      for (std::size_t step = 0; step < k; ++step) {
        const double product = static_cast<double>(x[row * k + step]) * w[col * k + step];
        sum += product;
        magnitude += std::fabs(product);
      }
      ref.y[row * n + col] = sum;
      ref.magnitude[row * n + col] = magnitude;
    }
  }
  return ref;
}

void expect_linear_matches(const Bytes &y, const LinearReference &ref) {
  const std::vector<float> actual = values_of<float>(y);
  ASSERT_EQ(actual.size(), ref.y.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], ref.y[i], 1e-5 * ref.magnitude[i]) << "at " << i;
  }
}

TEST(LinearKernelTest, MultipliesByTheTransposedF32WeightOnManyShapes) {
  struct Shape {
    std::size_t m, k, n;
  };
  for (const Shape shape : {Shape{1, 1, 1}, Shape{1, 7, 3}, Shape{3, 8, 5}, Shape{2, 9, 4},
                            Shape{5, 300, 17}, Shape{1, 515, 33}}) {
    const std::vector<float> x = random_floats(shape.m * shape.k, 1);
    const std::vector<float> w = random_floats(shape.n * shape.k, 2);
    Bytes xb = bytes_of(x);
    Bytes wb = bytes_of(w);
    Bytes yb = floats(shape.m * shape.n, kUntouched);
    ASSERT_EQ(run("linear", {&xb, &wb, &yb}, {shape.m, shape.k, shape.n, RRT_DTYPE_F32}), kOk);
    expect_linear_matches(yb, reference_linear(x, std::vector<double>(w.begin(), w.end()), shape.m,
                                               shape.k, shape.n));
  }
}

TEST(LinearKernelTest, AgreesWithMatmulOnTheTransposedWeightWithinRounding) {
  constexpr std::size_t kM = 3;
  constexpr std::size_t kK = 64;
  constexpr std::size_t kN = 10;
  const std::vector<float> x = random_floats(kM * kK, 3);
  const std::vector<float> w = random_floats(kN * kK, 4);
  std::vector<float> transposed(kK * kN);
  for (std::size_t col = 0; col < kN; ++col) {
    for (std::size_t step = 0; step < kK; ++step) {
      transposed[step * kN + col] = w[col * kK + step];
    }
  }
  Bytes xb = bytes_of(x);
  Bytes wb = bytes_of(w);
  Bytes tb = bytes_of(transposed);
  Bytes linear_out = floats(kM * kN, kUntouched);
  Bytes matmul_out = floats(kM * kN, kUntouched);
  ASSERT_EQ(run("linear", {&xb, &wb, &linear_out}, {kM, kK, kN, RRT_DTYPE_F32}), kOk);
  ASSERT_EQ(run("matmul", {&xb, &tb, &matmul_out}, {kM, kK, kN}), kOk);
  const std::vector<float> a = values_of<float>(linear_out);
  const std::vector<float> b = values_of<float>(matmul_out);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], 1e-5F) << i;
  }
}

// linear's sum as the header states it for the simulator: eight lane sums over the whole
// blocks of eight (lane j taking k = j, j + 8, ...), combined pairwise, then the remaining
// products in increasing k, each product rounded to float32 before it is added.
float header_order_dot(const float *x, const float *w, std::size_t k) {
  constexpr std::size_t kLanes = 8;
  std::array<float, kLanes> lanes{};
  const std::size_t whole = k / kLanes * kLanes;
  for (std::size_t i = 0; i < whole; ++i) {
    lanes[i % kLanes] += x[i] * w[i];
  }
  float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
              ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (std::size_t i = whole; i < k; ++i) {
    sum += x[i] * w[i];
  }
  return sum;
}

TEST(LinearKernelTest, SumsInTheOrderTheHeaderStatesBitForBit) {
  constexpr std::size_t kM = 3;
  constexpr std::size_t kK = 29;  // three blocks of eight and a remainder of five
  constexpr std::size_t kN = 6;
  const std::vector<float> x = random_floats(kM * kK, 5);
  const std::vector<float> w = random_floats(kN * kK, 6);
  Bytes xb = bytes_of(x);
  Bytes wb = bytes_of(w);
  Bytes yb = floats(kM * kN, kUntouched);
  ASSERT_EQ(run("linear", {&xb, &wb, &yb}, {kM, kK, kN, RRT_DTYPE_F32}), kOk);
  const std::vector<float> y = values_of<float>(yb);
  bool another_order_differs = false;
  for (std::size_t row = 0; row < kM; ++row) {
    for (std::size_t col = 0; col < kN; ++col) {
      const float expected = header_order_dot(&x[row * kK], &w[col * kK], kK);
      EXPECT_EQ(std::bit_cast<std::uint32_t>(y[row * kN + col]),
                std::bit_cast<std::uint32_t>(expected))
          << "row " << row << " col " << col;
      float in_order = 0.0F;
      for (std::size_t i = 0; i < kK; ++i) {
        in_order += x[row * kK + i] * w[col * kK + i];
      }
      another_order_differs = another_order_differs || in_order != expected;
    }
  }
  EXPECT_TRUE(another_order_differs) << "the inputs cannot tell the stated order from another";
}

TEST(LinearKernelTest, WidensF16AndBf16WeightsExactly) {
  constexpr std::size_t kM = 2;
  constexpr std::size_t kK = 261;  // whole chunks, blocks of eight and a remainder
  constexpr std::size_t kN = 5;
  for (const std::uint64_t wdtype : {std::uint64_t{RRT_DTYPE_F16}, std::uint64_t{RRT_DTYPE_BF16}}) {
    SCOPED_TRACE(wdtype);
    std::vector<double> decoded;
    const std::vector<std::uint16_t> w = random_halves(kN * kK, wdtype, 5, &decoded);
    const std::vector<float> x = random_floats(kM * kK, 6);
    Bytes xb = bytes_of(x);
    Bytes wb = bytes_of(w);
    Bytes yb = floats(kM * kN, kUntouched);
    ASSERT_EQ(run("linear", {&xb, &wb, &yb}, {kM, kK, kN, wdtype}), kOk);
    expect_linear_matches(yb, reference_linear(x, decoded, kM, kK, kN));
    // The same weights widened to f32 give the same bits.
    std::vector<float> widened(decoded.begin(), decoded.end());
    Bytes fb = bytes_of(widened);
    Bytes f32_out = floats(kM * kN, kUntouched);
    ASSERT_EQ(run("linear", {&xb, &fb, &f32_out}, {kM, kK, kN, RRT_DTYPE_F32}), kOk);
    EXPECT_EQ(yb, f32_out);
  }
}

TEST(LinearKernelTest, RejectsSizesAnUnknownWdtypeAndOverlapsWithoutWriting) {
  Bytes x = bytes_of(random_floats(2ULL * 4, 1));
  Bytes w = bytes_of(random_floats(3ULL * 4, 2));
  Bytes y = floats(2ULL * 3, kUntouched);
  const Bytes untouched = y;
  EXPECT_EQ(run("linear", {&x, &w, &y}, {2, 4, 4, RRT_DTYPE_F32}), kSizeMismatch);
  EXPECT_EQ(run("linear", {&x, &w, &y}, {2, 4, 3, RRT_DTYPE_F16}), kSizeMismatch)
      << "f32 bytes read as twice as many f16 weights";
  EXPECT_EQ(run("linear", {&x, &w, &y}, {2, 4, 3, RRT_DTYPE_I32}), kScalarOutOfDomain);
  EXPECT_EQ(run("linear", {&x, &w, &y}, {0, 4, 3, RRT_DTYPE_F32}), kZeroDimension);
  Bytes odd_halves(3 * 4 * 2 + 1);
  EXPECT_EQ(run("linear", {&x, &odd_halves, &y}, {2, 4, 3, RRT_DTYPE_BF16}), kBadByteSize);
  EXPECT_EQ(y, untouched);
  // y on x's bytes.
  std::vector<void *> addresses = {x.data(), w.data(), x.data()};
  std::vector<std::uint64_t> sizes = {x.size(), w.size(), 2ULL * 3 * 4};
  std::vector<std::uint64_t> scalars = {2, 4, 3, RRT_DTYPE_F32};
  const rrt_kernel_args_t args{3, addresses.data(), sizes.data(), 4, scalars.data(), 0, nullptr};
  EXPECT_EQ(builtin_operand_check("linear")(&args), kOverlappingOutput);
}

// ---- embedding ---------------------------------------------------------------------------------

TEST(EmbeddingKernelTest, GathersTheRowsOfTheIdsForEveryWdtype) {
  constexpr std::size_t kV = 11;
  constexpr std::size_t kD = 6;
  const std::vector<std::int32_t> ids = {3, 0, 10, 3};
  for (const std::uint64_t wdtype : {std::uint64_t{RRT_DTYPE_F32}, std::uint64_t{RRT_DTYPE_F16},
                                     std::uint64_t{RRT_DTYPE_BF16}}) {
    SCOPED_TRACE(wdtype);
    std::vector<double> decoded;
    Bytes table;
    if (wdtype == RRT_DTYPE_F32) {
      const std::vector<float> values = random_floats(kV * kD, 7);
      decoded.assign(values.begin(), values.end());
      table = bytes_of(values);
    } else {
      table = bytes_of(random_halves(kV * kD, wdtype, 8, &decoded));
    }
    Bytes id_bytes = int32s(ids);
    Bytes out = floats(ids.size() * kD, kUntouched);
    ASSERT_EQ(run("embedding", {&table, &id_bytes, &out}, {kV, kD, ids.size(), wdtype}), kOk);
    const std::vector<float> actual = values_of<float>(out);
    for (std::size_t t = 0; t < ids.size(); ++t) {
      for (std::size_t d = 0; d < kD; ++d) {
        EXPECT_EQ(static_cast<double>(actual[t * kD + d]),
                  decoded[static_cast<std::size_t>(ids[t]) * kD + d]);
      }
    }
  }
}

TEST(EmbeddingKernelTest, AnIdOutsideTheTableFailsAndWritesNothing) {
  Bytes table = bytes_of(random_floats(4ULL * 3, 1));
  Bytes out = floats(2ULL * 3, kUntouched);
  const Bytes untouched = out;
  for (const std::int32_t bad : {-1, 4, std::numeric_limits<std::int32_t>::min()}) {
    Bytes ids = int32s({1, bad});
    EXPECT_EQ(run("embedding", {&table, &ids, &out}, {4, 3, 2, RRT_DTYPE_F32}), kIndexOutOfRange)
        << bad;
    EXPECT_EQ(out, untouched);
  }
}

TEST(EmbeddingKernelTest, RejectsSizesThatDisagreeWithTheDimensions) {
  Bytes table = bytes_of(random_floats(4ULL * 3, 1));
  Bytes ids = int32s({1, 2});
  Bytes out = floats(2ULL * 3, kUntouched);
  EXPECT_EQ(run("embedding", {&table, &ids, &out}, {5, 3, 2, RRT_DTYPE_F32}), kSizeMismatch);
  EXPECT_EQ(run("embedding", {&table, &ids, &out}, {4, 3, 3, RRT_DTYPE_F32}), kSizeMismatch);
  EXPECT_EQ(run("embedding", {&table, &ids, &out}, {4, 3, 2, 99}), kScalarOutOfDomain);
  Bytes short_ids(6);
  EXPECT_EQ(run("embedding", {&table, &short_ids, &out}, {4, 3, 2, RRT_DTYPE_F32}), kBadByteSize);
}

// ---- rope --------------------------------------------------------------------------------------

std::vector<double> reference_rope(const std::vector<float> &x, std::int32_t pos, std::size_t t,
                                   std::size_t h, std::size_t hd, double theta) {
  std::vector<double> out(x.begin(), x.end());
  for (std::size_t row = 0; row < t; ++row) {
    for (std::size_t head = 0; head < h; ++head) {
      for (std::size_t i = 0; i < hd / 2; ++i) {
        const double angle = static_cast<double>(pos + static_cast<std::int32_t>(row)) /
                             std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(hd));
        const std::size_t at = (row * h + head) * hd + 2 * i;
        const double x0 = x[at];
        const double x1 = x[at + 1];
        out[at] = x0 * std::cos(angle) - x1 * std::sin(angle);
        out[at + 1] = x0 * std::sin(angle) + x1 * std::cos(angle);
      }
    }
  }
  return out;
}

TEST(RopeKernelTest, RotatesEachHeadsPairsByPositionAndFrequency) {
  constexpr std::size_t kT = 3;
  constexpr std::size_t kH = 2;
  constexpr std::size_t kHd = 8;
  for (const std::int32_t pos : {0, 5, 1000}) {
    const std::vector<float> x = random_floats(kT * kH * kHd, 9);
    Bytes pos_bytes = int32s({pos});
    Bytes xb = bytes_of(x);
    ASSERT_EQ(run("rope", {&pos_bytes, &xb}, {kT, kH, kHd, f32(10000.0F)}), kOk);
    const std::vector<double> expected = reference_rope(x, pos, kT, kH, kHd, 10000.0);
    const std::vector<float> actual = values_of<float>(xb);
    for (std::size_t i = 0; i < actual.size(); ++i) {
      EXPECT_NEAR(actual[i], expected[i], 1e-5 * std::fabs(expected[i]) + 1e-7) << i;
    }
  }
}

TEST(RopeKernelTest, PositionZeroLeavesTheFirstRowUnchanged) {
  const std::vector<float> x = random_floats(4, 2);
  Bytes pos = int32s({0});
  Bytes xb = bytes_of(x);
  ASSERT_EQ(run("rope", {&pos, &xb}, {1, 1, 4, f32(10000.0F)}), kOk);
  EXPECT_EQ(values_of<float>(xb), x);
}

TEST(RopeKernelTest, RejectsANegativePositionAnOddHeadAndABadTheta) {
  Bytes x = bytes_of(random_floats(2ULL * 6, 3));
  const Bytes untouched = x;
  Bytes negative = int32s({-1});
  EXPECT_EQ(run("rope", {&negative, &x}, {2, 1, 6, f32(10000.0F)}), kIndexOutOfRange);
  Bytes pos = int32s({0});
  EXPECT_EQ(run("rope", {&pos, &x}, {2, 2, 3, f32(10000.0F)}), kScalarOutOfDomain);
  for (const float theta : {0.0F, -1.0F, std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity()}) {
    EXPECT_EQ(run("rope", {&pos, &x}, {2, 1, 6, f32(theta)}), kScalarOutOfDomain) << theta;
  }
  EXPECT_EQ(run("rope", {&pos, &x}, {3, 1, 6, f32(10000.0F)}), kSizeMismatch);
  Bytes two_positions = int32s({0, 1});
  EXPECT_EQ(run("rope", {&two_positions, &x}, {2, 1, 6, f32(10000.0F)}), kSizeMismatch);
  EXPECT_EQ(x, untouched);
}

// ---- kv_store ----------------------------------------------------------------------------------

TEST(KvStoreKernelTest, WritesRowsPosToPosPlusTAndNoOthers) {
  constexpr std::size_t kW = 5;
  constexpr std::size_t kS = 6;
  const std::vector<float> src = random_floats(2 * kW, 4);
  Bytes src_bytes = bytes_of(src);
  Bytes pos = int32s({3});
  Bytes cache = floats(kS * kW, kUntouched);
  ASSERT_EQ(run("kv_store", {&src_bytes, &pos, &cache}, {2, kW, kS}), kOk);
  const std::vector<float> actual = values_of<float>(cache);
  for (std::size_t row = 0; row < kS; ++row) {
    for (std::size_t col = 0; col < kW; ++col) {
      const float expected = row == 3 || row == 4 ? src[(row - 3) * kW + col] : kUntouched;
      EXPECT_EQ(actual[row * kW + col], expected) << row << "," << col;
    }
  }
  // The last rows of the cache.
  Bytes last = int32s({4});
  ASSERT_EQ(run("kv_store", {&src_bytes, &last, &cache}, {2, kW, kS}), kOk);
}

TEST(KvStoreKernelTest, APositionOutsideTheCacheFailsAndWritesNothing) {
  Bytes src = bytes_of(random_floats(2ULL * 3, 4));
  Bytes cache = floats(4ULL * 3, kUntouched);
  const Bytes untouched = cache;
  for (const std::int32_t bad : {-1, 3, 4, std::numeric_limits<std::int32_t>::max()}) {
    Bytes pos = int32s({bad});
    EXPECT_EQ(run("kv_store", {&src, &pos, &cache}, {2, 3, 4}), kIndexOutOfRange) << bad;
  }
  EXPECT_EQ(cache, untouched);
  Bytes pos = int32s({0});
  EXPECT_EQ(run("kv_store", {&src, &pos, &cache}, {2, 3, 5}), kSizeMismatch);
  EXPECT_EQ(run("kv_store", {&src, &pos, &cache}, {2, 2, 4}), kSizeMismatch);
  Bytes small_cache = floats(1ULL * 3, kUntouched);
  EXPECT_EQ(run("kv_store", {&src, &pos, &small_cache}, {2, 3, 1}), kSizeMismatch) << "T > S";
}

// ---- attention ---------------------------------------------------------------------------------

struct AttentionShape {
  std::size_t t, h, kvh, hd, s;
  std::int32_t pos;
};

std::vector<double> reference_attention(const std::vector<float> &q, const std::vector<float> &k,
                                        const std::vector<float> &v, const AttentionShape &a) {
  std::vector<double> out(a.t * a.h * a.hd);
  const std::size_t group = a.h / a.kvh;
  for (std::size_t row = 0; row < a.t; ++row) {
    const std::size_t last = static_cast<std::size_t>(a.pos) + row;
    for (std::size_t head = 0; head < a.h; ++head) {
      const std::size_t kv = head / group;
      std::vector<double> scores(last + 1);
      for (std::size_t j = 0; j <= last; ++j) {
        double dot = 0.0;
        for (std::size_t d = 0; d < a.hd; ++d) {
          dot += static_cast<double>(q[(row * a.h + head) * a.hd + d]) *
                 k[(j * a.kvh + kv) * a.hd + d];
        }
        scores[j] = dot / std::sqrt(static_cast<double>(a.hd));
      }
      const double top = *std::max_element(scores.begin(), scores.end());
      double sum = 0.0;
      for (double &score : scores) {
        score = std::exp(score - top);
        sum += score;
      }
      for (std::size_t d = 0; d < a.hd; ++d) {
        double acc = 0.0;
        for (std::size_t j = 0; j <= last; ++j) {
          acc += scores[j] * v[(j * a.kvh + kv) * a.hd + d];
        }
        out[(row * a.h + head) * a.hd + d] = acc / sum;
      }
    }
  }
  return out;
}

void expect_attention_matches(const AttentionShape &a, std::uint32_t seed) {
  const std::vector<float> q = random_floats(a.t * a.h * a.hd, seed);
  const std::vector<float> k = random_floats(a.s * a.kvh * a.hd, seed + 1);
  const std::vector<float> v = random_floats(a.s * a.kvh * a.hd, seed + 2);
  Bytes qb = bytes_of(q);
  Bytes kb = bytes_of(k);
  Bytes vb = bytes_of(v);
  Bytes pos = int32s({a.pos});
  Bytes out = floats(a.t * a.h * a.hd, kUntouched);
  ASSERT_EQ(run("attention", {&qb, &kb, &vb, &pos, &out}, {a.t, a.h, a.kvh, a.hd, a.s}), kOk);
  const std::vector<double> expected = reference_attention(q, k, v, a);
  // Each output averages values in [-1, 1], so an absolute bound of 1e-5 is a relative one.
  const std::vector<float> actual = values_of<float>(out);
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-5 * std::fabs(expected[i]) + 1e-6) << i;
  }
}

TEST(AttentionKernelTest, OneQueryAttendsToEveryCachedPositionUpToItsOwn) {
  expect_attention_matches({1, 4, 4, 8, 16, 0}, 10);
  expect_attention_matches({1, 4, 4, 8, 16, 9}, 11);
  expect_attention_matches({1, 4, 4, 8, 16, 15}, 12);
}

TEST(AttentionKernelTest, SeveralQueryRowsAreCausal) {
  expect_attention_matches({3, 2, 2, 16, 8, 2}, 13);
  expect_attention_matches({8, 2, 2, 16, 8, 0}, 14);
}

TEST(AttentionKernelTest, GroupedQueryHeadsShareTheirKvHead) {
  expect_attention_matches({2, 8, 2, 12, 10, 4}, 15);
  expect_attention_matches({1, 6, 1, 4, 5, 4}, 16);
}

TEST(AttentionKernelTest, LaterCacheRowsDoNotChangeTheResult) {
  const AttentionShape a{1, 2, 1, 4, 6, 2};
  const std::vector<float> q = random_floats(8, 1);
  std::vector<float> k = random_floats(24, 2);
  std::vector<float> v = random_floats(24, 3);
  Bytes qb = bytes_of(q);
  Bytes pos = int32s({a.pos});
  Bytes first = floats(8, kUntouched);
  Bytes second = floats(8, kUntouched);
  Bytes kb = bytes_of(k);
  Bytes vb = bytes_of(v);
  ASSERT_EQ(run("attention", {&qb, &kb, &vb, &pos, &first}, {a.t, a.h, a.kvh, a.hd, a.s}), kOk);
  // Rows 3.. of the one-kv-head cache (hd 4) lie past position 2.
  std::fill(k.begin() + std::ptrdiff_t{12}, k.end(), 1e30F);
  std::fill(v.begin() + std::ptrdiff_t{12}, v.end(), std::numeric_limits<float>::quiet_NaN());
  kb = bytes_of(k);
  vb = bytes_of(v);
  ASSERT_EQ(run("attention", {&qb, &kb, &vb, &pos, &second}, {a.t, a.h, a.kvh, a.hd, a.s}), kOk);
  EXPECT_EQ(first, second);
}

TEST(AttentionKernelTest, APositionPastTheCacheFailsAndWritesNothing) {
  Bytes q = bytes_of(random_floats(2ULL * 2 * 4, 1));
  Bytes k = bytes_of(random_floats(4ULL * 4, 2));
  Bytes v = bytes_of(random_floats(4ULL * 4, 3));
  Bytes out = floats(2ULL * 2 * 4, kUntouched);
  const Bytes untouched = out;
  for (const std::int32_t bad : {-1, 3, 4}) {
    Bytes pos = int32s({bad});
    EXPECT_EQ(run("attention", {&q, &k, &v, &pos, &out}, {2, 2, 1, 4, 4}), kIndexOutOfRange) << bad;
  }
  EXPECT_EQ(out, untouched);
  Bytes pos = int32s({0});
  EXPECT_EQ(run("attention", {&q, &k, &v, &pos, &out}, {2, 2, 1, 4, 5}), kSizeMismatch);
  EXPECT_EQ(run("attention", {&q, &k, &v, &pos, &out}, {2, 2, 1, 4, 3}), kSizeMismatch);
  EXPECT_EQ(run("attention", {&q, &k, &v, &pos, &out}, {2, 2, 2, 4, 2}), kOk) << "T == S";
  EXPECT_EQ(run("attention", {&q, &k, &v, &pos, &out}, {2, 2, 1, 0, 4}), kZeroDimension);
  Bytes k3 = bytes_of(random_floats(4ULL * 3 * 4, 2));
  Bytes v3 = bytes_of(random_floats(4ULL * 3 * 4, 3));
  Bytes q4 = bytes_of(random_floats(2ULL * 4 * 4, 1));
  Bytes out4 = floats(2ULL * 4 * 4, kUntouched);
  EXPECT_EQ(run("attention", {&q4, &k3, &v3, &pos, &out4}, {2, 4, 3, 4, 4}), kScalarOutOfDomain)
      << "KVH does not divide H";
}

TEST(AttentionKernelTest, RejectsAnOutputOverlappingTheCache) {
  std::vector<float> pool(64, 0.5F);
  const std::int32_t zero = 0;
  std::memcpy(&pool[40], &zero, sizeof zero);
  std::vector<void *> addresses = {&pool[0], &pool[8], &pool[24], &pool[40], &pool[20]};
  std::vector<std::uint64_t> sizes = {32, 64, 64, 4, 32};
  std::vector<std::uint64_t> scalars = {1, 2, 1, 4, 4};
  const rrt_kernel_args_t args{5, addresses.data(), sizes.data(), 5, scalars.data(), 0, nullptr};
  EXPECT_EQ(builtin_operand_check("attention")(&args), kOverlappingOutput);
}

}  // namespace
}  // namespace replayrt
