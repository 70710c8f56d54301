// How the simulator's built-ins divide a task into parts (HostKernelParts): the part counts,
// that the parts cover every unit once, and that every dividing built-in computes the same bits
// when its parts run one at a time in any order as when it runs whole.
#include "platform/sim/kernels/kernel_parts.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "platform/launch/builtin_kernels.h"
#include "platform/launch/float_formats.h"
#include "platform/sim/kernels/builtin_kernels.h"

namespace replayrt {
namespace {

using sim_kernels::kMaxParts;
using sim_kernels::kMinDividedWork;
using sim_kernels::kPartWork;
using sim_kernels::part_count;
using sim_kernels::saturating_product;
using sim_kernels::units_of_parts;

TEST(KernelPartsTest, SmallWorkOrASingleUnitRunsWhole) {
  EXPECT_EQ(part_count(1000, kMinDividedWork - 1), 1u);
  EXPECT_EQ(part_count(1, kMinDividedWork * 100), 1u);
  EXPECT_EQ(part_count(0, kMinDividedWork * 100), 1u);
}

TEST(KernelPartsTest, LargeWorkDividesBySizeUpToTheUnitsAndTheCap) {
  EXPECT_EQ(part_count(1000, kMinDividedWork), kMinDividedWork / kPartWork);
  EXPECT_EQ(part_count(3, kMinDividedWork * 100), 3u);
  EXPECT_EQ(part_count(100000, ~std::uint64_t{0}), kMaxParts);
}

TEST(KernelPartsTest, SaturatingProductStopsAtTheLargestValue) {
  EXPECT_EQ(saturating_product(3, 5), 15u);
  EXPECT_EQ(saturating_product(std::uint64_t{1} << 40, std::uint64_t{1} << 40), ~std::uint64_t{0});
}

TEST(KernelPartsTest, PartsCoverEveryUnitOnceInOrder) {
  for (const std::uint64_t units : {2u, 7u, 64u, 1000u, 32001u}) {
    for (std::uint64_t count = 1; count <= std::min<std::uint64_t>(units, kMaxParts); ++count) {
      std::size_t next = 0;
      for (std::uint64_t part = 0; part < count; ++part) {
        const sim_kernels::UnitRange range = units_of_parts(units, part, part + 1, count);
        ASSERT_EQ(range.begin, next) << units << " units, " << count << " parts";
        ASSERT_GT(range.end, range.begin) << "part " << part << " of " << count << " is empty";
        next = range.end;
      }
      ASSERT_EQ(next, units);
      const sim_kernels::UnitRange all = units_of_parts(units, 0, count, count);
      EXPECT_EQ(all.begin, 0u);
      EXPECT_EQ(all.end, units);
    }
  }
}

// One built-in task's operands in host memory: its tensors (filled with values from a fixed
// seed) and scalars.
struct Task {
  std::string name;
  std::vector<std::vector<std::byte>> tensors;
  std::vector<std::uint64_t> scalars;
  std::vector<void *> addresses = {};
  std::vector<std::uint64_t> sizes = {};

  rrt_kernel_args_t args() {
    addresses.clear();
    sizes.clear();
    for (std::vector<std::byte> &tensor : tensors) {
      addresses.push_back(tensor.data());
      sizes.push_back(tensor.size());
    }
    return rrt_kernel_args_t{static_cast<std::uint32_t>(addresses.size()),
                             addresses.data(),
                             sizes.data(),
                             static_cast<std::uint32_t>(scalars.size()),
                             scalars.data(),
                             0,
                             nullptr};
  }
};

std::vector<std::byte> random_floats(std::size_t count, std::mt19937 &rng) {
  std::uniform_real_distribution<float> values(-1.0F, 1.0F);
  std::vector<std::byte> bytes(count * sizeof(float));
  for (std::size_t i = 0; i < count; ++i) {
    const float value = values(rng);
    std::memcpy(bytes.data() + i * sizeof(float), &value, sizeof value);
  }
  return bytes;
}

std::vector<std::byte> random_halves(std::size_t count, std::mt19937 &rng) {
  std::uniform_int_distribution<int> exponents(0x30, 0x3b);
  std::uniform_int_distribution<int> low(0, 0xff);
  std::vector<std::byte> bytes(count * 2);
  for (std::size_t i = 0; i < bytes.size(); i += 2) {
    bytes[i] = static_cast<std::byte>(low(rng));
    bytes[i + 1] = static_cast<std::byte>(exponents(rng));
  }
  return bytes;
}

std::vector<std::byte> int32s(std::initializer_list<std::int32_t> values) {
  std::vector<std::byte> bytes(values.size() * sizeof(std::int32_t));
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

// A task of every dividing built-in, large enough to divide.
std::vector<Task> dividing_tasks() {
  std::mt19937 rng(20261206U);
  std::vector<Task> tasks;
  {
    const std::uint64_t m = 37;
    const std::uint64_t k = 96;
    const std::uint64_t n = 75;
    tasks.push_back(
        {"matmul",
         {random_floats(m * k, rng), random_floats(k * n, rng), std::vector<std::byte>(m * n * 4)},
         {m, k, n}});
  }
  {
    const std::uint64_t rows = 300;
    const std::uint64_t cols = 129;
    tasks.push_back({"softmax",
                     {random_floats(rows * cols, rng), std::vector<std::byte>(rows * cols * 4)},
                     {cols}});
    tasks.push_back({"rmsnorm",
                     {random_floats(rows * cols * 2, rng), random_floats(cols, rng),
                      std::vector<std::byte>(rows * cols * 2 * 4)},
                     {cols, static_cast<std::uint64_t>(rrt_scalar_from_f32(1e-5F))}});
  }
  {
    const std::uint64_t m = 3;
    const std::uint64_t k = 200;
    const std::uint64_t n = 300;
    tasks.push_back(
        {"linear",
         {random_floats(m * k, rng), random_floats(n * k, rng), std::vector<std::byte>(m * n * 4)},
         {m, k, n, RRT_DTYPE_F32}});
    tasks.push_back(
        {"linear",
         {random_floats(m * k, rng), random_halves(n * k, rng), std::vector<std::byte>(m * n * 4)},
         {m, k, n, RRT_DTYPE_F16}});
  }
  {
    const std::uint64_t t = 3;
    const std::uint64_t h = 8;
    const std::uint64_t kvh = 4;
    const std::uint64_t hd = 64;
    const std::uint64_t s = 200;
    tasks.push_back(
        {"attention",
         {random_floats(t * h * hd, rng), random_floats(s * kvh * hd, rng),
          random_floats(s * kvh * hd, rng), int32s({150}), std::vector<std::byte>(t * h * hd * 4)},
         {t, h, kvh, hd, s}});
  }
  return tasks;
}

const BuiltinLauncher &launcher_of(std::string_view name) {
  const std::span<const BuiltinKernelSpec> specs = builtin_kernel_specs();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name == name) {
      return sim::builtin_launchers()[i];
    }
  }
  ADD_FAILURE() << "no built-in " << name;
  return sim::builtin_launchers()[0];
}

TEST(DividedBuiltinsTest, TheDividingBuiltinsAreTheOnesWithLargeWork) {
  std::vector<std::string> dividing;
  const std::span<const BuiltinKernelSpec> specs = builtin_kernel_specs();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (sim::builtin_launchers()[i].host_parts.divides()) {
      dividing.emplace_back(specs[i].name);
    }
  }
  EXPECT_EQ(dividing,
            (std::vector<std::string>{"matmul", "softmax", "rmsnorm", "linear", "attention"}));
}

