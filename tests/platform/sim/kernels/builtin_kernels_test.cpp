#include "platform/launch/builtin_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "platform/launch/kernel_registry.h"
#include "platform/sim/kernels/builtin_kernels.h"

namespace replayrt {
namespace {

using namespace kernel_result;  // NOLINT(google-build-using-namespace)

constexpr float kUntouched = -7.25F;

using Floats = std::vector<float>;

rrt_kernel_fn find_kernel(std::string_view name) {
  return sim::builtin_host_kernel(name);
}

std::uint64_t f32(float value) {
  return rrt_scalar_from_f32(value);
}

std::uint64_t bytes_of(std::size_t floats) {
  return floats * sizeof(float);
}

// One kernel call: owns its tensors and scalars and passes their addresses and byte sizes,
// which a test may redirect (to alias tensors, misalign them, or misstate their sizes).
// Moving keeps the addresses valid because the tensors' storage moves with them.
struct Call {
  std::vector<Floats> tensors;
  std::vector<std::uint64_t> scalars;
  std::vector<void *> addresses;
  std::vector<std::uint64_t> bytes;

  Call(std::vector<Floats> tensor_values, std::vector<std::uint64_t> scalar_values)
      : tensors(std::move(tensor_values)), scalars(std::move(scalar_values)) {
    for (Floats &tensor : tensors) {
      addresses.push_back(tensor.data());
      bytes.push_back(bytes_of(tensor.size()));
    }
  }
  Call(const Call &) = delete;
  Call &operator=(const Call &) = delete;
  Call(Call &&) = default;
  Call &operator=(Call &&) = default;
  ~Call() = default;

  rrt_kernel_args_t args() const {
    return {static_cast<std::uint32_t>(addresses.size()),
            addresses.data(),
            bytes.data(),
            static_cast<std::uint32_t>(scalars.size()),
            scalars.data(),
            0,
            nullptr};
  }

  int run(std::string_view name) const {
    const rrt_kernel_args_t call_args = args();
    return run_with(name, call_args);
  }

  static int run_with(std::string_view name, const rrt_kernel_args_t &call_args) {
    const rrt_kernel_fn kernel = find_kernel(name);
    if (kernel == nullptr) {
      ADD_FAILURE() << "no built-in kernel named " << name;
      return -1;
    }
    return kernel(&call_args, nullptr);
  }

  Floats &out() { return tensors.back(); }
};

Floats filled(std::size_t count, float value) {
  Floats values(count, value);
  return values;
}

Floats random_floats(std::size_t count, std::uint32_t seed, float low = -4.0F, float high = 4.0F) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  Floats values(count);
  for (float &value : values) {
    value = distribution(engine);
  }
  return values;
}

// int32 values carried in a float tensor's storage, for the ids and positions operands.
Floats int32_floats(const std::vector<std::int32_t> &values) {
  Floats storage(values.size());
  std::memcpy(storage.data(), values.data(), values.size() * sizeof(std::int32_t));
  return storage;
}

bool same_bits(const Floats &first, const Floats &second) {
  return first.size() == second.size() &&
         std::memcmp(first.data(), second.data(), bytes_of(first.size())) == 0;
}

// |actual - expected| <= relative * |expected| + absolute, element by element.
void expect_near_all(const Floats &actual, const std::vector<double> &expected, double relative,
                     double absolute = 0.0) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double tolerance = relative * std::fabs(expected[i]) + absolute;
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "at index " << i;
  }
}

void expect_all_finite(const Floats &values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_TRUE(std::isfinite(values[i])) << "at index " << i << ": " << values[i];
  }
}

// ---- references -----------------------------------------------------------------------------

std::vector<double> reference_matmul(const Floats &a, const Floats &b, std::size_t m, std::size_t k,
                                     std::size_t n) {
  std::vector<double> out(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (std::size_t step = 0; step < k; ++step) {
        sum += static_cast<double>(a[i * k + step]) * b[step * n + j];
      }
      out[i * n + j] = sum;
    }
  }
  return out;
}

std::vector<double> reference_softmax(const Floats &in, std::size_t cols) {
  std::vector<double> out(in.size());
  for (std::size_t start = 0; start < in.size(); start += cols) {
    double row_max = in[start];
    for (std::size_t col = 0; col < cols; ++col) {
      row_max = std::max<double>(row_max, in[start + col]);
    }
    double sum = 0.0;
    for (std::size_t col = 0; col < cols; ++col) {
      sum += std::exp(in[start + col] - row_max);
    }
    for (std::size_t col = 0; col < cols; ++col) {
      out[start + col] = std::exp(in[start + col] - row_max) / sum;
    }
  }
  return out;
}

std::vector<double> reference_rmsnorm(const Floats &in, const Floats &weight, double eps) {
  const std::size_t cols = weight.size();
  std::vector<double> out(in.size());
  for (std::size_t start = 0; start < in.size(); start += cols) {
    double sum = 0.0;
    for (std::size_t col = 0; col < cols; ++col) {
      sum += static_cast<double>(in[start + col]) * in[start + col];
    }
    const double rms = std::sqrt(sum / static_cast<double>(cols) + eps);
    for (std::size_t col = 0; col < cols; ++col) {
      out[start + col] = in[start + col] / rms * weight[col];
    }
  }
  return out;
}

double reference_silu(double x) {
  return x / (1.0 + std::exp(-x));
}

// In long double, so that 1 + tanh keeps its digits for negative inputs.
double reference_gelu(double x) {
  const long double wide = x;
  const long double sqrt_two_over_pi = std::sqrt(2.0L / std::acos(-1.0L));
  return static_cast<double>(
      0.5L * wide * (1.0L + std::tanh(sqrt_two_over_pi * (wide + 0.044715L * wide * wide * wide))));
}

template <typename Fn>
std::vector<double> reference_map(const Floats &in, Fn fn) {
  std::vector<double> out;
  out.reserve(in.size());
  for (const float x : in) {
    out.push_back(fn(x));
  }
  return out;
}

// ---- the table --------------------------------------------------------------------------------

