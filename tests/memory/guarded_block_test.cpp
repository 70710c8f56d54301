// GuardedBlock: the one sizing operation (reserve, or plan/stage/publish/free_superseded) and
// its counters. Retained staging and host staging are plain blocks, so their life cycle is
// tested here.
#include "memory/guarded_block.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/block_host_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using testing::BlockHostRig;
using testing::expect_refusal;
using testing::expect_same_status;
using testing::kKernel;
using testing::kLaunch;
using testing::kProgram;

constexpr std::uint64_t kKiB = 1024;

// Everything a caller can observe about a block.
struct BlockState {
  void *base = nullptr;
  std::uint64_t capacity = 0;
  std::uint64_t requested = 0;
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;
  std::uint64_t failed_frees = 0;
  std::uint64_t base_changes = 0;
  std::uint64_t refusals = 0;

  static BlockState of(const GuardedBlock &block) {
    return {block.base(),  block.capacity(),     block.requested(),    block.allocations(),
            block.frees(), block.failed_frees(), block.base_changes(), block.refusals()};
  }
  bool operator==(const BlockState &) const = default;
};

class GuardedBlockTest : public ::testing::Test {
 protected:
  // Expects `required` to be served from the block as it is, with no allocator call.
  void expect_kept(std::uint64_t required) {
    const BlockState before = BlockState::of(block);
    const MemoryCounters device_before = host.counters();
    const std::uint64_t calls_before = host.allocate_calls();
    ASSERT_TRUE(block.reserve(required).is_ok());
    BlockState after = BlockState::of(block);
    after.requested = before.requested;
    EXPECT_EQ(after, before);
    EXPECT_EQ(host.allocate_calls(), calls_before);
    EXPECT_EQ(host.counters().allocation_calls, device_before.allocation_calls);
    EXPECT_EQ(host.counters().free_calls, device_before.free_calls);
  }

  BlockHostRig host;
  GuardedBlock block{host, GrowthPoint::kRetainedStaging};
};

TEST_F(GuardedBlockTest, StartsEmpty) {
  EXPECT_EQ(BlockState::of(block), BlockState{});
  EXPECT_FALSE(block.is_published());
  EXPECT_EQ(block.point(), GrowthPoint::kRetainedStaging);
  EXPECT_FALSE(block.needs_backing());
}

TEST_F(GuardedBlockTest, FirstReserveAllocatesTheRequestedBytes) {
  ASSERT_TRUE(block.reserve(4 * kKiB).is_ok());
  EXPECT_TRUE(block.is_published());
  EXPECT_EQ(block.capacity(), 4 * kKiB);
  EXPECT_EQ(block.requested(), 4 * kKiB);
  EXPECT_EQ(block.allocations(), 1u);
  EXPECT_EQ(block.base_changes(), 0u);
  const auto allocation = host.device().find_allocation(block.base());
  ASSERT_TRUE(allocation.has_value());
  EXPECT_EQ(allocation->base, reinterpret_cast<std::uintptr_t>(block.base()));
  EXPECT_GE(allocation->size, 4 * kKiB);
  ASSERT_EQ(host.events().size(), 1u);
  EXPECT_EQ(host.events()[0].point, GrowthPoint::kRetainedStaging);
  EXPECT_EQ(host.events()[0].bytes, 4 * kKiB);
}

TEST_F(GuardedBlockTest, ABlockThatHoldsTheRequestIsKeptInEveryContext) {
  ASSERT_TRUE(block.reserve(4 * kKiB).is_ok());
  for (const GrowthContext context : {kProgram, kKernel, kLaunch}) {
    host.set_context(context);
    for (const std::uint64_t required : {4 * kKiB, kKiB, std::uint64_t{1}, 4 * kKiB}) {
      expect_kept(required);
      EXPECT_EQ(block.requested(), required);
    }
  }
  EXPECT_EQ(block.allocations(), 1u);
}