TEST(DividedBuiltinsTest, PartsInAnyOrderWriteTheBitsOfTheWholeKernel) {
  std::mt19937 rng(7);
  for (Task &task : dividing_tasks()) {
    SCOPED_TRACE(task.name + " with scalars " + std::to_string(task.scalars.back()));
    const BuiltinLauncher &launcher = launcher_of(task.name);
    const rrt_kernel_args_t args = task.args();
    const std::uint64_t count = launcher.host_parts.count(&args);
    ASSERT_GT(count, 1u) << "the task is large enough to divide";
    ASSERT_EQ(launcher.host_fn(&args, nullptr), 0);
    const std::vector<std::byte> whole = task.tensors.back();
    std::fill(task.tensors.back().begin(), task.tensors.back().end(), std::byte{0x7f});
    std::vector<std::uint64_t> order(count);
    for (std::uint64_t part = 0; part < count; ++part) {
      order[part] = part;
    }
    std::shuffle(order.begin(), order.end(), rng);
    for (const std::uint64_t part : order) {
      launcher.host_parts.run(&args, part, part + 1, count);
    }
    EXPECT_TRUE(task.tensors.back() == whole) << "the parts wrote other bits than the kernel";
    std::fill(task.tensors.back().begin(), task.tensors.back().end(), std::byte{0x7f});
    launcher.host_parts.run(&args, 0, count, count);
    EXPECT_TRUE(task.tensors.back() == whole) << "all parts in one call wrote other bits";
  }
}

TEST(DividedBuiltinsTest, InvalidOperandsRunWholeSoTheKernelReportsThem) {
  for (Task &task : dividing_tasks()) {
    SCOPED_TRACE(task.name);
    task.tensors.back().resize(task.tensors.back().size() - 4);
    const rrt_kernel_args_t args = task.args();
    const BuiltinLauncher &launcher = launcher_of(task.name);
    EXPECT_EQ(launcher.host_parts.count(&args), 1u);
    EXPECT_NE(launcher.host_fn(&args, nullptr), 0);
  }
}

TEST(DividedBuiltinsTest, AnAttentionPositionOutsideTheCacheRunsWhole) {
  for (Task &task : dividing_tasks()) {
    if (task.name != "attention") {
      continue;
    }
    task.tensors[3] = int32s({199});
    const rrt_kernel_args_t args = task.args();
    const BuiltinLauncher &launcher = launcher_of(task.name);
    EXPECT_EQ(launcher.host_parts.count(&args), 1u);
    EXPECT_EQ(launcher.host_fn(&args, nullptr), kernel_result::kIndexOutOfRange);
  }
}

TEST(DividedBuiltinsTest, SmallTasksRunWhole) {
  std::mt19937 rng(3);
  Task small{"linear",
             {random_floats(8, rng), random_floats(64, rng), std::vector<std::byte>(32)},
             {1, 8, 8, RRT_DTYPE_F32}};
  const rrt_kernel_args_t args = small.args();
  EXPECT_EQ(launcher_of("linear").host_parts.count(&args), 1u);
}

}  // namespace
}  // namespace replayrt
