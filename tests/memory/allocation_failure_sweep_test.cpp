// Every allocation of a multi-step scenario over two banks and two retained slots fails in
// turn, by a null return and by a throw. The failing step must return OUT_OF_MEMORY and leave
// every published base and remembered size as it was; after a retry the scenario completes,
// and after teardown every allocation has been freed.
#include <functional>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "memory/arena_bank.h"
#include "memory/retained_buffer.h"
#include "support/device_rig.h"

namespace replayrt {
namespace {

constexpr std::uint64_t kKiB = 1024;

struct MemoryCore {
  explicit MemoryCore(DeviceAllocator allocator)
      : banks{std::make_unique<ArenaBank>(allocator), std::make_unique<ArenaBank>(allocator)},
        slots{std::make_unique<RetainedBuffer>(allocator),
              std::make_unique<RetainedBuffer>(allocator)} {}

  std::unique_ptr<ArenaBank> banks[2];
  std::unique_ptr<RetainedBuffer> slots[2];
};

// Every published address and remembered size.
std::vector<std::uintptr_t> published_state(const MemoryCore &core) {
  std::vector<std::uintptr_t> state;
  for (const auto &bank : core.banks) {
    for (int r = 0; r < kBankRegionCount; ++r) {
      state.push_back(reinterpret_cast<std::uintptr_t>(bank->base(static_cast<BankRegion>(r))));
      state.push_back(bank->cached_size(static_cast<BankRegion>(r)));
    }
  }
  for (const auto &slot : core.slots) {
    state.push_back(reinterpret_cast<std::uintptr_t>(slot->address()));
    state.push_back(slot->capacity());
  }
  return state;
}

using Step = std::function<Status(MemoryCore &)>;

Step commit(int bank, BankRequest request, GrowthContext context) {
  return [=](MemoryCore &core) { return core.banks[bank]->commit(request, context).status; };
}

Step begin(int slot, std::uint64_t required, GrowthContext context) {
  return [=](MemoryCore &core) { return core.slots[slot]->begin(required, context); };
}

std::vector<Step> scenario(ExecutionMode mode) {
  const GrowthContext context{mode, false};
  if (mode == ExecutionMode::kProgram) {
    return {
        commit(0, {64 * kKiB, 8 * kKiB, 16 * kKiB}, context),
        begin(0, 2 * kKiB, context),
        commit(1, {64 * kKiB, 8 * kKiB, 16 * kKiB}, context),
        begin(1, kKiB, context),
        commit(0, {128 * kKiB, 8 * kKiB, 32 * kKiB}, context),
        begin(0, 4 * kKiB, context),
        commit(0, {128 * kKiB, 0, 32 * kKiB}, context),
        commit(1, {32 * kKiB, 16 * kKiB, 16 * kKiB}, context),
    };
  }
  return {
      commit(0, {64 * kKiB, 0, 16 * kKiB}, context),        begin(0, 2 * kKiB, context),
      commit(0, {64 * kKiB, 8 * kKiB, 16 * kKiB}, context), begin(1, kKiB, context),
      commit(1, {64 * kKiB, 8 * kKiB, 16 * kKiB}, context), begin(0, 2 * kKiB, context),
  };
}

std::uint64_t allocations_of_a_clean_run(ExecutionMode mode) {
  testing::DeviceRig rig;
  MemoryCore core(rig.allocator);
  for (const Step &step : scenario(mode)) {
    EXPECT_TRUE(step(core).is_ok());
  }
  return rig.faults.allocation_attempts();
}

class AllocationFailureSweepTest
    : public ::testing::TestWithParam<std::tuple<ExecutionMode, bool>> {};

TEST_P(AllocationFailureSweepTest, EveryAllocationPointFailsWithoutSideEffects) {
  const auto [mode, throws] = GetParam();
  const std::uint64_t points = allocations_of_a_clean_run(mode);
  ASSERT_GE(points, 6u);
  for (std::uint64_t n = 1; n <= points; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing allocation " << n << " of " << points);
    testing::DeviceRig rig;
    {
      MemoryCore core(rig.allocator);
      if (throws) {
        rig.faults.throw_on_nth_allocation(n);
      } else {
        rig.faults.fail_nth_allocation(n);
      }
      int failed_steps = 0;
      for (const Step &step : scenario(mode)) {
        const std::vector<std::uintptr_t> before = published_state(core);
        const Status status = step(core);
        if (status.is_ok()) {
          continue;
        }
        ++failed_steps;
        EXPECT_EQ(status.code(), RRT_ERR_OUT_OF_MEMORY) << status.message();
        EXPECT_EQ(published_state(core), before);
        ASSERT_TRUE(step(core).is_ok()) << "retry after the device recovered";
      }
      EXPECT_EQ(failed_steps, 1);
      EXPECT_EQ(rig.faults.injected_failures(), 1u);
    }
    EXPECT_EQ(rig.counters().allocation_calls, rig.counters().free_calls);
    EXPECT_EQ(rig.counters().live_bytes, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    ModesAndFailureKinds, AllocationFailureSweepTest,
    ::testing::Combine(::testing::Values(ExecutionMode::kProgram, ExecutionMode::kKernel),
                       ::testing::Bool()),
    [](const ::testing::TestParamInfo<AllocationFailureSweepTest::ParamType> &info) {
      const bool kernel = std::get<0>(info.param) == ExecutionMode::kKernel;
      return std::string(kernel ? "Kernel" : "Program") +
             (std::get<1>(info.param) ? "Throw" : "Null");
    });

}  // namespace
}  // namespace replayrt