TEST(BuiltinKernelTableTest, ListsEveryKernelInOrderWithItsOperandCounts) {
  struct Expected {
    std::string_view name;
    int num_tensors;
    int num_scalars;
  };
  const std::vector<Expected> expected = {
      {"fill", 1, 1},  {"copy", 2, 0},     {"add", 3, 0},       {"mul", 3, 0},
      {"scale", 2, 1}, {"matmul", 3, 3},   {"softmax", 2, 1},   {"rmsnorm", 3, 2},
      {"silu", 2, 0},  {"gelu", 2, 0},     {"linear", 3, 4},    {"embedding", 3, 4},
      {"rope", 2, 4},  {"kv_store", 3, 3}, {"attention", 5, 5},
  };
  const std::span<const BuiltinKernelSpec> table = builtin_kernel_specs();
  const std::span<const BuiltinLauncher> launchers = sim::builtin_launchers();
  ASSERT_EQ(table.size(), expected.size());
  ASSERT_EQ(launchers.size(), expected.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(std::string_view(table[i].name), expected[i].name) << "at index " << i;
    EXPECT_NE(launchers[i].host_fn, nullptr) << table[i].name;
    EXPECT_NE(table[i].check, nullptr) << table[i].name;
    EXPECT_EQ(table[i].num_tensors, expected[i].num_tensors) << table[i].name;
    EXPECT_EQ(table[i].num_scalars, expected[i].num_scalars) << table[i].name;
  }
}

TEST(BuiltinKernelTableTest, NamesAndFunctionsAreUnique) {
  std::set<std::string> names;
  std::set<rrt_kernel_fn> functions;
  for (const BuiltinKernelSpec &kernel : builtin_kernel_specs()) {
    EXPECT_TRUE(names.insert(kernel.name).second) << kernel.name;
    EXPECT_TRUE(functions.insert(sim::builtin_host_kernel(kernel.name)).second) << kernel.name;
  }
}

TEST(BuiltinKernelTableTest, EveryCallReturnsTheSameTable) {
  EXPECT_EQ(builtin_kernel_specs().data(), builtin_kernel_specs().data());
  EXPECT_EQ(sim::builtin_launchers().data(), sim::builtin_launchers().data());
}

// ---- checks every kernel shares ----------------------------------------------------------------

// A small valid call for each kernel; its tensors are filled with distinct values.
Call valid_call(std::string_view name) {
  if (name == "fill") {
    return Call({filled(5, kUntouched)}, {f32(1.5F)});
  }
  if (name == "copy" || name == "silu" || name == "gelu") {
    return Call({random_floats(5, 1), filled(5, kUntouched)}, {});
  }
  if (name == "add" || name == "mul") {
    return Call({random_floats(5, 1), random_floats(5, 2), filled(5, kUntouched)}, {});
  }
  if (name == "scale") {
    return Call({random_floats(5, 1), filled(5, kUntouched)}, {f32(2.0F)});
  }
  if (name == "matmul") {
    return Call({random_floats(6, 1), random_floats(12, 2), filled(8, kUntouched)}, {2, 3, 4});
  }
  if (name == "softmax") {
    return Call({random_floats(6, 1), filled(6, kUntouched)}, {3});
  }
  if (name == "rmsnorm") {
    return Call({random_floats(6, 1), random_floats(3, 2), filled(6, kUntouched)}, {3, f32(1e-5F)});
  }
  if (name == "linear") {
    return Call({random_floats(6, 1), random_floats(9, 2), filled(6, kUntouched)},
                {2, 3, 3, RRT_DTYPE_F32});
  }
  if (name == "embedding") {
    return Call({random_floats(12, 1), int32_floats({2, 0}), filled(6, kUntouched)},
                {4, 3, 2, RRT_DTYPE_F32});
  }
  if (name == "rope") {
    return Call({int32_floats({3}), random_floats(8, 1)}, {2, 1, 4, f32(10000.0F)});
  }
  if (name == "kv_store") {
    return Call({random_floats(6, 1), int32_floats({1}), filled(12, kUntouched)}, {2, 3, 4});
  }
  if (name == "attention") {
    return Call({random_floats(16, 1), random_floats(12, 2), random_floats(12, 3),
                 int32_floats({1}), filled(16, kUntouched)},
                {2, 2, 1, 4, 3});
  }
  ADD_FAILURE() << "no valid call for " << name;
  return {{}, {}};
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const BuiltinKernelSpec &kernel : builtin_kernel_specs()) {
    names.emplace_back(kernel.name);
  }
  return names;
}

// Runs a call that must fail and checks that no tensor changed.
void expect_rejected(const Call &call, std::string_view name, const rrt_kernel_args_t &args,
                     int code) {
  const std::vector<Floats> before = call.tensors;
  EXPECT_EQ(Call::run_with(name, args), code);
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(same_bits(call.tensors[i], before[i])) << name << " wrote tensor " << i;
  }
}

void expect_rejected(const Call &call, std::string_view name, int code) {
  expect_rejected(call, name, call.args(), code);
}

class EveryKernelTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string_view name() const { return GetParam(); }
};

TEST_P(EveryKernelTest, ValidCallSucceedsAndWritesItsOutput) {
  Call call = valid_call(name());
  const std::vector<Floats> before = call.tensors;
  ASSERT_EQ(call.run(name()), kOk);
  EXPECT_FALSE(same_bits(call.out(), before.back()));
  for (std::size_t i = 0; i + 1 < before.size(); ++i) {
    EXPECT_TRUE(same_bits(call.tensors[i], before[i])) << "input " << i << " changed";
  }
}

