#include "memory/arena_bank.h"

#include <array>
#include <vector>

#include <gtest/gtest.h>

#include "support/allocation_failure_sweep.h"
#include "support/device_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using testing::kKernel;
using testing::kProgram;

constexpr std::uint64_t kKiB = 1024;
constexpr BankRequest kPlan{.gm_heap = 64 * kKiB, .gm_sm = 8 * kKiB, .runtime_pool = 16 * kKiB};

// Everything a caller can observe about a bank.
struct BankState {
  BankBases bases;
  std::array<bool, kBankRegionCount> committed{};
  std::array<std::uint64_t, kBankRegionCount> cached{};
  std::uint64_t alloc_count = 0;
  std::uint64_t free_count = 0;

  static BankState of(const ArenaBank &bank) {
    BankState state;
    state.bases = bank.bases();
    for (int i = 0; i < kBankRegionCount; ++i) {
      state.committed[i] = bank.is_committed(static_cast<BankRegion>(i));
      state.cached[i] = bank.cached_size(static_cast<BankRegion>(i));
    }
    state.alloc_count = bank.alloc_count();
    state.free_count = bank.free_count();
    return state;
  }

  bool operator==(const BankState &) const = default;
};

class ArenaBankTest : public ::testing::Test {
 protected:
  testing::DeviceRig rig;
  ArenaBank bank{rig.allocator};
};

// ---- kernel mode ------------------------------------------------------------------------

TEST_F(ArenaBankTest, KernelFirstCommitIsPermitted) {
  const BankCommitOutcome outcome = bank.commit(kPlan, kKernel);
  ASSERT_TRUE(outcome.status.is_ok()) << outcome.status.message();
  EXPECT_TRUE(outcome.bases_changed);
  for (int i = 0; i < kBankRegionCount; ++i) {
    const auto region = static_cast<BankRegion>(i);
    EXPECT_TRUE(bank.is_committed(region));
    EXPECT_EQ(bank.cached_size(region), kPlan.bytes(region));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(bank.base(region)) % 1024, 0u);
  }
  EXPECT_EQ(bank.alloc_count(), 3u);
  EXPECT_EQ(bank.free_count(), 0u);
}

TEST_F(ArenaBankTest, KernelRepeatedCommitsMoveNoBaseAndCallNoAllocator) {
  ASSERT_TRUE(bank.commit(kPlan, kKernel).status.is_ok());
  const BankState held = BankState::of(bank);
  const MemoryCounters device_before = rig.counters();
  for (int i = 0; i < 8; ++i) {
    const BankCommitOutcome outcome = bank.commit(kPlan, kKernel);
    ASSERT_TRUE(outcome.status.is_ok());
    EXPECT_FALSE(outcome.bases_changed);
    EXPECT_EQ(BankState::of(bank), held);
  }
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

TEST_F(ArenaBankTest, KernelExactAndSmallerRequestsAreServedInPlace) {
  ASSERT_TRUE(bank.commit(kPlan, kKernel).status.is_ok());
  const BankState held = BankState::of(bank);
  const BankRequest smaller{kPlan.gm_heap - 1, kPlan.gm_sm - 1, kPlan.runtime_pool - 1};
  for (const BankRequest &request : {kPlan, smaller, kPlan}) {
    const BankCommitOutcome outcome = bank.commit(request, kKernel);
    ASSERT_TRUE(outcome.status.is_ok());
    EXPECT_FALSE(outcome.bases_changed);
    // Remembered sizes never shrink.
    EXPECT_EQ(BankState::of(bank), held);
  }
}

TEST_F(ArenaBankTest, KernelOneByteOverCapacityIsRefusedAndChangesNothing) {
  ASSERT_TRUE(bank.commit(kPlan, kKernel).status.is_ok());
  const BankState held = BankState::of(bank);
  const MemoryCounters device_before = rig.counters();

  BankRequest over = kPlan;
  over.gm_heap += 1;
  const BankCommitOutcome refused = bank.commit(over, kKernel);
  EXPECT_EQ(refused.status.code(), RRT_ERR_INTERNAL);
  EXPECT_TRUE(refused.status.is_capacity_refusal());
  EXPECT_EQ(refused.status.growth_point(), GrowthPoint::kArenaGmHeap);
  EXPECT_EQ(refused.status.requested_bytes(), over.gm_heap);
  EXPECT_EQ(refused.status.capacity_bytes(), kPlan.gm_heap);
  EXPECT_FALSE(refused.bases_changed);
  EXPECT_EQ(BankState::of(bank), held);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);

  // The held plan stays usable: the same layout commits again with nothing moving.
  const BankCommitOutcome again = bank.commit(kPlan, kKernel);
  ASSERT_TRUE(again.status.is_ok());
  EXPECT_FALSE(again.bases_changed);
  EXPECT_EQ(BankState::of(bank), held);
}

