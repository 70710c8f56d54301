#include "memory/host_staging.h"

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "support/allocation_failure_sweep.h"
#include "support/device_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using testing::byte_at;
using testing::expect_refusal;
using testing::kKernel;
using testing::kLaunch;
using testing::kProgram;

constexpr std::uint64_t kSlice = HostStaging::kSliceAlignment;

struct StagingState {
  void *region = nullptr;
  std::uint64_t capacity = 0;
  std::uint64_t used = 0;
  std::uint64_t staged_blocks = 0;
  std::uint64_t alloc_count = 0;
  std::uint64_t free_count = 0;

  static StagingState of(const HostStaging &staging) {
    return {staging.region(),        staging.capacity(),    staging.used(),
            staging.staged_blocks(), staging.alloc_count(), staging.free_count()};
  }
  bool operator==(const StagingState &) const = default;
};

class HostStagingTest : public ::testing::Test {
 protected:
  void *stage(std::uint64_t bytes, GrowthContext context) {
    void *out = nullptr;
    EXPECT_TRUE(staging.stage(bytes, context, &out).is_ok());
    return out;
  }

  testing::DeviceRig rig;
  HostStaging staging{rig.allocator};
};

// ---- program mode ------------------------------------------------------------------------

TEST_F(HostStagingTest, ProgramModeBeginAllocatesNothing) {
  ASSERT_TRUE(staging.begin(64 * kSlice, kProgram).is_ok());
  EXPECT_EQ(StagingState::of(staging), StagingState{});
  EXPECT_EQ(rig.counters().allocation_calls, 0u);
}

TEST_F(HostStagingTest, ProgramModeStagesEachTensorInAFreshBlock) {
  ASSERT_TRUE(
      staging.begin(HostStaging::slice_bytes(1000) + HostStaging::slice_bytes(3000), kProgram)
          .is_ok());
  void *const first = stage(1000, kProgram);
  void *const second = stage(3000, kProgram);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first, second);
  const auto first_block = rig.device.find_allocation(first);
  const auto second_block = rig.device.find_allocation(second);
  ASSERT_TRUE(first_block.has_value());
  ASSERT_TRUE(second_block.has_value());
  EXPECT_EQ(first_block->base, reinterpret_cast<std::uintptr_t>(first));
  EXPECT_GE(first_block->size, 1000u);
  EXPECT_EQ(second_block->base, reinterpret_cast<std::uintptr_t>(second));
  EXPECT_GE(second_block->size, 3000u);
  EXPECT_EQ(staging.staged_blocks(), 2u);
  EXPECT_EQ(staging.alloc_count(), 2u);
  EXPECT_EQ(staging.region(), nullptr);
  EXPECT_EQ(staging.capacity(), 0u);
  EXPECT_EQ(rig.counters().allocation_calls, 2u);
}

TEST_F(HostStagingTest, ProgramModeEndRunFreesEveryStagedBlock) {
  ASSERT_TRUE(staging.begin(2 * kSlice, kProgram).is_ok());
  void *const first = stage(kSlice, kProgram);
  void *const second = stage(kSlice, kProgram);
  staging.end_run();
  EXPECT_EQ(staging.staged_blocks(), 0u);
  EXPECT_EQ(staging.free_count(), 2u);
  EXPECT_FALSE(rig.device.find_allocation(first).has_value());
  EXPECT_FALSE(rig.device.find_allocation(second).has_value());
  EXPECT_EQ(rig.counters().live_bytes, 0u);

  // The next run stages at new addresses.
  ASSERT_TRUE(staging.begin(kSlice, kProgram).is_ok());
  void *const next = stage(kSlice, kProgram);
  EXPECT_NE(next, first);
  EXPECT_NE(next, second);
  staging.end_run();
  EXPECT_EQ(rig.counters().allocation_calls, rig.counters().free_calls);
}