TEST_P(EveryKernelTest, RejectsWrongOperandCounts) {
  const Call call = valid_call(name());
  const rrt_kernel_args_t valid = call.args();

  rrt_kernel_args_t args = valid;
  args.num_tensors = valid.num_tensors - 1;
  expect_rejected(call, name(), args, kWrongOperandCount);
  args.num_tensors = valid.num_tensors + 1;
  expect_rejected(call, name(), args, kWrongOperandCount);

  args = valid;
  args.num_scalars = valid.num_scalars + 1;
  expect_rejected(call, name(), args, kWrongOperandCount);
  if (valid.num_scalars > 0) {
    args.num_scalars = valid.num_scalars - 1;
    expect_rejected(call, name(), args, kWrongOperandCount);
    args = valid;
    args.scalars = nullptr;
    expect_rejected(call, name(), args, kWrongOperandCount);
  }

  args = valid;
  args.tensors = nullptr;
  expect_rejected(call, name(), args, kWrongOperandCount);
  args = valid;
  args.tensor_bytes = nullptr;
  expect_rejected(call, name(), args, kWrongOperandCount);

  EXPECT_EQ(find_kernel(name())(nullptr, nullptr), kWrongOperandCount);
}

TEST_P(EveryKernelTest, RejectsByteSizesThatAreNotWholeFloats) {
  Call call = valid_call(name());
  for (std::size_t i = 0; i < call.bytes.size(); ++i) {
    const std::uint64_t valid = call.bytes[i];
    for (const std::uint64_t wrong : {valid - 1, valid - 2, valid - 3, std::uint64_t{1}}) {
      call.bytes[i] = wrong;
      SCOPED_TRACE("tensor " + std::to_string(i) + " of " + std::to_string(wrong) + " bytes");
      expect_rejected(call, name(), kBadByteSize);
    }
    call.bytes[i] = valid;
  }
}

TEST_P(EveryKernelTest, RejectsZeroSizedTensors) {
  Call call = valid_call(name());
  for (std::size_t i = 0; i < call.bytes.size(); ++i) {
    const std::uint64_t valid = call.bytes[i];
    call.bytes[i] = 0;
    SCOPED_TRACE("tensor " + std::to_string(i));
    expect_rejected(call, name(), kBadByteSize);
    call.bytes[i] = valid;
  }
}

TEST_P(EveryKernelTest, RejectsNullAndMisalignedAddresses) {
  Call call = valid_call(name());
  for (std::size_t i = 0; i < call.addresses.size(); ++i) {
    void *const valid_address = call.addresses[i];
    const std::uint64_t valid_bytes = call.bytes[i];
    SCOPED_TRACE("tensor " + std::to_string(i));

    call.addresses[i] = nullptr;
    expect_rejected(call, name(), kUnusableAddress);

    // Shifted by two bytes and shortened by a float, the range stays inside the tensor; a
    // one-element tensor (a position) keeps its size and reads two bytes of its neighbour.
    call.addresses[i] = static_cast<std::byte *>(valid_address) + 2;
    if (valid_bytes > sizeof(float)) {
      call.bytes[i] = valid_bytes - sizeof(float);
    }
    expect_rejected(call, name(), kUnusableAddress);

    call.addresses[i] = valid_address;
    call.bytes[i] = valid_bytes;
  }
}

TEST_P(EveryKernelTest, UserPointerIsIgnored) {
  Call with_user = valid_call(name());
  Call without_user = valid_call(name());
  int user_value = 42;
  const rrt_kernel_args_t args = with_user.args();
  ASSERT_EQ(find_kernel(name())(&args, &user_value), kOk);
  ASSERT_EQ(without_user.run(name()), kOk);
  EXPECT_TRUE(same_bits(with_user.out(), without_user.out()));
  EXPECT_EQ(user_value, 42);
}

TEST_P(EveryKernelTest, RepeatedRunsGiveIdenticalBits) {
  Call first = valid_call(name());
  Call second = valid_call(name());
  ASSERT_EQ(first.run(name()), kOk);
  ASSERT_EQ(second.run(name()), kOk);
  EXPECT_TRUE(same_bits(first.out(), second.out()));
}

