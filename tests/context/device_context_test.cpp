#include "context/device_context.h"

#include <new>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "context/launch_scope.h"
#include "support/device_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using testing::expect_refusal;

constexpr std::uint64_t kKiB = 1024;

CapacityPlan small_plan() {
  CapacityPlan plan{};
  plan.gm_heap_bytes = 64 * kKiB;
  plan.gm_sm_bytes = 4 * kKiB;
  plan.runtime_pool_bytes = 8 * kKiB;
  plan.retained_staging_bytes = 16 * kKiB;
  return plan;
}

SlotRequest bank_request(BankRequest bank) {
  SlotRequest request;
  request.size_bank = true;
  request.bank = bank;
  return request;
}

class DeviceContextTest : public ::testing::Test {
 protected:
  // Kernel init as the engine does it: the latch is the plan's commit point.
  void kernel_init(const CapacityPlan &plan, std::uint32_t profile_tasks = 0) {
    auto latch_kernel_mode = [this] { return context.latch().latch(ExecutionMode::kKernel); };
    ASSERT_TRUE(context.commit_capacity_plan(plan, profile_tasks, latch_kernel_mode).is_ok());
    ASSERT_TRUE(context.latch().is_kernel());
  }

  void expect_nothing_allocated() {
    EXPECT_EQ(rig.counters().live_bytes, 0u);
    EXPECT_EQ(context.counters().live_bytes.load(), 0u);
    EXPECT_EQ(context.slot(0).bank_bases(), BankBases{});
    EXPECT_EQ(context.region_stats(GrowthPoint::kRetainedStaging).capacity, 0u);
  }

  const GuardedBlock *find_block(GrowthPoint point, bool published) const {
    const GuardedBlock *found = nullptr;
    context.for_each_block([&](const GuardedBlock &block) {
      if (found == nullptr && block.point() == point && block.is_published() == published) {
        found = &block;
      }
    });
    return found;
  }

  testing::DeviceRig rig;
  DeviceContext context{rig.faults};
};

TEST_F(DeviceContextTest, CommitsTheCapacityPlanOnce) {
  kernel_init(small_plan());
  EXPECT_EQ(context.counters().device_alloc_calls.load(), 4u);
  EXPECT_EQ(context.region_stats(GrowthPoint::kArenaGmHeap).capacity, 64 * kKiB);
  EXPECT_EQ(context.region_stats(GrowthPoint::kRetainedStaging).capacity, 16 * kKiB);
  EXPECT_EQ(context.counters().live_bytes.load(), (64 + 4 + 8 + 16) * kKiB);
  EXPECT_NE(context.slot(0).bank_bases().gm_heap, nullptr);
  EXPECT_EQ(context.slot(1).bank_bases(), BankBases{});
}

TEST_F(DeviceContextTest, AFailedPlanCommitLeavesNothingAllocated) {
  int decisions = 0;
  auto decide = [&decisions] {
    ++decisions;
    return Status::ok();
  };
  for (std::uint64_t n = 1; n <= 4; ++n) {
    SCOPED_TRACE(n);
    rig.faults.fail_nth_allocation(n);
    EXPECT_EQ(context.commit_capacity_plan(small_plan(), 0, decide).code(), RRT_ERR_OUT_OF_MEMORY);
    rig.faults.clear_faults();
    expect_nothing_allocated();
  }
  EXPECT_EQ(decisions, 0);
  EXPECT_TRUE(context.commit_capacity_plan(small_plan(), 0, decide).is_ok());
  EXPECT_EQ(decisions, 1);
}

// The caller's decision runs with everything staged; its refusal or throw publishes nothing
// and frees every staged block.
TEST_F(DeviceContextTest, APlanCommitWhoseDecisionFailsLeavesNothingAllocated) {
  std::uint64_t staged_bytes = 0;
  auto refuse = [&] {
    staged_bytes = rig.counters().live_bytes;
    return Status::error(RRT_ERR_INVALID_STATE, "refused by the caller");
  };
  EXPECT_EQ(context.commit_capacity_plan(small_plan(), 0, refuse).code(), RRT_ERR_INVALID_STATE);
  EXPECT_EQ(staged_bytes, (64 + 4 + 8 + 16) * kKiB);
  expect_nothing_allocated();

  auto throw_bad_alloc = []() -> Status { throw std::bad_alloc(); };
  EXPECT_THROW((void)context.commit_capacity_plan(small_plan(), 0, throw_bad_alloc),
               std::bad_alloc);
  expect_nothing_allocated();
  kernel_init(small_plan());
  EXPECT_EQ(context.region_stats(GrowthPoint::kRetainedStaging).capacity, 16 * kKiB);
}