class HostStagingFailureTest : public ::testing::TestWithParam<bool> {
 protected:
  void arm(testing::DeviceRig &rig) const {
    if (GetParam()) {
      rig.faults.throw_on_nth_allocation(1);
    } else {
      rig.faults.fail_nth_allocation(1);
    }
  }
};

TEST_P(HostStagingFailureTest,
       ProgramModeFailedStageReturnsOutOfMemoryAndEndRunFreesEarlierBlocks) {
  testing::DeviceRig rig;
  HostStaging staging(rig.allocator);
  ASSERT_TRUE(staging.begin(3 * kSlice, kProgram).is_ok());
  void *first = nullptr;
  void *second = nullptr;
  ASSERT_TRUE(staging.stage(kSlice, kProgram, &first).is_ok());
  ASSERT_TRUE(staging.stage(kSlice, kProgram, &second).is_ok());
  const StagingState held = StagingState::of(staging);
  arm(rig);
  void *untouched = nullptr;
  const Status failed = staging.stage(kSlice, kProgram, &untouched);
  EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_FALSE(failed.is_capacity_refusal());
  EXPECT_EQ(untouched, nullptr);
  EXPECT_EQ(StagingState::of(staging), held);
  EXPECT_TRUE(rig.device.find_allocation(first).has_value());
  EXPECT_TRUE(rig.device.find_allocation(second).has_value());

  staging.end_run();
  EXPECT_EQ(staging.staged_blocks(), 0u);
  EXPECT_FALSE(rig.device.find_allocation(first).has_value());
  EXPECT_FALSE(rig.device.find_allocation(second).has_value());
  EXPECT_EQ(rig.counters().allocation_calls, rig.counters().free_calls);
  EXPECT_EQ(rig.counters().live_bytes, 0u);
}

TEST_P(HostStagingFailureTest, FailedFirstAllocationLeavesTheRegionEmpty) {
  testing::DeviceRig rig;
  HostStaging staging(rig.allocator);
  arm(rig);
  EXPECT_EQ(staging.begin(2 * kSlice, kKernel).code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(StagingState::of(staging), StagingState{});
  arm(rig);
  EXPECT_EQ(staging.commit(2 * kSlice, kKernel).code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(StagingState::of(staging), StagingState{});
  EXPECT_EQ(rig.counters().allocation_calls, 0u);

  ASSERT_TRUE(staging.begin(2 * kSlice, kKernel).is_ok());
  EXPECT_NE(staging.region(), nullptr);
  EXPECT_EQ(staging.capacity(), 2 * kSlice);
}

INSTANTIATE_TEST_SUITE_P(NullAndThrow, HostStagingFailureTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "Throw" : "Null");
                         });

// ---- kernel mode -------------------------------------------------------------------------