INSTANTIATE_TEST_SUITE_P(BuiltinKernels, EveryKernelTest, ::testing::ValuesIn(kernel_names()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

// ---- size relations and aliasing of the elementwise kernels -------------------------------------

class ElementwiseKernelTest : public EveryKernelTest {};

TEST_P(ElementwiseKernelTest, RejectsTensorsOfDifferentSizes) {
  Call call = valid_call(name());
  for (std::size_t i = 0; i < call.bytes.size(); ++i) {
    const std::uint64_t valid = call.bytes[i];
    SCOPED_TRACE("tensor " + std::to_string(i));
    call.bytes[i] = valid - sizeof(float);
    expect_rejected(call, name(), kSizeMismatch);
    call.bytes[i] = valid;
  }
}

TEST_P(ElementwiseKernelTest, InPlaceMatchesOutOfPlace) {
  const Call reference = [&] {
    Call call = valid_call(name());
    EXPECT_EQ(call.run(name()), kOk);
    return call;
  }();
  const std::size_t out_index = reference.tensors.size() - 1;
  for (std::size_t input_index = 0; input_index < out_index; ++input_index) {
    SCOPED_TRACE("output aliases input " + std::to_string(input_index));
    Call call = valid_call(name());
    call.addresses[out_index] = call.addresses[input_index];
    ASSERT_EQ(call.run(name()), kOk);
    EXPECT_TRUE(same_bits(call.tensors[input_index], reference.tensors[out_index]));
  }
}

TEST_P(ElementwiseKernelTest, RejectsAnOutputThatPartlyOverlapsAnInput) {
  Call call = valid_call(name());
  const std::size_t out_index = call.tensors.size() - 1;
  const std::size_t count = call.tensors[0].size();
  // One buffer a float longer than the tensors: the input at its start, the output one float in.
  call.tensors.push_back(random_floats(count + 1, 9));
  auto *const shared = call.tensors.back().data();
  for (std::size_t input_index = 0; input_index < out_index; ++input_index) {
    SCOPED_TRACE("output overlaps input " + std::to_string(input_index));
    void *const input_address = call.addresses[input_index];
    call.addresses[input_index] = shared;
    call.addresses[out_index] = shared + 1;
    expect_rejected(call, name(), kOverlappingOutput);
    call.addresses[out_index] = shared;
    call.addresses[input_index] = shared + 1;
    expect_rejected(call, name(), kOverlappingOutput);
    call.addresses[input_index] = input_address;
    call.addresses[out_index] = call.tensors[out_index].data();
  }
}

INSTANTIATE_TEST_SUITE_P(BuiltinKernels, ElementwiseKernelTest,
                         ::testing::Values("copy", "add", "mul", "scale", "silu", "gelu"),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

TEST(ElementwiseAliasingTest, InputsMayOverlapEachOther) {
  Floats shared = random_floats(6, 3);
  Call call({Floats(5), Floats(5), filled(5, kUntouched)}, {});
  call.addresses[0] = shared.data();
  call.addresses[1] = shared.data() + 1;
  ASSERT_EQ(call.run("add"), kOk);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(call.out()[i], shared[i] + shared[i + 1]);
  }
}

TEST(ElementwiseAliasingTest, AllThreeOperandsMayBeOneTensor) {
  Call call({Floats{1.0F, -2.0F, 3.5F}, Floats(3), Floats(3)}, {});
  call.addresses[1] = call.addresses[0];
  call.addresses[2] = call.addresses[0];
  ASSERT_EQ(call.run("mul"), kOk);
  EXPECT_EQ(call.tensors[0], (Floats{1.0F, 4.0F, 12.25F}));
}

// ---- fill, copy, add, mul, scale ------------------------------------------------------------

TEST(FillKernelTest, WritesTheValueEverywhere) {
  Call call({filled(1000, kUntouched)}, {f32(-3.5F)});
  ASSERT_EQ(call.run("fill"), kOk);
  EXPECT_EQ(call.out(), filled(1000, -3.5F));
}

TEST(FillKernelTest, IgnoresTheHighBitsOfTheScalar) {
  Call call({filled(4, kUntouched)}, {f32(0.25F) | 0xFFFF'FFFF'0000'0000ULL});
  ASSERT_EQ(call.run("fill"), kOk);
  EXPECT_EQ(call.out(), filled(4, 0.25F));
}

TEST(FillKernelTest, WritesOnlyTheStatedBytes) {
  Call call({filled(8, kUntouched)}, {f32(1.0F)});
  call.bytes[0] = bytes_of(5);
  ASSERT_EQ(call.run("fill"), kOk);
  EXPECT_EQ(call.out(), (Floats{1, 1, 1, 1, 1, kUntouched, kUntouched, kUntouched}));
}

TEST(CopyKernelTest, CopiesEveryFloat) {
  const Floats in = random_floats(1001, 4);
  Call call({in, filled(1001, kUntouched)}, {});
  ASSERT_EQ(call.run("copy"), kOk);
  EXPECT_TRUE(same_bits(call.out(), in));
}

TEST(CopyKernelTest, CopiesBitPatternsExactly) {
  const Floats in = {std::numeric_limits<float>::quiet_NaN(), -0.0F,
                     std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::denorm_min()};
  Call call({in, filled(4, kUntouched)}, {});
  ASSERT_EQ(call.run("copy"), kOk);
  EXPECT_TRUE(same_bits(call.out(), in));
}

TEST(AddKernelTest, AddsElementwise) {
  Call call({Floats{1.0F, 2.5F, -3.0F}, Floats{0.5F, -2.5F, 10.0F}, filled(3, kUntouched)}, {});
  ASSERT_EQ(call.run("add"), kOk);
  EXPECT_EQ(call.out(), (Floats{1.5F, 0.0F, 7.0F}));
}

TEST(AddKernelTest, MatchesFloatAdditionOnALargeInput) {
  const Floats a = random_floats(4099, 5);
  const Floats b = random_floats(4099, 6);
  Call call({a, b, filled(4099, kUntouched)}, {});
  ASSERT_EQ(call.run("add"), kOk);
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(call.out()[i], a[i] + b[i]) << "at index " << i;
  }
}

TEST(MulKernelTest, MultipliesElementwise) {
  Call call({Floats{1.0F, 2.5F, -3.0F}, Floats{0.5F, -2.0F, 10.0F}, filled(3, kUntouched)}, {});
  ASSERT_EQ(call.run("mul"), kOk);
  EXPECT_EQ(call.out(), (Floats{0.5F, -5.0F, -30.0F}));
}

TEST(MulKernelTest, MatchesFloatMultiplicationOnALargeInput) {
  const Floats a = random_floats(4099, 7);
  const Floats b = random_floats(4099, 8);
  Call call({a, b, filled(4099, kUntouched)}, {});
  ASSERT_EQ(call.run("mul"), kOk);
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(call.out()[i], a[i] * b[i]) << "at index " << i;
  }
}

TEST(ScaleKernelTest, MultipliesByTheScalar) {
  Call call({Floats{1.0F, -2.0F, 0.25F}, filled(3, kUntouched)}, {f32(-4.0F)});
  ASSERT_EQ(call.run("scale"), kOk);
  EXPECT_EQ(call.out(), (Floats{-4.0F, 8.0F, -1.0F}));
}

TEST(ScaleKernelTest, MatchesFloatMultiplicationOnALargeInput) {
  const Floats in = random_floats(4099, 9);
  Call call({in, filled(4099, kUntouched)}, {f32(0.3F)});
  ASSERT_EQ(call.run("scale"), kOk);
  for (std::size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(call.out()[i], in[i] * 0.3F) << "at index " << i;
  }
}

TEST(ScaleKernelTest, ScalesInPlace) {
  Call call({Floats{1.0F, 2.0F, 3.0F}, Floats(3)}, {f32(0.5F)});
  call.addresses[1] = call.addresses[0];
  ASSERT_EQ(call.run("scale"), kOk);
  EXPECT_EQ(call.tensors[0], (Floats{0.5F, 1.0F, 1.5F}));
}

// ---- matmul -----------------------------------------------------------------------------------

TEST(MatmulKernelTest, MultipliesSmallMatrices) {
  // [1 2 3; 4 5 6] @ [7 8; 9 10; 11 12] = [58 64; 139 154]
  Call call({Floats{1, 2, 3, 4, 5, 6}, Floats{7, 8, 9, 10, 11, 12}, filled(4, kUntouched)},
            {2, 3, 2});
  ASSERT_EQ(call.run("matmul"), kOk);
  EXPECT_EQ(call.out(), (Floats{58, 64, 139, 154}));
}

TEST(MatmulKernelTest, HandlesVectorShapes) {
  // Row times column, then column times row.
  Call dot({Floats{1, 2, 3}, Floats{4, 5, 6}, filled(1, kUntouched)}, {1, 3, 1});
  ASSERT_EQ(dot.run("matmul"), kOk);
  EXPECT_EQ(dot.out(), (Floats{32}));
  Call outer({Floats{1, 2}, Floats{3, 4, 5}, filled(6, kUntouched)}, {2, 1, 3});
  ASSERT_EQ(outer.run("matmul"), kOk);
  EXPECT_EQ(outer.out(), (Floats{3, 4, 5, 6, 8, 10}));
}

TEST(MatmulKernelTest, OverwritesWhateverTheOutputHeld) {
  // 5 x 5 identity times a 5 x 9 matrix covers full and partial blocks.
  Floats identity(25, 0.0F);
  for (std::size_t i = 0; i < 5; ++i) {
    identity[i * 5 + i] = 1.0F;
  }
  const Floats b = random_floats(45, 23);
  Call call({identity, b, filled(45, 1e30F)}, {5, 5, 9});
  ASSERT_EQ(call.run("matmul"), kOk);
  EXPECT_EQ(call.out(), b);
}

void expect_matmul_matches_reference(std::size_t m, std::size_t k, std::size_t n) {
  SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
  const Floats a = random_floats(m * k, 11, -1.0F, 1.0F);
  const Floats b = random_floats(k * n, 12, -1.0F, 1.0F);
  Call call({a, b, filled(m * n, kUntouched)}, {m, k, n});
  ASSERT_EQ(call.run("matmul"), kOk);
  // Float accumulation of k products of magnitude below 1.
  expect_near_all(call.out(), reference_matmul(a, b, m, k, n), 1e-5, 1e-6 * static_cast<double>(k));
}

TEST(MatmulKernelTest, MatchesTheReferenceOnRandomMatrices) {
  // Shapes with and without partial row and column blocks.
  expect_matmul_matches_reference(7, 13, 9);
  expect_matmul_matches_reference(1, 64, 33);
  expect_matmul_matches_reference(5, 3, 17);
  expect_matmul_matches_reference(8, 1, 16);
  expect_matmul_matches_reference(3, 7, 5);
  expect_matmul_matches_reference(64, 256, 256);
}

// Each element sums its products over k in one fixed order, so computing a single row or a
// single column of the product gives the same bits as computing the whole product.
TEST(MatmulKernelTest, EachElementIsTheSameWhicheverPartOfTheProductIsComputed) {
  constexpr std::size_t kM = 9;
  constexpr std::size_t kK = 21;
  constexpr std::size_t kN = 19;
  const Floats a = random_floats(kM * kK, 21);
  const Floats b = random_floats(kK * kN, 22);
  Call whole({a, b, filled(kM * kN, kUntouched)}, {kM, kK, kN});
  ASSERT_EQ(whole.run("matmul"), kOk);

  for (std::size_t row = 0; row < kM; ++row) {
    const Floats a_row(a.begin() + static_cast<std::ptrdiff_t>(row * kK),
                       a.begin() + static_cast<std::ptrdiff_t>((row + 1) * kK));
    Call single_row({a_row, b, filled(kN, kUntouched)}, {1, kK, kN});
    ASSERT_EQ(single_row.run("matmul"), kOk);
    for (std::size_t col = 0; col < kN; ++col) {
      EXPECT_EQ(single_row.out()[col], whole.out()[row * kN + col]) << row << ", " << col;
    }
  }
  for (std::size_t col = 0; col < kN; ++col) {
    Floats b_col(kK);
    for (std::size_t step = 0; step < kK; ++step) {
      b_col[step] = b[step * kN + col];
    }
    Call single_col({a, b_col, filled(kM, kUntouched)}, {kM, kK, 1});
    ASSERT_EQ(single_col.run("matmul"), kOk);
    for (std::size_t row = 0; row < kM; ++row) {
      EXPECT_EQ(single_col.out()[row], whole.out()[row * kN + col]) << row << ", " << col;
    }
  }
}

TEST(MatmulKernelTest, AcceptsOneTensorAsBothInputs) {
  Call call({Floats{1, 2, 3, 4}, Floats(4), filled(4, kUntouched)}, {2, 2, 2});
  call.addresses[1] = call.addresses[0];
  ASSERT_EQ(call.run("matmul"), kOk);
  EXPECT_EQ(call.out(), (Floats{7, 10, 15, 22}));
}

TEST(MatmulKernelTest, RejectsAZeroDimension) {
  for (std::size_t zero_index = 0; zero_index < 3; ++zero_index) {
    Call call = valid_call("matmul");
    call.scalars[zero_index] = 0;
    SCOPED_TRACE("dimension " + std::to_string(zero_index));
    expect_rejected(call, "matmul", kZeroDimension);
  }
}

TEST(MatmulKernelTest, RejectsSizesThatDisagreeWithTheDimensions) {
  // The valid call is M=2, K=3, N=4 over 6, 12 and 8 floats.
  for (std::size_t i = 0; i < 3; ++i) {
    for (const int delta : {-1, 1}) {
      Call call = valid_call("matmul");
      if (delta > 0) {
        call.tensors[i].push_back(kUntouched);
        call.addresses[i] = call.tensors[i].data();
      }
      call.bytes[i] = bytes_of(call.tensors[i].size() - (delta < 0 ? 1 : 0));
      SCOPED_TRACE("tensor " + std::to_string(i) + " off by " + std::to_string(delta));
      expect_rejected(call, "matmul", kSizeMismatch);
    }
  }
  const std::vector<std::vector<std::uint64_t>> wrong_dimensions = {
      {3, 2, 4},          {2, 4, 3},          {1, 6, 4},
      {2, 3, 2},          {4, 3, 4},          {6, 1, 8},
      {1ULL << 63, 3, 4}, {2, 1ULL << 62, 4}, {1ULL << 32, 1ULL << 32, 1ULL << 32},
  };
  for (const std::vector<std::uint64_t> &dimensions : wrong_dimensions) {
    Call call = valid_call("matmul");
    call.scalars = dimensions;
    SCOPED_TRACE(std::to_string(dimensions[0]) + "x" + std::to_string(dimensions[1]) + "x" +
                 std::to_string(dimensions[2]));
    expect_rejected(call, "matmul", kSizeMismatch);
  }
}

TEST(MatmulKernelTest, RejectsAnOutputThatAliasesAnInput) {
  for (std::size_t input_index = 0; input_index < 2; ++input_index) {
    SCOPED_TRACE("input " + std::to_string(input_index));
    Call exact({random_floats(4, 1), random_floats(4, 2), filled(4, kUntouched)}, {2, 2, 2});
    exact.addresses[2] = exact.addresses[input_index];
    expect_rejected(exact, "matmul", kOverlappingOutput);

    Call partial(
        {random_floats(4, 1), random_floats(4, 2), filled(4, kUntouched), random_floats(7, 3)},
        {2, 2, 2});
    partial.addresses.pop_back();
    partial.bytes.pop_back();
    float *const shared = partial.tensors[3].data();
    partial.addresses[input_index] = shared;
    partial.addresses[2] = shared + 3;
    expect_rejected(partial, "matmul", kOverlappingOutput);
    partial.addresses[input_index] = shared + 3;
    partial.addresses[2] = shared;
    expect_rejected(partial, "matmul", kOverlappingOutput);
  }
}

TEST(MatmulKernelTest, AcceptsAnOutputRightAfterAnInput) {
  Floats shared = {1, 2, 3, 4, kUntouched, kUntouched, kUntouched, kUntouched};
  Call call({Floats(4), Floats{1, 0, 0, 1}, Floats(4)}, {2, 2, 2});
  call.addresses[0] = shared.data();
  call.addresses[2] = shared.data() + 4;
  ASSERT_EQ(call.run("matmul"), kOk);
  EXPECT_EQ(shared, (Floats{1, 2, 3, 4, 1, 2, 3, 4}));
}

// ---- softmax ----------------------------------------------------------------------------------

TEST(SoftmaxKernelTest, NormalizesEachRow) {
  Call call({Floats{1, 2, 3, 0, 0, 0}, filled(6, kUntouched)}, {3});
  ASSERT_EQ(call.run("softmax"), kOk);
  const double e1 = std::exp(1.0);
  const double e2 = std::exp(2.0);
  const double e3 = std::exp(3.0);
  const double sum = e1 + e2 + e3;
  expect_near_all(call.out(), {e1 / sum, e2 / sum, e3 / sum, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-6);
}

TEST(SoftmaxKernelTest, IsStableForLargeInputs) {
  Call call({Floats{1000, 1001, -1000, -1001, 88, 89, 3e38F, 3e38F}, filled(8, kUntouched)}, {2});
  ASSERT_EQ(call.run("softmax"), kOk);
  const double low = 1.0 / (1.0 + std::exp(1.0));
  const double high = 1.0 - low;
  expect_near_all(call.out(), {low, high, high, low, low, high, 0.5, 0.5}, 1e-6);
}

TEST(SoftmaxKernelTest, MatchesTheReferenceAndRowsSumToOne) {
  constexpr std::size_t kCols = 37;
  constexpr std::size_t kRows = 29;
  const Floats in = random_floats(kRows * kCols, 13, -20.0F, 20.0F);
  Call call({in, filled(in.size(), kUntouched)}, {kCols});
  ASSERT_EQ(call.run("softmax"), kOk);
  expect_near_all(call.out(), reference_softmax(in, kCols), 1e-5, 1e-12);
  for (std::size_t row = 0; row < kRows; ++row) {
    double sum = 0.0;
    for (std::size_t col = 0; col < kCols; ++col) {
      sum += call.out()[row * kCols + col];
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << row;
  }
}

TEST(SoftmaxKernelTest, OneColumnGivesOnes) {
  Call call({Floats{-5, 0, 1e30F}, filled(3, kUntouched)}, {1});
  ASSERT_EQ(call.run("softmax"), kOk);
  EXPECT_EQ(call.out(), (Floats{1, 1, 1}));
}

TEST(SoftmaxKernelTest, RunsInPlace) {
  const Floats in = random_floats(12, 14);
  Call out_of_place({in, filled(12, kUntouched)}, {4});
  ASSERT_EQ(out_of_place.run("softmax"), kOk);
  Call in_place({in, Floats(12)}, {4});
  in_place.addresses[1] = in_place.addresses[0];
  ASSERT_EQ(in_place.run("softmax"), kOk);
  EXPECT_TRUE(same_bits(in_place.tensors[0], out_of_place.out()));
}

TEST(SoftmaxKernelTest, RejectsColumnsThatDoNotTileTheTensor) {
  for (const std::uint64_t cols : {std::uint64_t{4}, std::uint64_t{5}, std::uint64_t{7},
                                   std::uint64_t{12}, std::uint64_t{1} << 63}) {
    Call call = valid_call("softmax");  // 6 floats
    call.scalars[0] = cols;
    SCOPED_TRACE("cols " + std::to_string(cols));
    expect_rejected(call, "softmax", kSizeMismatch);
  }
}

TEST(SoftmaxKernelTest, RejectsUnequalSizesAndZeroColumns) {
  Call shorter_output = valid_call("softmax");
  shorter_output.bytes[1] = bytes_of(3);
  expect_rejected(shorter_output, "softmax", kSizeMismatch);

  Call shorter_input = valid_call("softmax");
  shorter_input.bytes[0] = bytes_of(3);
  expect_rejected(shorter_input, "softmax", kSizeMismatch);

  Call zero_cols = valid_call("softmax");
  zero_cols.scalars[0] = 0;
  expect_rejected(zero_cols, "softmax", kZeroDimension);
}

TEST(SoftmaxKernelTest, RejectsAnOutputThatPartlyOverlapsTheInput) {
  Call call = valid_call("softmax");
  Floats shared = random_floats(9, 15);
  call.addresses[0] = shared.data();
  call.addresses[1] = shared.data() + 3;
  const Floats before = shared;
  EXPECT_EQ(call.run("softmax"), kOverlappingOutput);
  EXPECT_TRUE(same_bits(shared, before));
}

// ---- rmsnorm ----------------------------------------------------------------------------------

TEST(RmsnormKernelTest, NormalizesEachRowAndAppliesTheWeight) {
  // Row [3 4]: mean of squares 12.5. Row [1 1]: mean of squares 1.
  Call call({Floats{3, 4, 1, 1}, Floats{1, 2}, filled(4, kUntouched)}, {2, f32(0.0F)});
  ASSERT_EQ(call.run("rmsnorm"), kOk);
  const double rms = std::sqrt(12.5);
  expect_near_all(call.out(), {3 / rms, 8 / rms, 1, 2}, 1e-6);
}

TEST(RmsnormKernelTest, AddsEpsToTheMeanOfSquares) {
  // Row [1 1 1 1] with eps 3: 1 / sqrt(1 + 3) = 0.5. A zero row stays zero.
  Call call({Floats{1, 1, 1, 1, 0, 0, 0, 0}, Floats{1, 1, 1, 2}, filled(8, kUntouched)},
            {4, f32(3.0F)});
  ASSERT_EQ(call.run("rmsnorm"), kOk);
  EXPECT_EQ(call.out(), (Floats{0.5F, 0.5F, 0.5F, 1.0F, 0, 0, 0, 0}));
}

TEST(RmsnormKernelTest, MatchesTheReferenceOnARandomInput) {
  constexpr std::size_t kCols = 64;
  constexpr std::size_t kRows = 17;
  const Floats in = random_floats(kRows * kCols, 16);
  const Floats weight = random_floats(kCols, 17, 0.5F, 1.5F);
  constexpr float kEps = 1e-5F;
  Call call({in, weight, filled(in.size(), kUntouched)}, {kCols, f32(kEps)});
  ASSERT_EQ(call.run("rmsnorm"), kOk);
  expect_near_all(call.out(), reference_rmsnorm(in, weight, kEps), 1e-5);
}

TEST(RmsnormKernelTest, StaysFiniteForHugeAndTinyRows) {
  Call call({Floats{1e30F, -3e38F, 1e-30F, 2e-30F}, Floats{1, 1}, filled(4, kUntouched)},
            {2, f32(0.0F)});
  ASSERT_EQ(call.run("rmsnorm"), kOk);
  expect_all_finite(call.out());
  expect_near_all(call.out(), reference_rmsnorm({1e30F, -3e38F, 1e-30F, 2e-30F}, Floats{1, 1}, 0.0),
                  1e-5);
}

TEST(RmsnormKernelTest, RunsInPlaceAndWithTheOutputOnTheWeight) {
  const Floats in = {1, -2, 3};
  const Floats weight = {0.5F, 1, 2};
  Call reference({in, weight, filled(3, kUntouched)}, {3, f32(1e-3F)});
  ASSERT_EQ(reference.run("rmsnorm"), kOk);

  Call over_input({in, weight, Floats(3)}, {3, f32(1e-3F)});
  over_input.addresses[2] = over_input.addresses[0];
  ASSERT_EQ(over_input.run("rmsnorm"), kOk);
  EXPECT_TRUE(same_bits(over_input.tensors[0], reference.out()));

  Call over_weight({in, weight, Floats(3)}, {3, f32(1e-3F)});
  over_weight.addresses[2] = over_weight.addresses[1];
  ASSERT_EQ(over_weight.run("rmsnorm"), kOk);
  EXPECT_TRUE(same_bits(over_weight.tensors[1], reference.out()));
}

TEST(RmsnormKernelTest, RejectsAnOutputThatPartlyOverlapsTheWeight) {
  // Two rows of three: the output's first row sits on the weight, the second runs past it.
  Call call = valid_call("rmsnorm");
  call.tensors[1].resize(6, kUntouched);
  call.addresses[1] = call.tensors[1].data();
  call.addresses[2] = call.tensors[1].data();
  expect_rejected(call, "rmsnorm", kOverlappingOutput);
}

TEST(RmsnormKernelTest, RejectsAWeightOfTheWrongSize) {
  for (const std::size_t weight_floats : {std::size_t{2}, std::size_t{6}}) {
    Call call = valid_call("rmsnorm");  // 2 rows of 3
    call.tensors[1].resize(weight_floats, 1.0F);
    call.addresses[1] = call.tensors[1].data();
    call.bytes[1] = bytes_of(weight_floats);
    SCOPED_TRACE("weight of " + std::to_string(weight_floats));
    expect_rejected(call, "rmsnorm", kSizeMismatch);
  }
}

TEST(RmsnormKernelTest, RejectsBadColumnsAndUnequalSizes) {
  Call zero_cols = valid_call("rmsnorm");
  zero_cols.scalars[0] = 0;
  expect_rejected(zero_cols, "rmsnorm", kZeroDimension);

  Call untiled = valid_call("rmsnorm");
  untiled.scalars[0] = 4;
  expect_rejected(untiled, "rmsnorm", kSizeMismatch);

  Call shorter_output = valid_call("rmsnorm");
  shorter_output.bytes[2] = bytes_of(3);
  expect_rejected(shorter_output, "rmsnorm", kSizeMismatch);

  Call shorter_input = valid_call("rmsnorm");
  shorter_input.bytes[0] = bytes_of(3);
  expect_rejected(shorter_input, "rmsnorm", kSizeMismatch);
}

TEST(RmsnormKernelTest, RejectsAnEpsOutsideItsDomain) {
  for (const float eps :
       {-1e-5F, -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::quiet_NaN()}) {
    Call call = valid_call("rmsnorm");
    call.scalars[1] = f32(eps);
    SCOPED_TRACE("eps " + std::to_string(eps));
    expect_rejected(call, "rmsnorm", kScalarOutOfDomain);
  }
}

// ---- silu and gelu ----------------------------------------------------------------------------

TEST(SiluKernelTest, MatchesKnownValues) {
  Call call({Floats{0, 1, -1, 2}, filled(4, kUntouched)}, {});
  ASSERT_EQ(call.run("silu"), kOk);
  expect_near_all(call.out(), {0, 0.7310585786300049, -0.2689414213699951, 1.7615941559557649},
                  1e-6);
}

TEST(SiluKernelTest, MatchesTheReferenceOnARandomInput) {
  const Floats in = random_floats(2048, 18, -30.0F, 30.0F);
  Call call({in, filled(in.size(), kUntouched)}, {});
  ASSERT_EQ(call.run("silu"), kOk);
  expect_near_all(call.out(), reference_map(in, reference_silu), 1e-5, 1e-30);
}

TEST(SiluKernelTest, StaysFiniteForLargeInputs) {
  const float max = std::numeric_limits<float>::max();
  Call call({Floats{1000, -1000, 100, -100, max, -max}, filled(6, kUntouched)}, {});
  ASSERT_EQ(call.run("silu"), kOk);
  expect_all_finite(call.out());
  EXPECT_EQ(call.out()[0], 1000.0F);
  EXPECT_EQ(call.out()[1], 0.0F);
  EXPECT_EQ(call.out()[2], 100.0F);
  EXPECT_EQ(call.out()[4], max);
  EXPECT_EQ(call.out()[5], 0.0F);
}

TEST(GeluKernelTest, MatchesKnownValues) {
  Call call({Floats{0, 1, -1, 3}, filled(4, kUntouched)}, {});
  ASSERT_EQ(call.run("gelu"), kOk);
  expect_near_all(call.out(), {0, reference_gelu(1.0), reference_gelu(-1.0), reference_gelu(3.0)},
                  1e-6);
  EXPECT_NEAR(call.out()[1], 0.8411920, 1e-6);
  EXPECT_NEAR(call.out()[2], -0.1588080, 1e-6);
}

TEST(GeluKernelTest, MatchesTheReferenceOnARandomInput) {
  const Floats in = random_floats(2048, 19, -6.0F, 6.0F);
  Call call({in, filled(in.size(), kUntouched)}, {});
  ASSERT_EQ(call.run("gelu"), kOk);
  expect_near_all(call.out(), reference_map(in, reference_gelu), 1e-5, 1e-12);
}

TEST(GeluKernelTest, StaysFiniteForLargeInputs) {
  const float max = std::numeric_limits<float>::max();
  Call call({Floats{10, -10, 1000, -1000, 1e13F, -1e13F, max, -max}, filled(8, kUntouched)}, {});
  ASSERT_EQ(call.run("gelu"), kOk);
  expect_all_finite(call.out());
  EXPECT_EQ(call.out()[0], 10.0F);
  EXPECT_NEAR(call.out()[1], 0.0F, 1e-30);
  EXPECT_EQ(call.out()[2], 1000.0F);
  EXPECT_EQ(call.out()[3], 0.0F);
  EXPECT_EQ(call.out()[4], 1e13F);
  EXPECT_EQ(call.out()[5], 0.0F);
  EXPECT_EQ(call.out()[6], max);
  EXPECT_EQ(call.out()[7], 0.0F);
}

// ---- concurrency ------------------------------------------------------------------------------

TEST(BuiltinKernelConcurrencyTest, ConcurrentCallsOnDifferentOperandsMatchSerialOnes) {
  constexpr std::size_t kThreads = 4;
  constexpr std::size_t kSide = 48;
  std::vector<Call> serial;
  std::vector<Call> parallel;
  for (std::size_t t = 0; t < kThreads; ++t) {
    const auto seed = static_cast<std::uint32_t>(100 + t);
    for (std::vector<Call> *calls : {&serial, &parallel}) {
      calls->emplace_back(std::vector<Floats>{random_floats(kSide * kSide, seed),
                                              random_floats(kSide * kSide, seed + 50),
                                              filled(kSide * kSide, kUntouched)},
                          std::vector<std::uint64_t>{kSide, kSide, kSide});
    }
  }
  for (const Call &call : serial) {
    ASSERT_EQ(call.run("matmul"), kOk);
  }
  std::vector<int> results(kThreads, kOk);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&parallel, &results, t] {
      for (int repeat = 0; repeat < 8; ++repeat) {
        if (const int code = parallel[t].run("matmul"); code != kOk) {
          results[t] = code;
        }
      }
    });
  }
  for (std::thread &thread : threads) {
    thread.join();
  }
  for (std::size_t t = 0; t < kThreads; ++t) {
    EXPECT_EQ(results[t], kOk);
    EXPECT_TRUE(same_bits(parallel[t].out(), serial[t].out())) << "thread " << t;
  }
}

// A fresh registry holds every built-in under its name, with ids in table order (its
// constructor aborts rather than leave one out).
TEST(BuiltinKernelsTest, AFreshRegistryHoldsEveryBuiltinInTableOrder) {
  const KernelRegistry registry(sim::builtin_launchers());
  const std::span<const BuiltinKernelSpec> builtins = builtin_kernel_specs();
  ASSERT_EQ(registry.size(), static_cast<int>(builtins.size()));
  for (std::size_t i = 0; i < builtins.size(); ++i) {
    std::int32_t id = -1;
    ASSERT_TRUE(registry.find(builtins[i].name, &id).is_ok()) << builtins[i].name;
    EXPECT_EQ(id, static_cast<std::int32_t>(i)) << builtins[i].name;
    EXPECT_EQ(registry.entry(id).host_fn, sim::builtin_host_kernel(builtins[i].name))
        << builtins[i].name;
    EXPECT_EQ(registry.entry(id).check_operands, builtins[i].check) << builtins[i].name;
  }
}

}  // namespace
}  // namespace replayrt
