#include "memory/arena_bank.h"

#include <array>
#include <string>

#include <gtest/gtest.h>

#include "support/allocation_failure_sweep.h"
#include "support/block_host_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using testing::BlockHostRig;
using testing::expect_refusal;
using testing::kKernel;
using testing::kLaunch;
using testing::kProgram;

constexpr std::uint64_t kBankKiB = 1024;
constexpr BankRequest kPlan{
    .gm_heap = 64 * kBankKiB, .gm_sm = 8 * kBankKiB, .runtime_pool = 16 * kBankKiB};
constexpr std::array<BankRegion, kBankRegionCount> kRegions = {
    BankRegion::kGmHeap, BankRegion::kGmSm, BankRegion::kRuntimePool};

bool same_request(const BankRequest &a, const BankRequest &b) {
  return a.gm_heap == b.gm_heap && a.gm_sm == b.gm_sm && a.runtime_pool == b.runtime_pool;
}

// Everything a caller can observe about a bank.
struct BankState {
  BankBases bases;
  std::array<std::uint64_t, kBankRegionCount> capacity{};
  std::array<std::uint64_t, kBankRegionCount> allocations{};
  std::array<std::uint64_t, kBankRegionCount> frees{};
  std::array<std::uint64_t, kBankRegionCount> base_changes{};

  static BankState of(const ArenaBank &bank) {
    BankState state;
    state.bases = bank.bases();
    for (const BankRegion region : kRegions) {
      const auto i = static_cast<std::size_t>(region);
      state.capacity[i] = bank.capacity(region);
      state.allocations[i] = bank.region(region).allocations();
      state.frees[i] = bank.region(region).frees();
      state.base_changes[i] = bank.region(region).base_changes();
    }
    return state;
  }

  std::uint64_t total_allocations() const {
    return allocations[0] + allocations[1] + allocations[2];
  }
  std::uint64_t total_frees() const { return frees[0] + frees[1] + frees[2]; }

  bool operator==(const BankState &) const = default;
};

class ArenaBankTest : public ::testing::Test {
 protected:
  void expect_no_device_call_since(const MemoryCounters &before) const {
    EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls);
    EXPECT_EQ(host.counters().free_calls, before.free_calls);
  }

  BlockHostRig host;
  ArenaBank bank{host};
};

TEST(ArenaBankRegionTest, EachRegionIsItsOwnGrowthPoint) {
  EXPECT_EQ(growth_point_of(BankRegion::kGmHeap), GrowthPoint::kArenaGmHeap);
  EXPECT_EQ(growth_point_of(BankRegion::kGmSm), GrowthPoint::kArenaGmSm);
  EXPECT_EQ(growth_point_of(BankRegion::kRuntimePool), GrowthPoint::kArenaRuntimePool);
  EXPECT_STREQ(bank_region_name(BankRegion::kGmHeap), "gm_heap");
  EXPECT_STREQ(bank_region_name(BankRegion::kGmSm), "gm_sm");
  EXPECT_STREQ(bank_region_name(BankRegion::kRuntimePool), "runtime_pool");
  EXPECT_EQ(kPlan.bytes(BankRegion::kGmHeap), kPlan.gm_heap);
  EXPECT_EQ(kPlan.bytes(BankRegion::kGmSm), kPlan.gm_sm);
  EXPECT_EQ(kPlan.bytes(BankRegion::kRuntimePool), kPlan.runtime_pool);
}

TEST_F(ArenaBankTest, RegionBlocksCarryTheirGrowthPoints) {
  for (const BankRegion region : kRegions) {
    EXPECT_EQ(bank.region(region).point(), growth_point_of(region));
  }
}

// ---- kernel mode ------------------------------------------------------------------------

TEST_F(ArenaBankTest, KernelFirstCommitIsPermitted) {
  host.set_context(kKernel);
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  for (const BankRegion region : kRegions) {
    EXPECT_NE(bank.base(region), nullptr);
    EXPECT_EQ(bank.capacity(region), kPlan.bytes(region));
    EXPECT_EQ(bank.region(region).allocations(), 1u);
    EXPECT_EQ(bank.region(region).base_changes(), 0u);
  }
  EXPECT_TRUE(same_request(bank.capacities(), kPlan));
  EXPECT_EQ(host.counters().allocation_calls, 3u);
  EXPECT_EQ(host.counters().free_calls, 0u);
}

TEST_F(ArenaBankTest, KernelRepeatedCommitsMoveNoBaseAndCallNoAllocator) {
  host.set_context(kKernel);
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  const BankState held = BankState::of(bank);
  const MemoryCounters before = host.counters();
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(bank.commit(kPlan).is_ok());
    EXPECT_EQ(BankState::of(bank), held);
  }
  host.set_context(kLaunch);
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  EXPECT_EQ(BankState::of(bank), held);
  expect_no_device_call_since(before);
}