TEST_F(DeviceContextTest, KernelModeRefusalsChangeNothingAndAreCountedByGrowthPoint) {
  kernel_init(small_plan());
  const BankBases bases = context.slot(0).bank_bases();
  const MemoryCounters before = rig.counters();
  SlotGrant grant;
  expect_refusal(context.slot(0).reserve(bank_request({128 * kKiB, 0, 0}), &grant),
                 GrowthPoint::kArenaGmHeap, 128 * kKiB, 64 * kKiB);
  SlotRequest staging;
  staging.staging_bytes = 32 * kKiB;
  expect_refusal(context.slot(0).reserve(staging, &grant), GrowthPoint::kRetainedStaging, 32 * kKiB,
                 16 * kKiB);
  EXPECT_EQ(context.counters().refusals[RRT_GROWTH_ARENA_GM_HEAP].load(), 1u);
  EXPECT_EQ(context.counters().refusals[RRT_GROWTH_RETAINED_STAGING].load(), 1u);
  EXPECT_EQ(context.slot(0).bank_bases(), bases);
  EXPECT_EQ(rig.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, before.free_calls);
  EXPECT_EQ(context.region_stats(GrowthPoint::kArenaGmHeap).base_changes, 0u);
}

TEST_F(DeviceContextTest, InsideALaunchEvenAFirstAllocationIsRefused) {
  kernel_init(CapacityPlan{});
  SlotRequest staging;
  staging.staging_bytes = kKiB;
  SlotGrant grant;
  {
    const LaunchScope scope(context);
    expect_refusal(context.slot(0).reserve(staging, &grant), GrowthPoint::kLaunchAllocation, kKiB,
                   0);
  }
  EXPECT_EQ(rig.counters().allocation_calls, 0u);
  EXPECT_EQ(context.counters().refusals[RRT_GROWTH_LAUNCH_ALLOCATION].load(), 1u);
  // Outside the launch the empty block takes its first allocation.
  ASSERT_TRUE(context.slot(0).reserve(staging, &grant).is_ok());
  EXPECT_NE(grant.staging, nullptr);
}

TEST_F(DeviceContextTest, ALaunchScopeBelongsToItsThreadAndItsContext) {
  DeviceContext other(rig.faults);
  const LaunchScope scope(context);
  EXPECT_TRUE(context.growth_context().in_launch);
  EXPECT_FALSE(other.growth_context().in_launch);
  bool seen_elsewhere = true;
  std::thread([&] { seen_elsewhere = context.growth_context().in_launch; }).join();
  EXPECT_FALSE(seen_elsewhere);
}