TEST_F(GuardedBlockTest, ZeroRequestKeepsTheBlockAsItIs) {
  for (const GrowthContext context : {kProgram, kKernel, kLaunch}) {
    host.set_context(context);
    expect_kept(0);
    EXPECT_FALSE(block.is_published());
  }
  host.set_context(kProgram);
  ASSERT_TRUE(block.reserve(2 * kKiB).is_ok());
  void *const base = block.base();
  for (const GrowthContext context : {kProgram, kKernel, kLaunch}) {
    host.set_context(context);
    expect_kept(0);
    EXPECT_EQ(block.base(), base);
    EXPECT_TRUE(host.is_live(base));
  }
  // A zero request is not a sizing: what was asked for last stays.
  EXPECT_EQ(block.requested(), 2 * kKiB);
}

// ---- kernel mode -------------------------------------------------------------------------

TEST_F(GuardedBlockTest, KernelModeEmptyBlockTakesItsFirstAllocation) {
  host.set_context(kKernel);
  ASSERT_TRUE(block.reserve(2 * kKiB).is_ok());
  EXPECT_TRUE(block.is_published());
  EXPECT_EQ(block.capacity(), 2 * kKiB);
  EXPECT_EQ(block.allocations(), 1u);
  EXPECT_EQ(block.refusals(), 0u);
  EXPECT_EQ(host.total_refusals(), 0u);
}