TEST_F(ArenaBankTest, KernelExactAndSmallerRequestsAreServedInPlace) {
  host.set_context(kKernel);
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  const BankState held = BankState::of(bank);
  const BankRequest smaller{kPlan.gm_heap - 1, kPlan.gm_sm - 1, kPlan.runtime_pool - 1};
  for (const BankRequest &request : {kPlan, smaller, kPlan}) {
    ASSERT_TRUE(bank.commit(request).is_ok());
    // Capacities never shrink.
    EXPECT_EQ(BankState::of(bank), held);
  }
}

TEST_F(ArenaBankTest, KernelOneByteOverCapacityIsRefusedAndChangesNothing) {
  host.set_context(kKernel);
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  const BankState held = BankState::of(bank);
  const MemoryCounters before = host.counters();

  BankRequest over = kPlan;
  over.gm_heap += 1;
  expect_refusal(bank.commit(over), GrowthPoint::kArenaGmHeap, over.gm_heap, kPlan.gm_heap);
  EXPECT_EQ(BankState::of(bank), held);
  expect_no_device_call_since(before);
  EXPECT_EQ(bank.region(BankRegion::kGmHeap).refusals(), 1u);
  EXPECT_EQ(host.refusals(GrowthPoint::kArenaGmHeap), 1u);

  // The held plan stays usable: the same layout commits again with nothing moving.
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  EXPECT_EQ(BankState::of(bank), held);
}

TEST_F(ArenaBankTest, KernelRefusalOnALaterRegionKeepsItsPeersCommitted) {
  host.set_context(kKernel);
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  const BankState held = BankState::of(bank);
  BankRequest over = kPlan;
  over.runtime_pool += 1;
  expect_refusal(bank.commit(over), GrowthPoint::kArenaRuntimePool, over.runtime_pool,
                 kPlan.runtime_pool);
  EXPECT_EQ(BankState::of(bank), held);
  for (const BankRegion region : kRegions) {
    EXPECT_TRUE(host.is_live(bank.base(region)));
  }
}

// Nothing releases before teardown: a zero request keeps a committed region, in both modes.
TEST_F(ArenaBankTest, ZeroRequestKeepsACommittedRegionInEitherMode) {
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  const BankState held = BankState::of(bank);
  const MemoryCounters before = host.counters();
  for (const GrowthContext context : {kProgram, kKernel, kLaunch}) {
    host.set_context(context);
    ASSERT_TRUE(bank.commit(BankRequest{kPlan.gm_heap, kPlan.gm_sm, 0}).is_ok());
    ASSERT_TRUE(bank.commit(BankRequest{}).is_ok());
    EXPECT_EQ(BankState::of(bank), held);
  }
  expect_no_device_call_since(before);
  EXPECT_TRUE(host.is_live(held.bases.runtime_pool));
}

TEST_F(ArenaBankTest, KernelZeroRequestForAnUncommittedRegionIsPermitted) {
  host.set_context(kKernel);
  const BankRequest no_sm{kPlan.gm_heap, 0, kPlan.runtime_pool};
  for (int i = 0; i < 3; ++i) {
    const BankBases before = bank.bases();
    ASSERT_TRUE(bank.commit(no_sm).is_ok());
    EXPECT_EQ(bank.bases() != before, i == 0);
    EXPECT_EQ(bank.base(BankRegion::kGmSm), nullptr);
    EXPECT_EQ(bank.capacity(BankRegion::kGmSm), 0u);
  }
  EXPECT_EQ(host.counters().allocation_calls, 2u);
}

// Dossier §2.4.4 gap 1: an earlier region that would be a legal first commit must not be
// allocated when a later region is refused.
TEST_F(ArenaBankTest, KernelRefusalPrecedesEveryNewAllocation) {
  host.set_context(kKernel);
  ASSERT_TRUE(bank.commit(BankRequest{0, 0, kPlan.runtime_pool}).is_ok());
  const BankState held = BankState::of(bank);
  const MemoryCounters before = host.counters();
  const std::uint64_t calls_before = host.allocate_calls();

  const BankRequest first_commits_then_growth{kPlan.gm_heap, kPlan.gm_sm, kPlan.runtime_pool + 1};
  expect_refusal(bank.commit(first_commits_then_growth), GrowthPoint::kArenaRuntimePool,
                 kPlan.runtime_pool + 1, kPlan.runtime_pool);
  EXPECT_EQ(BankState::of(bank), held);
  EXPECT_EQ(bank.base(BankRegion::kGmHeap), nullptr);
  EXPECT_EQ(bank.base(BankRegion::kGmSm), nullptr);
  EXPECT_EQ(host.allocate_calls(), calls_before);
  expect_no_device_call_since(before);
  EXPECT_FALSE(bank.region(BankRegion::kGmHeap).needs_backing());
  EXPECT_FALSE(bank.region(BankRegion::kGmSm).needs_backing());
}