// The backstop: after kernel init the context's allocator itself refuses an allocation that
// is not a block's first allocation outside a launch, whatever a caller decided.
TEST_F(DeviceContextTest, AfterKernelInitTheAllocatorRefusesWhatIsNotAFirstAllocation) {
  kernel_init(small_plan());
  const GuardedBlock *published = find_block(GrowthPoint::kArenaGmHeap, true);
  const GuardedBlock *empty = find_block(GrowthPoint::kGraphDefinition, false);
  ASSERT_NE(published, nullptr);
  ASSERT_NE(empty, nullptr);
  const MemoryCounters before = rig.counters();
  void *ptr = nullptr;
  expect_refusal(context.allocate(*published, 4096, &ptr), GrowthPoint::kLaunchAllocation, 4096,
                 64 * kKiB);
  EXPECT_EQ(ptr, nullptr);
  {
    const LaunchScope scope(context);
    EXPECT_EQ(context.allocate(*empty, 4096, &ptr).growth_point(), GrowthPoint::kLaunchAllocation);
  }
  EXPECT_EQ(rig.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(context.counters().refusals[RRT_GROWTH_LAUNCH_ALLOCATION].load(), 2u);
  ASSERT_TRUE(context.allocate(*empty, 4096, &ptr).is_ok());
  EXPECT_TRUE(context.free(ptr, 4096));
}

TEST_F(DeviceContextTest, TheBankImageIsInvalidatedExactlyWhenItsBasesChange) {
  SlotView &slot = context.slot(1);
  SlotGrant grant;
  ASSERT_TRUE(slot.reserve(bank_request({4 * kKiB, 4 * kKiB, 4 * kKiB}), &grant).is_ok());
  slot.remember_prebuilt({.bank = 1, .bases = grant.bases, .content_key = 5});
  PrebuiltImageCache::Entry entry;
  ASSERT_TRUE(slot.find_prebuilt(5, &entry));
  // Same sizes: nothing moves, the image stays.
  ASSERT_TRUE(slot.reserve(bank_request({4 * kKiB, 4 * kKiB, 4 * kKiB}), &grant).is_ok());
  EXPECT_TRUE(slot.find_prebuilt(5, &entry));
  // A failed growth changes nothing either.
  rig.faults.fail_nth_allocation(1);
  EXPECT_EQ(slot.reserve(bank_request({8 * kKiB, 4 * kKiB, 4 * kKiB}), &grant).code(),
            RRT_ERR_OUT_OF_MEMORY);
  EXPECT_TRUE(slot.find_prebuilt(5, &entry));
  // A growth re-bases gm_heap: the image baked the old base and is dropped.
  ASSERT_TRUE(slot.reserve(bank_request({8 * kKiB, 4 * kKiB, 4 * kKiB}), &grant).is_ok());
  EXPECT_FALSE(slot.find_prebuilt(5, &entry));
  EXPECT_EQ(context.region_stats(GrowthPoint::kArenaGmHeap).base_changes, 1u);
}

// A failed fill may already have written into a bank block it kept (the fill runs before the
// publish, on the blocks' addresses after it, which for a kept block is the published one): the
// image the cache vouches for may be overwritten, so the entry is dropped.
TEST_F(DeviceContextTest, AFailedFillDropsTheBankImageItMayHaveOverwritten) {
  SlotView &slot = context.slot(1);
  SlotGrant grant;
  ASSERT_TRUE(slot.reserve(bank_request({4 * kKiB, 4 * kKiB, 4 * kKiB}), &grant).is_ok());
  slot.remember_prebuilt({.bank = 1, .bases = grant.bases, .content_key = 5});
  SlotRequest overwrite = bank_request({4 * kKiB, 4 * kKiB, 4 * kKiB});
  const auto fail_after_writing = [](const SlotGrant &granted) {
    EXPECT_NE(granted.bases.runtime_pool, nullptr);
    return Status::error(RRT_ERR_INTERNAL, "the fill failed after its first upload");
  };
  overwrite.fill = fail_after_writing;
  EXPECT_EQ(slot.reserve(overwrite, &grant).code(), RRT_ERR_INTERNAL);
  PrebuiltImageCache::Entry entry;
  EXPECT_FALSE(slot.find_prebuilt(5, &entry)) << "the cache still vouches for a pool a failed "
                                                 "fill may have written";
  EXPECT_EQ(slot.bank_bases(), grant.bases) << "nothing moved";
}

TEST_F(DeviceContextTest, ASlotRequestIsOneTransaction) {
  SlotView &slot = context.slot(0);
  SlotGrant grant;
  SlotRequest first = bank_request({4 * kKiB, 4 * kKiB, 4 * kKiB});
  first.staging_bytes = 2 * kKiB;
  ASSERT_TRUE(slot.reserve(first, &grant).is_ok());
  const BankBases bases = grant.bases;
  const void *staging = grant.staging;
  // Staging and gm_heap both grow; the last allocation fails: neither moved.
  SlotRequest grow = bank_request({16 * kKiB, 4 * kKiB, 4 * kKiB});
  grow.staging_bytes = 8 * kKiB;
  rig.faults.fail_nth_allocation(2);
  EXPECT_EQ(slot.reserve(grow, &grant).code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(slot.bank_bases(), bases);
  EXPECT_EQ(context.region_stats(GrowthPoint::kRetainedStaging).capacity, 2 * kKiB);
  EXPECT_TRUE(rig.device.find_allocation(staging).has_value());
  EXPECT_EQ(context.region_stats(GrowthPoint::kRetainedStaging).base_changes, 0u);
  ASSERT_TRUE(slot.reserve(grow, &grant).is_ok());
  EXPECT_NE(grant.staging, staging);
}

// One resident placement, staged and committed with nothing built in between.
Status place(DeviceContext &context, const ResidentRequest &request, ResidentGrant *grant) {
  DeviceContext::ResidentTransaction placement(context);
  RRT_RETURN_IF_ERROR(placement.stage(request));
  *grant = placement.grant();
  placement.commit();
  return Status::ok();
}

TEST_F(DeviceContextTest, ResidentPlacementsAppendUntilTheFrozenPoolIsFull) {
  CapacityPlan plan{};
  plan.gm_heap_bytes = 4 * kKiB;
  plan.gm_sm_bytes = kKiB;
  plan.runtime_pool_bytes = 4 * kKiB;
  kernel_init(plan);
  ResidentGrant first;
  ResidentGrant second;
  ASSERT_TRUE(place(context, {.pool_bytes = 1500}, &first).is_ok());
  ASSERT_TRUE(place(context, {.pool_bytes = 500}, &second).is_ok());
  EXPECT_EQ(static_cast<std::byte *>(second.pool) - static_cast<std::byte *>(first.pool), 2048);
  ResidentGrant third;
  expect_refusal(place(context, {.pool_bytes = 1025}, &third), GrowthPoint::kArenaRuntimePool,
                 3 * kKiB + 1025, 4 * kKiB);
  // A callable that needs a larger gm_heap is refused on gm_heap, before anything moves.
  EXPECT_EQ(place(context, {.gm_heap = 8 * kKiB, .pool_bytes = 100}, &third).growth_point(),
            GrowthPoint::kArenaGmHeap);
  ResidentGrant fits;
  ASSERT_TRUE(place(context, {.pool_bytes = 1024}, &fits).is_ok());
  EXPECT_EQ(static_cast<std::byte *>(fits.pool) - static_cast<std::byte *>(first.pool), 3 * 1024);
  EXPECT_EQ(context.region_stats(GrowthPoint::kArenaRuntimePool).used, 4 * kKiB);
}

TEST_F(DeviceContextTest, AFailedResidentPlacementKeepsTheFrozenCapacity) {
  context.enable_profiling();
  CapacityPlan plan{};
  plan.runtime_pool_bytes = 4 * kKiB;
  kernel_init(plan);
  // The collectors take their first allocation with the first placement; make it fail.
  rig.faults.fail_nth_allocation(1);
  ResidentGrant grant;
  EXPECT_EQ(place(context, {.pool_bytes = 2048, .profile_tasks = 4}, &grant).code(),
            RRT_ERR_OUT_OF_MEMORY);
  rig.faults.clear_faults();
  EXPECT_EQ(context.region_stats(GrowthPoint::kArenaRuntimePool).used, 0u);
  ResidentGrant a;
  ResidentGrant b;
  ASSERT_TRUE(place(context, {.pool_bytes = 2048, .profile_tasks = 4}, &a).is_ok());
  ASSERT_TRUE(place(context, {.pool_bytes = 2048, .profile_tasks = 4}, &b).is_ok());
  EXPECT_EQ(context.region_stats(GrowthPoint::kArenaRuntimePool).used, 4 * kKiB);
}

// A placement whose build or upload failed is abandoned before it commits: the first
// allocations it made (collectors, definition store) are freed again, so they are still first
// allocations for the next placement, which may therefore ask for more.
TEST_F(DeviceContextTest, AnAbandonedResidentPlacementLeavesTheContextAsItWas) {
  context.enable_profiling();
  CapacityPlan plan{};
  plan.runtime_pool_bytes = 4 * kKiB;
  kernel_init(plan);
  const std::uint64_t live = context.counters().live_bytes.load();
  const std::uint64_t unfreed =
      context.counters().device_alloc_calls.load() - context.counters().device_free_calls.load();
  {
    DeviceContext::ResidentTransaction placement(context);
    ASSERT_TRUE(placement
                    .stage({.pool_bytes = 2048,
                            .place_definition = true,
                            .definition_key = 7,
                            .definition_bytes = 512,
                            .profile_tasks = 4})
                    .is_ok());
    EXPECT_NE(placement.grant().pool, nullptr);
    EXPECT_NE(placement.grant().definition, nullptr);
  }
  EXPECT_EQ(context.counters().live_bytes.load(), live);
  EXPECT_EQ(
      context.counters().device_alloc_calls.load() - context.counters().device_free_calls.load(),
      unfreed);
  EXPECT_EQ(context.region_stats(GrowthPoint::kArenaRuntimePool).used, 0u);
  EXPECT_EQ(context.region_stats(GrowthPoint::kGraphDefinition).capacity, 0u);
  EXPECT_EQ(context.region_stats(GrowthPoint::kGraphDefinition).used, 0u);
  EXPECT_EQ(context.region_stats(GrowthPoint::kDfxCollectors).capacity, 0u);
  ResidentGrant grant;
  ASSERT_TRUE(place(context,
                    {.pool_bytes = 4096,
                     .place_definition = true,
                     .definition_key = 7,
                     .definition_bytes = 1024,
                     .profile_tasks = 16},
                    &grant)
                  .is_ok());
  EXPECT_EQ(grant.pool, context.slot(0).bank_bases().runtime_pool);
  EXPECT_EQ(context.region_stats(GrowthPoint::kGraphDefinition).used, 1024u);
}

// Program mode: the PREPARED_INCOMPATIBLE decision and the collectors' rebuild happen in one
// critical section, so a run can never free collectors the other slot's run was given.
TEST_F(DeviceContextTest, ARebuildOfCollectorsTheOtherSlotUsesIsIncompatible) {
  context.enable_profiling();
  ASSERT_TRUE(context.latch().latch(ExecutionMode::kProgram).is_ok());
  int a = -1;
  int b = -1;
  ASSERT_TRUE(context.claim_slot(&a).is_ok());
  ASSERT_TRUE(context.claim_slot(&b).is_ok());
  SlotRequest small;
  small.profile_tasks = 2;
  SlotGrant held;
  ASSERT_TRUE(context.slot(a).reserve(small, &held).is_ok());
  SlotRequest large;
  large.profile_tasks = 9;
  SlotGrant grant;
  EXPECT_EQ(context.slot(b).reserve(large, &grant).code(), RRT_ERR_PREPARED_INCOMPATIBLE);
  EXPECT_TRUE(rig.device.find_allocation(held.timings).has_value());
  EXPECT_EQ(grant.timings, nullptr);
  // Once the other slot is free the rebuild goes ahead.
  context.release_slot(a);
  ASSERT_TRUE(context.slot(b).reserve(large, &grant).is_ok());
  EXPECT_NE(grant.timings, nullptr);
}

TEST_F(DeviceContextTest, EveryBlockTheContextCreatedIsEnumerated) {
  std::vector<GrowthPoint> points;
  context.for_each_block([&](const GuardedBlock &block) { points.push_back(block.point()); });
  // Per slot: three bank regions, retained staging, definitions, host staging; then the two
  // profiling blocks.
  EXPECT_EQ(points.size(), std::size_t{DeviceContext::kPipelineDepth} * 6 + 2);
}

TEST_F(DeviceContextTest, ReleaseAllFreesEverything) {
  SlotGrant grant;
  SlotRequest request = bank_request({4 * kKiB, 4 * kKiB, 4 * kKiB});
  request.staging_bytes = kKiB;
  ASSERT_TRUE(context.slot(1).reserve(request, &grant).is_ok());
  context.release_all();
  EXPECT_EQ(context.counters().live_bytes.load(), 0u);
  EXPECT_EQ(rig.counters().live_bytes, 0u);
  EXPECT_EQ(context.counters().device_alloc_calls.load(),
            context.counters().device_free_calls.load());
}

}  // namespace
}  // namespace replayrt