TEST_F(GuardedBlockTest, KernelModeGrowthIsRefusedBeforeAnythingIsTouched) {
  host.set_context(kKernel);
  ASSERT_TRUE(block.reserve(2 * kKiB).is_ok());
  const BlockState held = BlockState::of(block);
  const MemoryCounters device_before = host.counters();
  const std::uint64_t calls_before = host.allocate_calls();

  expect_refusal(block.reserve(3 * kKiB), GrowthPoint::kRetainedStaging, 3 * kKiB, 2 * kKiB);
  BlockState after = BlockState::of(block);
  EXPECT_EQ(after.refusals, 1u);
  after.refusals = held.refusals;
  EXPECT_EQ(after, held);
  EXPECT_EQ(host.allocate_calls(), calls_before);
  EXPECT_EQ(host.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(host.counters().free_calls, device_before.free_calls);
  EXPECT_TRUE(host.is_live(held.base));
  EXPECT_EQ(host.refusals(GrowthPoint::kRetainedStaging), 1u);
  EXPECT_EQ(host.total_refusals(), 1u);

  // The block stays usable at its address.
  expect_kept(2 * kKiB);
  EXPECT_EQ(block.base(), held.base);
}

TEST_F(GuardedBlockTest, KernelModeRefusesToGrowAProgramBuiltBlock) {
  ASSERT_TRUE(block.reserve(2 * kKiB).is_ok());
  const BlockState held = BlockState::of(block);
  host.set_context(kKernel);
  expect_refusal(block.reserve(2 * kKiB + 1), GrowthPoint::kRetainedStaging, 2 * kKiB + 1,
                 2 * kKiB);
  EXPECT_EQ(block.base(), held.base);
  EXPECT_EQ(block.capacity(), held.capacity);
  EXPECT_TRUE(host.is_live(held.base));
}

TEST_F(GuardedBlockTest, KernelModeHoldsOneAddressAcrossRepeatedRequests) {
  host.set_context(kKernel);
  ASSERT_TRUE(block.reserve(4 * kKiB).is_ok());
  void *const base = block.base();
  const MemoryCounters device_before = host.counters();
  for (const std::uint64_t need : {4 * kKiB, 4 * kKiB, kKiB, 4 * kKiB, kKiB}) {
    ASSERT_TRUE(block.reserve(need).is_ok());
    EXPECT_EQ(block.base(), base);
    EXPECT_EQ(block.capacity(), 4 * kKiB);
  }
  EXPECT_EQ(host.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(host.counters().free_calls, device_before.free_calls);
}

TEST_F(GuardedBlockTest, KernelModeFirstAllocationInsideALaunchIsRefused) {
  host.set_context(kLaunch);
  expect_refusal(block.reserve(kKiB), GrowthPoint::kLaunchAllocation, kKiB, 0);
  EXPECT_FALSE(block.is_published());
  EXPECT_EQ(block.refusals(), 1u);
  EXPECT_EQ(host.allocate_calls(), 0u);
  EXPECT_EQ(host.refusals(GrowthPoint::kLaunchAllocation), 1u);
  EXPECT_EQ(host.refusals(GrowthPoint::kRetainedStaging), 0u);

  // Outside the launch the same request is the block's first allocation.
  host.set_in_launch(false);
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  EXPECT_TRUE(block.is_published());
}

TEST_F(GuardedBlockTest, KernelModeGrowthInsideALaunchIsChargedToTheBlocksPoint) {
  host.set_context(kKernel);
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  host.set_in_launch(true);
  expect_refusal(block.reserve(2 * kKiB), GrowthPoint::kRetainedStaging, 2 * kKiB, kKiB);
  EXPECT_EQ(host.refusals(GrowthPoint::kRetainedStaging), 1u);
  EXPECT_EQ(host.refusals(GrowthPoint::kLaunchAllocation), 0u);
}

// The block asks its host for the context on every call; no caller passes one.
TEST_F(GuardedBlockTest, ModeAndLaunchComeFromTheHostOnEveryCall) {
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  host.set_mode(ExecutionMode::kKernel);
  EXPECT_FALSE(block.reserve(2 * kKiB).is_ok());
  host.set_mode(ExecutionMode::kProgram);
  ASSERT_TRUE(block.reserve(2 * kKiB).is_ok());
  EXPECT_EQ(block.capacity(), 2 * kKiB);

  GuardedBlock other(host, GrowthPoint::kHostStaging);
  host.set_context(kLaunch);
  EXPECT_EQ(other.reserve(kKiB).growth_point(), GrowthPoint::kLaunchAllocation);
  host.set_in_launch(false);
  EXPECT_TRUE(other.reserve(kKiB).is_ok());
}

// ---- program mode ------------------------------------------------------------------------

TEST_F(GuardedBlockTest, ProgramModeGrowsToTheRequestAndKeepsTheLargerBacking) {
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  void *const first = block.base();
  ASSERT_TRUE(block.reserve(3 * kKiB).is_ok());
  EXPECT_NE(block.base(), first);
  EXPECT_EQ(block.capacity(), 3 * kKiB);
  EXPECT_EQ(block.allocations(), 2u);
  EXPECT_EQ(block.frees(), 1u);
  EXPECT_EQ(block.base_changes(), 1u);
  EXPECT_FALSE(host.is_live(first));
  // A smaller request keeps the larger backing.
  expect_kept(kKiB);
  EXPECT_EQ(block.capacity(), 3 * kKiB);
}

TEST_F(GuardedBlockTest, ProgramModeGrowthStagesTheNewBackingBeforeFreeingTheOld) {
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  void *const old_base = block.base();
  std::vector<const void *> freed;
  host.on_free([&](const void *ptr) {
    freed.push_back(ptr);
    // At the free, the new backing is published and live.
    EXPECT_NE(block.base(), old_base);
    EXPECT_TRUE(host.is_live(block.base()));
    EXPECT_TRUE(host.is_live(ptr));
  });
  ASSERT_TRUE(block.reserve(4 * kKiB).is_ok());
  host.on_free(nullptr);
  EXPECT_EQ(freed, std::vector<const void *>{old_base});
  EXPECT_GE(host.counters().peak_live_bytes, 5 * kKiB);
}

// ---- the step-wise form ------------------------------------------------------------------

TEST_F(GuardedBlockTest, PlanStagePublishFreeSupersededEachDoOneThing) {
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  void *const old_base = block.base();

  ASSERT_TRUE(block.plan(4 * kKiB).is_ok());
  EXPECT_TRUE(block.needs_backing());
  EXPECT_EQ(host.counters().allocation_calls, 1u);
  EXPECT_EQ(block.base(), old_base);

  ASSERT_TRUE(block.stage().is_ok());
  EXPECT_EQ(host.counters().allocation_calls, 2u);
  EXPECT_EQ(block.base(), old_base);
  EXPECT_EQ(block.capacity(), kKiB);
  EXPECT_EQ(block.allocations(), 2u);
  ASSERT_TRUE(block.stage().is_ok());
  EXPECT_EQ(host.counters().allocation_calls, 2u) << "a second stage() allocates nothing";

  block.publish();
  EXPECT_NE(block.base(), old_base);
  EXPECT_EQ(block.capacity(), 4 * kKiB);
  EXPECT_EQ(block.requested(), 4 * kKiB);
  EXPECT_EQ(block.base_changes(), 1u);
  EXPECT_FALSE(block.needs_backing());
  EXPECT_TRUE(host.is_live(old_base)) << "the superseded backing lives until freed";
  EXPECT_EQ(block.frees(), 0u);

  block.free_superseded();
  EXPECT_FALSE(host.is_live(old_base));
  EXPECT_EQ(block.frees(), 1u);
  block.free_superseded();
  EXPECT_EQ(block.frees(), 1u);
}

TEST_F(GuardedBlockTest, PlanOfAKeepNeedsNoBackingAndStagesNothing) {
  ASSERT_TRUE(block.reserve(2 * kKiB).is_ok());
  ASSERT_TRUE(block.plan(kKiB).is_ok());
  EXPECT_FALSE(block.needs_backing());
  ASSERT_TRUE(block.stage().is_ok());
  block.publish();
  block.free_superseded();
  EXPECT_EQ(block.allocations(), 1u);
  EXPECT_EQ(block.frees(), 0u);
  EXPECT_EQ(block.requested(), kKiB);
}

TEST_F(GuardedBlockTest, AbortFreesTheStagedBackingAndLeavesTheBlockAsBeforePlan) {
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  const BlockState held = BlockState::of(block);
  ASSERT_TRUE(block.plan(4 * kKiB).is_ok());
  ASSERT_TRUE(block.stage().is_ok());
  block.abort();
  EXPECT_FALSE(block.needs_backing());
  BlockState after = BlockState::of(block);
  EXPECT_EQ(after.allocations, held.allocations + 1);
  EXPECT_EQ(after.frees, held.frees + 1);
  after.allocations = held.allocations;
  after.frees = held.frees;
  EXPECT_EQ(after, held);
  EXPECT_EQ(host.counters().live_bytes, kKiB);
  // A later publish publishes nothing.
  block.publish();
  EXPECT_EQ(block.base(), held.base);
}

TEST_F(GuardedBlockTest, AbortAfterPlanAloneAllocatesNothing) {
  ASSERT_TRUE(block.plan(kKiB).is_ok());
  EXPECT_TRUE(block.needs_backing());
  block.abort();
  EXPECT_FALSE(block.needs_backing());
  ASSERT_TRUE(block.stage().is_ok());
  EXPECT_EQ(host.allocate_calls(), 0u);
  EXPECT_EQ(BlockState::of(block), BlockState{});
}

TEST_F(GuardedBlockTest, PlanRefusalIsCountedOnceAndPlansNothing) {
  host.set_context(kKernel);
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  expect_refusal(block.plan(2 * kKiB), GrowthPoint::kRetainedStaging, 2 * kKiB, kKiB);
  EXPECT_FALSE(block.needs_backing());
  EXPECT_EQ(block.refusals(), 1u);
  EXPECT_EQ(host.refusals(GrowthPoint::kRetainedStaging), 1u);
  ASSERT_TRUE(block.stage().is_ok());
  EXPECT_EQ(block.allocations(), 1u);
}

// ---- preflight ---------------------------------------------------------------------------

TEST_F(GuardedBlockTest, PreflightReturnsExactlyWhatReserveWouldAndTouchesNothing) {
  struct Request {
    std::uint64_t required;
    GrowthContext context;
  };
  const Request requests[] = {
      {kKiB, kLaunch},       // empty, launch encoded: launch_allocation refusal
      {0, kLaunch},          // nothing needed
      {2 * kKiB, kKernel},   // first allocation
      {2 * kKiB, kLaunch},   // fits
      {3 * kKiB, kKernel},   // growth: refusal
      {3 * kKiB, kLaunch},   // growth while a launch is encoded: refusal at the block's point
      {8 * kKiB, kProgram},  // program mode grows
      {kKiB, kKernel},       // fits the grown block
      {9 * kKiB, kKernel},   // refusal at the grown capacity
  };
  for (const Request &request : requests) {
    SCOPED_TRACE(::testing::Message() << "required " << request.required);
    host.set_context(request.context);
    const BlockState before = BlockState::of(block);
    const std::uint64_t calls_before = host.allocate_calls();
    const std::uint64_t refusals_before = host.total_refusals();
    const Status predicted = block.preflight(request.required);
    EXPECT_EQ(BlockState::of(block), before);
    EXPECT_EQ(host.allocate_calls(), calls_before);
    EXPECT_EQ(host.total_refusals(), refusals_before);
    expect_same_status(predicted, block.reserve(request.required));
  }
}

// ---- allocation failure ------------------------------------------------------------------

class GuardedBlockFailureTest : public ::testing::TestWithParam<bool> {};

TEST_P(GuardedBlockFailureTest, FailedGrowthKeepsTheOldBacking) {
  BlockHostRig host;
  {
    GuardedBlock block(host, GrowthPoint::kRetainedStaging);
    ASSERT_TRUE(block.reserve(kKiB).is_ok());
    const BlockState held = BlockState::of(block);
    host.fail_nth_allocation(1, GetParam());
    const Status failed = block.reserve(4 * kKiB);
    EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_FALSE(failed.is_capacity_refusal());
    EXPECT_EQ(BlockState::of(block), held);
    EXPECT_TRUE(host.is_live(held.base));
    EXPECT_EQ(host.total_refusals(), 0u);
    expect_same_status(block.preflight(4 * kKiB), Status::ok());

    ASSERT_TRUE(block.reserve(4 * kKiB).is_ok());
    EXPECT_EQ(block.capacity(), 4 * kKiB);
  }
  EXPECT_EQ(host.counters().allocation_calls, host.counters().free_calls);
  EXPECT_EQ(host.counters().live_bytes, 0u);
}

TEST_P(GuardedBlockFailureTest, FailedFirstAllocationLeavesTheBlockEmpty) {
  for (const GrowthContext context : {kProgram, kKernel}) {
    BlockHostRig host(context);
    GuardedBlock block(host, GrowthPoint::kHostStaging);
    host.fail_nth_allocation(1, GetParam());
    EXPECT_EQ(block.reserve(2 * kKiB).code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(BlockState::of(block), BlockState{});
    EXPECT_EQ(host.counters().allocation_calls, 0u);

    ASSERT_TRUE(block.reserve(2 * kKiB).is_ok());
    EXPECT_TRUE(block.is_published());
    EXPECT_EQ(block.capacity(), 2 * kKiB);
  }
}

TEST_P(GuardedBlockFailureTest, FailedStageThenAbortLeavesTheBlockAsBeforePlan) {
  BlockHostRig host;
  GuardedBlock block(host, GrowthPoint::kRetainedStaging);
  ASSERT_TRUE(block.plan(kKiB).is_ok());
  host.fail_nth_allocation(1, GetParam());
  EXPECT_EQ(block.stage().code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_FALSE(block.needs_backing());
  EXPECT_EQ(BlockState::of(block), BlockState{});
  block.abort();
  block.publish();
  EXPECT_EQ(BlockState::of(block), BlockState{});
}

INSTANTIATE_TEST_SUITE_P(NullAndThrow, GuardedBlockFailureTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "Throw" : "Null");
                         });

// A host may refuse an allocation its own rules forbid (the context's backstop); the block
// counts it as a refusal and changes nothing.
TEST_F(GuardedBlockTest, HostRefusalOfTheAllocationIsCountedAndChangesNothing) {
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  const BlockState held = BlockState::of(block);
  host.refuse_nth_allocation(1);
  const Status refused = block.reserve(2 * kKiB);
  EXPECT_TRUE(refused.is_capacity_refusal());
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kLaunchAllocation);
  BlockState after = BlockState::of(block);
  EXPECT_EQ(after.refusals, 1u);
  after.refusals = held.refusals;
  EXPECT_EQ(after, held);
  EXPECT_EQ(host.counters().allocation_calls, 1u);
  EXPECT_TRUE(host.is_live(held.base));
}

// ---- frees and release ------------------------------------------------------------------

TEST_F(GuardedBlockTest, AFreeTheDeviceRejectsIsCountedAsFailed) {
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  void *const old_base = block.base();
  host.reject_frees(true);
  ASSERT_TRUE(block.reserve(2 * kKiB).is_ok());
  EXPECT_EQ(block.frees(), 0u);
  EXPECT_EQ(block.failed_frees(), 1u);
  EXPECT_EQ(host.rejected_frees(), 1u);
  host.reject_frees(false);
  // The rejected backing is the device's now; give it back so the device tears down clean.
  EXPECT_TRUE(host.device().free(old_base).is_ok());
}

TEST_F(GuardedBlockTest, ReleaseFreesTheBackingAndIsIdempotent) {
  host.set_context(kKernel);
  ASSERT_TRUE(block.reserve(2 * kKiB).is_ok());
  void *const base = block.base();
  block.release();
  EXPECT_FALSE(block.is_published());
  EXPECT_EQ(block.capacity(), 0u);
  EXPECT_EQ(block.requested(), 0u);
  EXPECT_EQ(block.frees(), 1u);
  EXPECT_EQ(block.base_changes(), 0u) << "teardown is not a base change";
  EXPECT_FALSE(host.is_live(base));
  EXPECT_EQ(host.counters().live_bytes, 0u);
  block.release();
  EXPECT_EQ(block.frees(), 1u);

  // A released block takes a first allocation again, in kernel mode too.
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  EXPECT_EQ(block.base_changes(), 0u);
}

TEST_F(GuardedBlockTest, ReleaseAlsoFreesStagedAndSupersededBackings) {
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  ASSERT_TRUE(block.plan(2 * kKiB).is_ok());
  ASSERT_TRUE(block.stage().is_ok());
  block.publish();
  ASSERT_TRUE(block.plan(4 * kKiB).is_ok());
  ASSERT_TRUE(block.stage().is_ok());
  EXPECT_EQ(host.counters().live_bytes, 7 * kKiB);
  block.release();
  EXPECT_EQ(block.allocations(), 3u);
  EXPECT_EQ(block.frees(), 3u);
  EXPECT_EQ(host.counters().live_bytes, 0u);
}

TEST(GuardedBlockLifetimeTest, DestructorReleasesEveryBacking) {
  BlockHostRig host;
  {
    GuardedBlock block(host, GrowthPoint::kHostStaging);
    ASSERT_TRUE(block.reserve(kKiB).is_ok());
    ASSERT_TRUE(block.reserve(4 * kKiB).is_ok());
    ASSERT_TRUE(block.plan(8 * kKiB).is_ok());
    ASSERT_TRUE(block.stage().is_ok());
  }
  EXPECT_EQ(host.counters().allocation_calls, 3u);
  EXPECT_EQ(host.counters().free_calls, 3u);
  EXPECT_EQ(host.counters().live_bytes, 0u);
}

}  // namespace
}  // namespace replayrt
