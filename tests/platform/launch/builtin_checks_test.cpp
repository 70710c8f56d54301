// The host-side built-in checks agree with the CPU kernels' own checks, case by case.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "platform/launch/builtin_kernels.h"
#include "platform/launch/kernel_registry.h"
#include "platform/sim/kernels/builtin_kernels.h"

namespace replayrt {
namespace {

struct Case {
  std::vector<void *> tensors;
  std::vector<std::uint64_t> bytes;
  std::vector<std::uint64_t> scalars;
  std::string what;
};

// Valid operands for each built-in over `pool` (floats), 4 rows of 8 where rows matter.
Case valid_case(const std::string &name, std::vector<float> &pool) {
  float *p = pool.data();
  const std::uint64_t b32 = 32 * sizeof(float);
  if (name == "fill") {
    return {{p}, {b32}, {rrt_scalar_from_f32(2.0F)}, "valid"};
  }
  if (name == "add" || name == "mul") {
    return {{p, p + 32, p + 64}, {b32, b32, b32}, {}, "valid"};
  }
  if (name == "scale") {
    return {{p, p + 32}, {b32, b32}, {rrt_scalar_from_f32(3.0F)}, "valid"};
  }
  if (name == "matmul") {
    return {{p, p + 32, p + 64}, {4ULL * 8 * 4, 8ULL * 4 * 4, 4ULL * 4 * 4}, {4, 8, 4}, "valid"};
  }
  if (name == "softmax") {
    return {{p, p + 32}, {b32, b32}, {8}, "valid"};
  }
  if (name == "rmsnorm") {
    return {{p, p + 32, p + 64}, {b32, 8ULL * 4, b32}, {8, rrt_scalar_from_f32(1e-5F)}, "valid"};
  }
  // The decoder built-ins: int32 ids and positions written into the pool.
  const auto put_i32 = [&](std::size_t at, std::int32_t value) {
    std::memcpy(&pool[at], &value, sizeof value);
  };
  if (name == "linear") {
    return {{p, p + 32, p + 64}, {b32, b32, 16ULL * 4}, {4, 8, 4, RRT_DTYPE_F32}, "valid"};
  }
  if (name == "embedding") {
    put_i32(32, 3);
    put_i32(33, 0);
    return {{p, p + 32, p + 64}, {b32, 2ULL * 4, 16ULL * 4}, {4, 8, 2, RRT_DTYPE_F32}, "valid"};
  }
  if (name == "rope") {
    put_i32(0, 2);
    return {{p, p + 32}, {4, b32}, {2, 2, 8, rrt_scalar_from_f32(10000.0F)}, "valid"};
  }
  if (name == "kv_store") {
    put_i32(32, 1);
    return {{p, p + 32, p + 64}, {16ULL * 4, 4, b32}, {2, 8, 4}, "valid"};
  }
  if (name == "attention") {
    put_i32(96, 2);
    return {{p, p + 32, p + 64, p + 96, p + 128},
            {8ULL * 4, 16ULL * 4, 16ULL * 4, 4, 8ULL * 4},
            {1, 2, 1, 4, 4},
            "valid"};
  }
  return {{p, p + 32}, {b32, b32}, {}, "valid"};  // copy, silu, gelu
}

std::vector<Case> cases_for(const std::string &name, std::vector<float> &pool) {
  std::vector<Case> cases;
  const Case valid = valid_case(name, pool);
  cases.push_back(valid);
  Case c = valid;
  c.tensors.push_back(pool.data() + 96);
  c.bytes.push_back(4);
  c.what = "one tensor too many";
  cases.push_back(c);
  c = valid;
  c.scalars.push_back(1);
  c.what = "one scalar too many";
  cases.push_back(c);
  for (std::size_t t = 0; t < valid.tensors.size(); ++t) {
    c = valid;
    c.bytes[t] = 0;
    c.what = "zero bytes at " + std::to_string(t);
    cases.push_back(c);
    c = valid;
    c.bytes[t] += 2;
    c.what = "odd bytes at " + std::to_string(t);
    cases.push_back(c);
    c = valid;
    c.tensors[t] = nullptr;
    c.what = "null tensor " + std::to_string(t);
    cases.push_back(c);
    c = valid;
    c.tensors[t] = reinterpret_cast<char *>(c.tensors[t]) + 1;
    c.what = "misaligned tensor " + std::to_string(t);
    cases.push_back(c);
    c = valid;
    c.bytes[t] += 4;
    c.what = "one float more at " + std::to_string(t);
    cases.push_back(c);
    if (t + 1 == valid.tensors.size() && t > 0) {
      c = valid;
      c.tensors[t] = reinterpret_cast<float *>(c.tensors[0]) + 1;
      c.what = "output overlapping input 0";
      cases.push_back(c);
      c = valid;
      c.tensors[t] = c.tensors[0];
      c.bytes[t] = c.bytes[0];
      c.what = "output identical to input 0";
      cases.push_back(c);
    }
  }
  for (std::size_t s = 0; s < valid.scalars.size(); ++s) {
    c = valid;
    c.scalars[s] = 0;
    c.what = "zero scalar " + std::to_string(s);
    cases.push_back(c);
  }
  if (name == "rmsnorm") {
    for (const float eps :
         {-1.0F, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
      c = valid;
      c.scalars[1] = rrt_scalar_from_f32(eps);
      c.what = "eps " + std::to_string(eps);
      cases.push_back(c);
    }
  }
  return cases;
}

TEST(BuiltinChecksTest, TheHostCheckReturnsWhatTheCpuKernelReturns) {
  for (const BuiltinKernelSpec &kernel : builtin_kernel_specs()) {
    const auto check = builtin_operand_check(kernel.name);
    ASSERT_NE(check, nullptr) << kernel.name;
    std::vector<float> pool(256, 0.5F);
    for (const Case &c : cases_for(kernel.name, pool)) {
      const rrt_kernel_args_t args{static_cast<std::uint32_t>(c.tensors.size()),
                                   c.tensors.data(),
                                   c.bytes.data(),
                                   static_cast<std::uint32_t>(c.scalars.size()),
                                   c.scalars.data(),
                                   0,
                                   nullptr};
      const int host = check(&args);
      const int cpu = sim::builtin_host_kernel(kernel.name)(&args, nullptr);
      EXPECT_EQ(host, cpu) << kernel.name << ": " << c.what;
      if (c.what == "valid") {
        EXPECT_EQ(host, 0) << kernel.name;
      }
    }
    EXPECT_EQ(check(nullptr), kernel_result::kWrongOperandCount) << kernel.name;
  }
}

TEST(BuiltinChecksTest, TheRegistryGivesEveryBuiltinItsHostCheckAndTheBackendsLauncher) {
  const KernelRegistry kernels(sim::builtin_launchers());
  const KernelRegistry declared({});
  for (const BuiltinKernelSpec &builtin : builtin_kernel_specs()) {
    std::int32_t id = -1;
    ASSERT_TRUE(kernels.find(builtin.name, &id).is_ok());
    EXPECT_EQ(kernels.entry(id).check_operands, builtin_operand_check(builtin.name));
    EXPECT_EQ(kernels.entry(id).host_fn, sim::builtin_host_kernel(builtin.name));
    EXPECT_EQ(kernels.entry(id).native_launch, nullptr) << builtin.name;
    ASSERT_TRUE(declared.find(builtin.name, &id).is_ok());
    EXPECT_FALSE(declared.entry(id).has_launcher()) << "declared only, for sizing";
    EXPECT_EQ(declared.entry(id).check_operands, builtin_operand_check(builtin.name));
  }
}

TEST(BuiltinChecksTest, UnknownNamesHaveNoCheck) {
  EXPECT_EQ(builtin_operand_check("nope"), nullptr);
}

}  // namespace
}  // namespace replayrt