TEST_F(ArenaBankTest, KernelRefusalOnALaterRegionKeepsItsPeersCommitted) {
  ASSERT_TRUE(bank.commit(kPlan, kKernel).status.is_ok());
  const BankState held = BankState::of(bank);
  BankRequest over = kPlan;
  over.runtime_pool += 1;
  const BankCommitOutcome refused = bank.commit(over, kKernel);
  EXPECT_EQ(refused.status.code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(refused.status.growth_point(), GrowthPoint::kArenaRuntimePool);
  EXPECT_FALSE(refused.bases_changed);
  EXPECT_EQ(BankState::of(bank), held);
}

TEST_F(ArenaBankTest, KernelReleasingACommittedRegionIsRefused) {
  ASSERT_TRUE(bank.commit(kPlan, kKernel).status.is_ok());
  const BankState held = BankState::of(bank);
  BankRequest release = kPlan;
  release.runtime_pool = 0;
  const BankCommitOutcome refused = bank.commit(release, kKernel);
  EXPECT_EQ(refused.status.code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(refused.status.growth_point(), GrowthPoint::kArenaRuntimePool);
  EXPECT_EQ(refused.status.requested_bytes(), 0u);
  EXPECT_FALSE(refused.bases_changed);
  EXPECT_EQ(BankState::of(bank), held);
  EXPECT_TRUE(bank.is_committed(BankRegion::kRuntimePool));
}

TEST_F(ArenaBankTest, KernelZeroRequestForAnUncommittedRegionIsPermitted) {
  const BankRequest no_sm{kPlan.gm_heap, 0, kPlan.runtime_pool};
  for (int i = 0; i < 3; ++i) {
    const BankCommitOutcome outcome = bank.commit(no_sm, kKernel);
    ASSERT_TRUE(outcome.status.is_ok());
    EXPECT_EQ(outcome.bases_changed, i == 0);
    EXPECT_FALSE(bank.is_committed(BankRegion::kGmSm));
    EXPECT_EQ(bank.base(BankRegion::kGmSm), nullptr);
  }
}

// Dossier §2.4.4 gap 1: an earlier region that would be a legal first commit must not be
// allocated when a later region is refused.
TEST_F(ArenaBankTest, KernelRefusalPrecedesEveryNewAllocation) {
  ASSERT_TRUE(bank.commit(BankRequest{0, 0, kPlan.runtime_pool}, kKernel).status.is_ok());
  const BankState held = BankState::of(bank);
  const MemoryCounters device_before = rig.counters();

  const BankRequest first_commits_then_growth{kPlan.gm_heap, kPlan.gm_sm, kPlan.runtime_pool + 1};
  const BankCommitOutcome refused = bank.commit(first_commits_then_growth, kKernel);
  EXPECT_EQ(refused.status.code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(refused.status.growth_point(), GrowthPoint::kArenaRuntimePool);
  EXPECT_FALSE(refused.bases_changed);
  EXPECT_EQ(BankState::of(bank), held);
  EXPECT_FALSE(bank.is_committed(BankRegion::kGmHeap));
  EXPECT_FALSE(bank.is_committed(BankRegion::kGmSm));
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

TEST_F(ArenaBankTest, KernelLaterFirstCommitOfAnEmptyRegionIsPermitted) {
  ASSERT_TRUE(bank.commit(BankRequest{kPlan.gm_heap, 0, 0}, kKernel).status.is_ok());
  void *const heap = bank.base(BankRegion::kGmHeap);
  const BankCommitOutcome outcome = bank.commit(kPlan, kKernel);
  ASSERT_TRUE(outcome.status.is_ok());
  EXPECT_TRUE(outcome.bases_changed);
  EXPECT_EQ(bank.base(BankRegion::kGmHeap), heap);
  EXPECT_TRUE(bank.is_committed(BankRegion::kRuntimePool));
}

TEST_F(ArenaBankTest, KernelCommitWhileALaunchIsEncodedIsAFirstAllocationRefusal) {
  const GrowthContext in_launch{ExecutionMode::kKernel, true};
  const BankCommitOutcome refused = bank.commit(kPlan, in_launch);
  EXPECT_EQ(refused.status.code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(refused.status.growth_point(), GrowthPoint::kLaunchAllocation);
  EXPECT_EQ(rig.counters().allocation_calls, 0u);
  EXPECT_FALSE(bank.is_committed(BankRegion::kGmHeap));
}

// ---- program mode -----------------------------------------------------------------------

TEST_F(ArenaBankTest, ProgramGrowthRebasesTheRegion) {
  ASSERT_TRUE(bank.commit(kPlan, kProgram).status.is_ok());
  const BankBases before = bank.bases();
  BankRequest doubled = kPlan;
  doubled.gm_heap *= 2;
  const BankCommitOutcome outcome = bank.commit(doubled, kProgram);
  ASSERT_TRUE(outcome.status.is_ok());
  EXPECT_TRUE(outcome.bases_changed);
  EXPECT_NE(bank.base(BankRegion::kGmHeap), before.gm_heap);
  EXPECT_EQ(bank.base(BankRegion::kGmSm), before.gm_sm);
  EXPECT_EQ(bank.base(BankRegion::kRuntimePool), before.runtime_pool);
  EXPECT_EQ(bank.cached_size(BankRegion::kGmHeap), doubled.gm_heap);
  EXPECT_EQ(bank.alloc_count(), 4u);
  EXPECT_EQ(bank.free_count(), 1u);
  // The old block went back to the device.
  EXPECT_FALSE(rig.device.find_allocation(before.gm_heap).has_value());
}

TEST_F(ArenaBankTest, ProgramZeroRequestReleasesACommittedRegion) {
  ASSERT_TRUE(bank.commit(kPlan, kProgram).status.is_ok());
  void *const pool = bank.base(BankRegion::kRuntimePool);
  const BankCommitOutcome outcome =
      bank.commit(BankRequest{kPlan.gm_heap, kPlan.gm_sm, 0}, kProgram);
  ASSERT_TRUE(outcome.status.is_ok());
  EXPECT_TRUE(outcome.bases_changed);
  EXPECT_FALSE(bank.is_committed(BankRegion::kRuntimePool));
  EXPECT_EQ(bank.cached_size(BankRegion::kRuntimePool), 0u);
  EXPECT_EQ(bank.free_count(), 1u);
  EXPECT_FALSE(rig.device.find_allocation(pool).has_value());
}

TEST_F(ArenaBankTest, ProgramSmallerRequestKeepsRegionAndRememberedSize) {
  ASSERT_TRUE(bank.commit(kPlan, kProgram).status.is_ok());
  const BankState held = BankState::of(bank);
  const BankCommitOutcome outcome = bank.commit(
      BankRequest{kPlan.gm_heap / 2, kPlan.gm_sm / 2, kPlan.runtime_pool / 2}, kProgram);
  ASSERT_TRUE(outcome.status.is_ok());
  EXPECT_FALSE(outcome.bases_changed);
  EXPECT_EQ(BankState::of(bank), held);
}

TEST_F(ArenaBankTest, ProgramGrowthStagesTheNewBlockBeforeFreeingTheOld) {
  ASSERT_TRUE(bank.commit(kPlan, kProgram).status.is_ok());
  const MemoryCounters before = rig.counters();
  BankRequest doubled = kPlan;
  doubled.gm_heap *= 2;
  ASSERT_TRUE(bank.commit(doubled, kProgram).status.is_ok());
  // Old and new gm_heap coexisted at the moment of publication.
  EXPECT_GE(rig.counters().peak_live_bytes, before.live_bytes + doubled.gm_heap);
}

// ---- allocation failure -----------------------------------------------------------------

class ArenaBankFailureTest : public ::testing::TestWithParam<testing::SweepParam> {};

// Each allocation of a commit fails in turn (by a null return or by a throw); the bank and
// every published base must come out exactly as they went in.
TEST_P(ArenaBankFailureTest, AllocationFailureChangesNothing) {
  const auto [mode, throws] = GetParam();
  const GrowthContext context{mode, false};
  // A previously committed gm_heap, then a commit that adds gm_sm and runtime_pool (and, in
  // program mode, also grows gm_heap): up to three allocations.
  const BankRequest initial{kPlan.gm_heap, 0, 0};
  BankRequest next = kPlan;
  if (mode == ExecutionMode::kProgram) {
    next.gm_heap *= 2;
  }
  const int allocations = mode == ExecutionMode::kProgram ? 3 : 2;
  for (int n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing allocation " << n);
    testing::DeviceRig rig;
    {
      ArenaBank bank(rig.allocator);
      ASSERT_TRUE(bank.commit(initial, context).status.is_ok());
      const BankState held = BankState::of(bank);
      if (throws) {
        rig.faults.throw_on_nth_allocation(static_cast<std::uint64_t>(n));
      } else {
        rig.faults.fail_nth_allocation(static_cast<std::uint64_t>(n));
      }
      const BankCommitOutcome failed = bank.commit(next, context);
      EXPECT_EQ(failed.status.code(), RRT_ERR_OUT_OF_MEMORY);
      EXPECT_FALSE(failed.status.is_capacity_refusal());
      EXPECT_FALSE(failed.bases_changed);
      BankState after = BankState::of(bank);
      // Allocations staged before the failure were freed again: the counters moved in pairs.
      EXPECT_EQ(after.alloc_count - held.alloc_count, after.free_count - held.free_count);
      after.alloc_count = held.alloc_count;
      after.free_count = held.free_count;
      EXPECT_EQ(after, held);
      EXPECT_TRUE(rig.device.find_allocation(held.bases.gm_heap).has_value());

      // The same request succeeds once the device recovers, keeping what it can.
      const BankCommitOutcome retried = bank.commit(next, context);
      ASSERT_TRUE(retried.status.is_ok());
      if (mode == ExecutionMode::kKernel) {
        EXPECT_EQ(bank.base(BankRegion::kGmHeap), held.bases.gm_heap);
      }
    }
    EXPECT_EQ(rig.counters().allocation_calls, rig.counters().free_calls);
    EXPECT_EQ(rig.counters().live_bytes, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(ModesAndFailureKinds, ArenaBankFailureTest, testing::sweep_params(),
                         testing::sweep_param_name);

TEST_F(ArenaBankTest, AllocationFailureOnTheFirstCommitLeavesTheBankEmpty) {
  rig.faults.fail_nth_allocation(2);
  const BankCommitOutcome failed = bank.commit(kPlan, kKernel);
  EXPECT_EQ(failed.status.code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_FALSE(failed.bases_changed);
  EXPECT_EQ(BankState::of(bank).bases, BankBases{});
  EXPECT_EQ(rig.counters().live_bytes, 0u);
}

TEST_F(ArenaBankTest, ReleaseAllFreesEveryRegionAndForgetsSizes) {
  ASSERT_TRUE(bank.commit(kPlan, kKernel).status.is_ok());
  bank.release_all();
  EXPECT_EQ(bank.bases(), BankBases{});
  for (int i = 0; i < kBankRegionCount; ++i) {
    EXPECT_EQ(bank.cached_size(static_cast<BankRegion>(i)), 0u);
  }
  EXPECT_EQ(rig.counters().live_bytes, 0u);
  EXPECT_EQ(bank.alloc_count(), bank.free_count());
}

TEST_F(ArenaBankTest, AbandonForgetsRegionsWithoutFreeing) {
  ASSERT_TRUE(bank.commit(kPlan, kProgram).status.is_ok());
  const BankBases bases = bank.bases();
  bank.abandon_all();
  EXPECT_EQ(bank.bases(), BankBases{});
  EXPECT_EQ(bank.free_count(), 0u);
  // The device still holds them; free them here so the rig tears down clean.
  for (void *base : {bases.gm_heap, bases.gm_sm, bases.runtime_pool}) {
    EXPECT_TRUE(rig.device.free(base).is_ok());
  }
}

}  // namespace
}  // namespace replayrt