TEST_F(HostStagingTest, KernelModeSlicesTheRegionAtTheSliceAlignment) {
  ASSERT_TRUE(
      staging.begin(HostStaging::slice_bytes(1000) + HostStaging::slice_bytes(3000), kKernel)
          .is_ok());
  void *const region = staging.region();
  ASSERT_NE(region, nullptr);
  EXPECT_EQ(staging.capacity(), 4 * kSlice);
  EXPECT_EQ(stage(1000, kKernel), region);
  EXPECT_EQ(stage(3000, kKernel), byte_at(region, kSlice));
  EXPECT_EQ(staging.used(), 4 * kSlice);
  EXPECT_EQ(staging.staged_blocks(), 0u);
  EXPECT_EQ(rig.counters().allocation_calls, 1u);

  // A slice past what begin() sized is the caller's bug; nothing is allocated for it.
  const StagingState held = StagingState::of(staging);
  void *untouched = nullptr;
  EXPECT_EQ(staging.stage(1, kKernel, &untouched).code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(untouched, nullptr);
  EXPECT_EQ(StagingState::of(staging), held);
  EXPECT_EQ(rig.counters().allocation_calls, 1u);
}

TEST_F(HostStagingTest, KernelModeTakesTheFirstAllocationThenRefusesALargerRun) {
  ASSERT_TRUE(staging.begin(4 * kSlice, kKernel).is_ok());
  EXPECT_EQ(staging.alloc_count(), 1u);
  void *const region = staging.region();
  EXPECT_EQ(stage(kSlice, kKernel), region);
  const StagingState held = StagingState::of(staging);
  const MemoryCounters device_before = rig.counters();

  const Status refused = staging.begin(5 * kSlice, kKernel);
  expect_refusal(refused, GrowthPoint::kHostStaging, 5 * kSlice, 4 * kSlice);
  EXPECT_EQ(StagingState::of(staging), held);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
  EXPECT_TRUE(rig.device.find_allocation(region).has_value());

  // The region stays usable: a run that fits is sliced from the same address.
  ASSERT_TRUE(staging.begin(4 * kSlice, kKernel).is_ok());
  EXPECT_EQ(stage(3 * kSlice, kKernel), region);
  EXPECT_EQ(stage(kSlice, kKernel), byte_at(region, 3 * kSlice));
  staging.end_run();
  EXPECT_EQ(staging.region(), region);
  EXPECT_EQ(staging.capacity(), 4 * kSlice);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

TEST_F(HostStagingTest, KernelModeHoldsOneRegionAcrossRepeatedRunsAndEndRunFreesNothing) {
  ASSERT_TRUE(staging.commit(4 * kSlice, kKernel).is_ok());
  const MemoryCounters device_before = rig.counters();
  for (const std::uint64_t need : {4 * kSlice, kSlice, std::uint64_t{0}, 2 * kSlice}) {
    ASSERT_TRUE(staging.begin(need, kKernel).is_ok());
    for (std::uint64_t used = 0; used < need; used += kSlice) {
      EXPECT_EQ(stage(kSlice, kKernel), byte_at(staging.region(), used));
    }
    staging.end_run();
    EXPECT_EQ(staging.used(), 0u);
  }
  EXPECT_EQ(staging.alloc_count(), 1u);
  EXPECT_EQ(staging.free_count(), 0u);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

TEST_F(HostStagingTest, KernelModeFirstAllocationWhileALaunchIsEncodedIsRefused) {
  expect_refusal(staging.begin(2 * kSlice, kLaunch), GrowthPoint::kLaunchAllocation, 2 * kSlice, 0);
  expect_refusal(staging.commit(2 * kSlice, kLaunch), GrowthPoint::kLaunchAllocation, 2 * kSlice,
                 0);
  void *untouched = nullptr;
  EXPECT_EQ(staging.stage(kSlice, kLaunch, &untouched).code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(untouched, nullptr);
  EXPECT_EQ(StagingState::of(staging), StagingState{});
  EXPECT_EQ(rig.counters().allocation_calls, 0u);
}

TEST_F(HostStagingTest, KernelModeWhileALaunchIsEncodedServesFittingRuns) {
  ASSERT_TRUE(staging.commit(4 * kSlice, kKernel).is_ok());
  const MemoryCounters device_before = rig.counters();
  ASSERT_TRUE(staging.begin(4 * kSlice, kLaunch).is_ok());
  EXPECT_EQ(stage(2 * kSlice, kLaunch), staging.region());
  EXPECT_EQ(stage(2 * kSlice, kLaunch), byte_at(staging.region(), 2 * kSlice));
  const StagingState held = StagingState::of(staging);
  expect_refusal(staging.begin(8 * kSlice, kLaunch), GrowthPoint::kHostStaging, 8 * kSlice,
                 4 * kSlice);
  EXPECT_EQ(StagingState::of(staging), held);
  staging.end_run();
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

// ---- commit ------------------------------------------------------------------------------

TEST_F(HostStagingTest, CommitTakesTheFirstAllocation) {
  ASSERT_TRUE(staging.commit(8 * kSlice, kKernel).is_ok());
  EXPECT_NE(staging.region(), nullptr);
  EXPECT_EQ(staging.capacity(), 8 * kSlice);
  EXPECT_EQ(staging.used(), 0u);
  EXPECT_EQ(staging.alloc_count(), 1u);
  const auto region = rig.device.find_allocation(staging.region());
  ASSERT_TRUE(region.has_value());
  EXPECT_GE(region->size, 8 * kSlice);
  ASSERT_TRUE(staging.begin(8 * kSlice, kKernel).is_ok());
  EXPECT_EQ(rig.counters().allocation_calls, 1u);
}

TEST_F(HostStagingTest, CommitOfZeroDoesNothing) {
  for (const GrowthContext context : {kProgram, kKernel, kLaunch}) {
    ASSERT_TRUE(staging.commit(0, context).is_ok());
  }
  EXPECT_EQ(StagingState::of(staging), StagingState{});
  EXPECT_EQ(rig.counters().allocation_calls, 0u);
}

TEST_F(HostStagingTest, CommitOnACommittedRegionKeepsIt) {
  ASSERT_TRUE(staging.commit(8 * kSlice, kKernel).is_ok());
  const StagingState held = StagingState::of(staging);
  const MemoryCounters device_before = rig.counters();
  for (const std::uint64_t bytes : {8 * kSlice, 2 * kSlice, std::uint64_t{0}}) {
    ASSERT_TRUE(staging.commit(bytes, kKernel).is_ok());
    ASSERT_TRUE(staging.commit(bytes, kLaunch).is_ok());
  }
  ASSERT_TRUE(staging.commit(32 * kSlice, kProgram).is_ok());
  expect_refusal(staging.commit(32 * kSlice, kKernel), GrowthPoint::kHostStaging, 32 * kSlice,
                 8 * kSlice);
  EXPECT_EQ(StagingState::of(staging), held);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

// ---- release -----------------------------------------------------------------------------

TEST_F(HostStagingTest, ReleaseFreesTheRegion) {
  ASSERT_TRUE(staging.commit(4 * kSlice, kKernel).is_ok());
  void *const region = staging.region();
  staging.release();
  EXPECT_EQ(staging.region(), nullptr);
  EXPECT_EQ(staging.capacity(), 0u);
  EXPECT_EQ(staging.used(), 0u);
  EXPECT_EQ(staging.free_count(), 1u);
  EXPECT_FALSE(rig.device.find_allocation(region).has_value());
  EXPECT_EQ(rig.counters().live_bytes, 0u);
  staging.release();
  EXPECT_EQ(staging.free_count(), 1u);
}

TEST_F(HostStagingTest, ReleaseFreesTheStagedBlocks) {
  void *const first = stage(kSlice, kProgram);
  void *const second = stage(2 * kSlice, kProgram);
  staging.release();
  EXPECT_EQ(staging.staged_blocks(), 0u);
  EXPECT_EQ(staging.free_count(), 2u);
  EXPECT_FALSE(rig.device.find_allocation(first).has_value());
  EXPECT_FALSE(rig.device.find_allocation(second).has_value());
  EXPECT_EQ(rig.counters().live_bytes, 0u);
}

TEST(HostStagingLifetimeTest, DestructorReleasesTheRegionAndTheStagedBlocks) {
  testing::DeviceRig rig;
  {
    HostStaging staging(rig.allocator);
    ASSERT_TRUE(staging.commit(4 * kSlice, kKernel).is_ok());
    void *block = nullptr;
    ASSERT_TRUE(staging.stage(kSlice, kProgram, &block).is_ok());
    ASSERT_TRUE(staging.stage(kSlice, kProgram, &block).is_ok());
  }
  EXPECT_EQ(rig.counters().allocation_calls, 3u);
  EXPECT_EQ(rig.counters().free_calls, 3u);
  EXPECT_EQ(rig.counters().live_bytes, 0u);
}

TEST(HostStagingSliceTest, SliceBytesRoundsUpToTheAlignment) {
  EXPECT_EQ(HostStaging::slice_bytes(0), 0u);
  EXPECT_EQ(HostStaging::slice_bytes(1), kSlice);
  EXPECT_EQ(HostStaging::slice_bytes(kSlice), kSlice);
  EXPECT_EQ(HostStaging::slice_bytes(kSlice + 1), 2 * kSlice);
}

// ---- allocation-failure sweep ------------------------------------------------------------

// Two slots' staging, with every address each run has staged so far.
struct Slots {
  explicit Slots(DeviceAllocator allocator)
      : staging{std::make_unique<HostStaging>(allocator),
                std::make_unique<HostStaging>(allocator)} {}

  std::unique_ptr<HostStaging> staging[2];
  std::vector<void *> staged[2];
};

struct PublishedStaging {
  void *region;
  std::uint64_t capacity;
  std::uint64_t used;
  std::vector<void *> staged;
  bool operator==(const PublishedStaging &) const = default;
};

std::vector<PublishedStaging> published_state(const Slots &slots) {
  std::vector<PublishedStaging> state;
  for (int s = 0; s < 2; ++s) {
    const HostStaging &staging = *slots.staging[s];
    state.push_back({staging.region(), staging.capacity(), staging.used(), slots.staged[s]});
  }
  return state;
}

using Step = testing::SweepStep<Slots>;

Step commit(int slot, std::uint64_t bytes, GrowthContext context) {
  return [=](Slots &slots) { return slots.staging[slot]->commit(bytes, context); };
}

Step begin(int slot, std::uint64_t required, GrowthContext context) {
  return [=](Slots &slots) { return slots.staging[slot]->begin(required, context); };
}

Step stage(int slot, std::uint64_t bytes, GrowthContext context) {
  return [=](Slots &slots) {
    void *out = nullptr;
    RRT_RETURN_IF_ERROR(slots.staging[slot]->stage(bytes, context, &out));
    slots.staged[slot].push_back(out);
    return Status::ok();
  };
}

Step end_run(int slot) {
  return [=](Slots &slots) {
    slots.staging[slot]->end_run();
    slots.staged[slot].clear();
    return Status::ok();
  };
}

std::vector<Step> scenario(ExecutionMode mode) {
  const GrowthContext context{mode, false};
  if (mode == ExecutionMode::kProgram) {
    return {
        begin(0, 3 * kSlice, context),
        stage(0, 1000, context),
        stage(0, kSlice, context),
        begin(1, 2 * kSlice, context),
        stage(1, 2 * kSlice, context),
        stage(0, 10, context),
        end_run(0),
        begin(0, kSlice, context),
        stage(0, kSlice, context),
        end_run(1),
        end_run(0),
    };
  }
  return {
      commit(0, 4 * kSlice, context),
      begin(0, 3 * kSlice, context),
      stage(0, 1000, context),
      stage(0, 2 * kSlice, context),
      begin(1, 2 * kSlice, context),
      stage(1, kSlice, context),
      end_run(0),
      begin(0, 4 * kSlice, context),
      stage(0, 4 * kSlice, context),
      end_run(1),
      end_run(0),
  };
}

std::vector<const void *> live_addresses(const std::vector<PublishedStaging> &state) {
  std::vector<const void *> addresses;
  for (const PublishedStaging &slot : state) {
    addresses.insert(addresses.end(), slot.staged.begin(), slot.staged.end());
  }
  return addresses;
}

testing::SweepSubject<Slots, std::vector<PublishedStaging>> slots_subject() {
  return {[](DeviceAllocator allocator) { return std::make_unique<Slots>(allocator); },
          published_state, live_addresses};
}

class HostStagingSweepTest : public ::testing::TestWithParam<testing::SweepParam> {};

TEST_P(HostStagingSweepTest, EveryAllocationPointFailsWithoutSideEffects) {
  const auto [mode, throws] = GetParam();
  testing::sweep_allocation_failures(slots_subject(), scenario(mode), throws, 2);
}

INSTANTIATE_TEST_SUITE_P(ModesAndFailureKinds, HostStagingSweepTest, testing::sweep_params(),
                         testing::sweep_param_name);

}  // namespace
}  // namespace replayrt