TEST_F(ArenaBankTest, KernelLaterFirstCommitOfAnEmptyRegionIsPermitted) {
  host.set_context(kKernel);
  ASSERT_TRUE(bank.commit(BankRequest{kPlan.gm_heap, 0, 0}).is_ok());
  void *const heap = bank.base(BankRegion::kGmHeap);
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  EXPECT_EQ(bank.base(BankRegion::kGmHeap), heap);
  EXPECT_NE(bank.base(BankRegion::kRuntimePool), nullptr);
  EXPECT_NE(bank.base(BankRegion::kGmSm), nullptr);
  EXPECT_EQ(host.counters().allocation_calls, 3u);
}

TEST_F(ArenaBankTest, KernelCommitWhileALaunchIsEncodedIsAFirstAllocationRefusal) {
  host.set_context(kLaunch);
  expect_refusal(bank.commit(kPlan), GrowthPoint::kLaunchAllocation, kPlan.gm_heap, 0);
  EXPECT_EQ(host.allocate_calls(), 0u);
  EXPECT_EQ(bank.bases(), BankBases{});
  EXPECT_EQ(host.refusals(GrowthPoint::kLaunchAllocation), 1u);
}

// ---- program mode -----------------------------------------------------------------------

TEST_F(ArenaBankTest, ProgramGrowthRebasesOnlyTheGrownRegion) {
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  const BankBases before = bank.bases();
  BankRequest doubled = kPlan;
  doubled.gm_heap *= 2;
  ASSERT_TRUE(bank.commit(doubled).is_ok());
  EXPECT_NE(bank.base(BankRegion::kGmHeap), before.gm_heap);
  EXPECT_EQ(bank.base(BankRegion::kGmSm), before.gm_sm);
  EXPECT_EQ(bank.base(BankRegion::kRuntimePool), before.runtime_pool);
  EXPECT_EQ(bank.capacity(BankRegion::kGmHeap), doubled.gm_heap);
  const BankState state = BankState::of(bank);
  EXPECT_EQ(state.total_allocations(), 4u);
  EXPECT_EQ(state.total_frees(), 1u);
  EXPECT_EQ(bank.region(BankRegion::kGmHeap).base_changes(), 1u);
  EXPECT_EQ(bank.region(BankRegion::kGmSm).base_changes(), 0u);
  // The old block went back to the device.
  EXPECT_FALSE(host.is_live(before.gm_heap));
}

TEST_F(ArenaBankTest, ProgramSmallerRequestKeepsRegionsAndCapacities) {
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  const BankState held = BankState::of(bank);
  ASSERT_TRUE(
      bank.commit(BankRequest{kPlan.gm_heap / 2, kPlan.gm_sm / 2, kPlan.runtime_pool / 2}).is_ok());
  EXPECT_EQ(BankState::of(bank), held);
}

TEST_F(ArenaBankTest, ProgramGrowthStagesEveryNewBlockBeforeFreeingAnOldOne) {
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  const BankBases old = bank.bases();
  const BankRequest doubled{2 * kPlan.gm_heap, 2 * kPlan.gm_sm, 2 * kPlan.runtime_pool};
  int frees = 0;
  host.on_free([&](const void *) {
    ++frees;
    // Every region publishes its new block before the first old one goes.
    EXPECT_NE(bank.base(BankRegion::kGmHeap), old.gm_heap);
    EXPECT_NE(bank.base(BankRegion::kGmSm), old.gm_sm);
    EXPECT_NE(bank.base(BankRegion::kRuntimePool), old.runtime_pool);
  });
  ASSERT_TRUE(bank.commit(doubled).is_ok());
  host.on_free(nullptr);
  EXPECT_EQ(frees, 3);
  // Old and new blocks coexisted at the moment of publication.
  EXPECT_GE(host.counters().peak_live_bytes, kPlan.gm_heap + kPlan.gm_sm + kPlan.runtime_pool +
                                                 doubled.gm_heap + doubled.gm_sm +
                                                 doubled.runtime_pool);
}

// plan() joins a caller's transaction: a refusal of a block added after the bank leaves the
// bank untouched, and a commit of that transaction sizes the bank with the other block.
TEST_F(ArenaBankTest, PlanJoinsTheCallersTransaction) {
  GuardedBlock staging(host, GrowthPoint::kRetainedStaging);
  host.set_context(kKernel);
  ASSERT_TRUE(staging.reserve(kBankKiB).is_ok());
  {
    BlockTransaction txn;
    ASSERT_TRUE(bank.plan(txn, kPlan).is_ok());
    EXPECT_EQ(txn.add(staging, 2 * kBankKiB).growth_point(), GrowthPoint::kRetainedStaging);
  }
  EXPECT_EQ(bank.bases(), BankBases{});
  EXPECT_EQ(host.counters().allocation_calls, 1u);

  BlockTransaction txn;
  ASSERT_TRUE(bank.plan(txn, kPlan).is_ok());
  ASSERT_TRUE(txn.add(staging, kBankKiB).is_ok());
  ASSERT_TRUE(txn.commit().is_ok());
  EXPECT_TRUE(same_request(bank.capacities(), kPlan));
}

// ---- allocation failure -----------------------------------------------------------------

class ArenaBankFailureTest : public ::testing::TestWithParam<testing::SweepParam> {};

// Each allocation of a commit fails in turn (by a null return or by a throw); the bank and
// every published base must come out exactly as they went in.
TEST_P(ArenaBankFailureTest, AllocationFailureChangesNothing) {
  const auto [mode, throws] = GetParam();
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
    BlockHostRig host(GrowthContext{mode, false});
    {
      ArenaBank bank(host);
      ASSERT_TRUE(bank.commit(initial).is_ok());
      const BankState held = BankState::of(bank);
      host.fail_nth_allocation(static_cast<std::uint64_t>(n), throws);
      const Status failed = bank.commit(next);
      EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
      EXPECT_FALSE(failed.is_capacity_refusal());
      BankState after = BankState::of(bank);
      // Allocations staged before the failure were freed again: the counters moved in pairs.
      EXPECT_EQ(after.total_allocations() - held.total_allocations(),
                after.total_frees() - held.total_frees());
      after.allocations = held.allocations;
      after.frees = held.frees;
      EXPECT_EQ(after, held);
      EXPECT_TRUE(host.is_live(held.bases.gm_heap));
      EXPECT_EQ(host.counters().live_bytes, kPlan.gm_heap);

      // The same request succeeds once the device recovers, keeping what it can.
      ASSERT_TRUE(bank.commit(next).is_ok());
      if (mode == ExecutionMode::kKernel) {
        EXPECT_EQ(bank.base(BankRegion::kGmHeap), held.bases.gm_heap);
      }
    }
    EXPECT_EQ(host.counters().allocation_calls, host.counters().free_calls);
    EXPECT_EQ(host.counters().live_bytes, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(ModesAndFailureKinds, ArenaBankFailureTest, testing::sweep_params(),
                         testing::sweep_param_name);

TEST_F(ArenaBankTest, AllocationFailureOnTheFirstCommitLeavesTheBankEmpty) {
  host.set_context(kKernel);
  host.fail_nth_allocation(2, false);
  EXPECT_EQ(bank.commit(kPlan).code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(bank.bases(), BankBases{});
  EXPECT_EQ(host.counters().live_bytes, 0u);
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  EXPECT_TRUE(same_request(bank.capacities(), kPlan));
}

// ---- teardown ----------------------------------------------------------------------------

TEST_F(ArenaBankTest, ReleaseAllFreesEveryRegionAndForgetsCapacities) {
  host.set_context(kKernel);
  ASSERT_TRUE(bank.commit(kPlan).is_ok());
  bank.release_all();
  EXPECT_EQ(bank.bases(), BankBases{});
  EXPECT_TRUE(same_request(bank.capacities(), BankRequest{}));
  EXPECT_EQ(host.counters().live_bytes, 0u);
  const BankState state = BankState::of(bank);
  EXPECT_EQ(state.total_allocations(), state.total_frees());
  EXPECT_EQ(state.base_changes, (std::array<std::uint64_t, kBankRegionCount>{}));
}

TEST(ArenaBankLifetimeTest, DestructorFreesEveryRegion) {
  BlockHostRig host;
  {
    ArenaBank bank(host);
    ASSERT_TRUE(bank.commit(kPlan).is_ok());
    ASSERT_TRUE(bank.commit(BankRequest{2 * kPlan.gm_heap, 0, 0}).is_ok());
  }
  EXPECT_EQ(host.counters().allocation_calls, 4u);
  EXPECT_EQ(host.counters().free_calls, 4u);
  EXPECT_EQ(host.counters().live_bytes, 0u);
}

}  // namespace
}  // namespace replayrt
