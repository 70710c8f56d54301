#include "context/device_context.h"

#include <gtest/gtest.h>

#include "support/device_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using testing::kKernel;
using testing::kLaunch;
using testing::kProgram;

constexpr std::uint64_t kKiB = 1024;

class DeviceContextTest : public ::testing::Test {
 protected:
  testing::DeviceRig rig;
  DeviceContext context{rig.faults};
};

TEST_F(DeviceContextTest, CommitsTheCapacityPlanOnce) {
  rrt_capacity_plan_t plan{};
  plan.gm_heap_bytes = 64 * kKiB;
  plan.gm_sm_bytes = 4 * kKiB;
  plan.runtime_pool_bytes = 8 * kKiB;
  plan.retained_staging_bytes = 16 * kKiB;
  ASSERT_TRUE(context.latch().latch(ExecutionMode::kKernel).is_ok());
  ASSERT_TRUE(context.commit_capacity_plan(plan, 0).is_ok());
  EXPECT_EQ(context.counters().device_alloc_calls.load(), 4u);
  EXPECT_EQ(context.region_stats(GrowthPoint::kArenaGmHeap).capacity, 64 * kKiB);
  EXPECT_EQ(context.region_stats(GrowthPoint::kRetainedStaging).capacity, 16 * kKiB);
  EXPECT_EQ(context.counters().live_bytes.load(), (64 + 4 + 8 + 16) * kKiB);
  const BankBases bases = context.pooled_bases(0);
  EXPECT_NE(bases.gm_heap, nullptr);
  EXPECT_EQ(context.pooled_bases(1), BankBases{});
}

TEST_F(DeviceContextTest, RefusalsAreCountedByGrowthPoint) {
  ASSERT_TRUE(
      context.setup_static_arena(kKernel, 0, BankRequest{4 * kKiB, 4 * kKiB, 4 * kKiB}).is_ok());
  const Status refused =
      context.setup_static_arena(kKernel, 0, BankRequest{8 * kKiB, 4 * kKiB, 4 * kKiB});
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kArenaGmHeap);
  ASSERT_TRUE(context.retained_begin(kKernel, 0, 2 * kKiB).is_ok());
  EXPECT_EQ(context.retained_begin(kKernel, 0, 4 * kKiB).growth_point(),
            GrowthPoint::kRetainedStaging);
  EXPECT_EQ(context.counters().refusals[RRT_GROWTH_ARENA_GM_HEAP].load(), 1u);
  EXPECT_EQ(context.counters().refusals[RRT_GROWTH_RETAINED_STAGING].load(), 1u);
  EXPECT_EQ(context.region_stats(GrowthPoint::kArenaGmHeap).base_changes, 0u);
}

TEST_F(DeviceContextTest, RuntimeAllocationDuringAKernelLaunchIsRefused) {
  void *ptr = nullptr;
  const Status refused = context.device_malloc(kLaunch, 4096, &ptr);
  EXPECT_EQ(refused.code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kLaunchAllocation);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(rig.counters().allocation_calls, 0u);
  EXPECT_EQ(context.counters().refusals[RRT_GROWTH_LAUNCH_ALLOCATION].load(), 1u);
  // Outside a launch, and in program mode, the allocation is taken.
  ASSERT_TRUE(context.device_malloc(kKernel, 4096, &ptr).is_ok());
  ASSERT_TRUE(context.device_free(ptr).is_ok());
  ASSERT_TRUE(
      context.device_malloc(GrowthContext{ExecutionMode::kProgram, true}, 4096, &ptr).is_ok());
  ASSERT_TRUE(context.device_free(ptr).is_ok());
  EXPECT_EQ(context.counters().live_bytes.load(), 0u);
}

TEST_F(DeviceContextTest, TheBankImageIsInvalidatedExactlyWhenItsBasesChange) {
  ASSERT_TRUE(
      context.setup_static_arena(kProgram, 1, BankRequest{4 * kKiB, 4 * kKiB, 4 * kKiB}).is_ok());
  context.store_prebuilt_image({.bank = 1, .bases = context.pooled_bases(1), .content_key = 5});
  PrebuiltImageCache::Entry entry;
  ASSERT_TRUE(context.lookup_prebuilt_image(1, 5, &entry));
  // Same sizes: nothing moves, the image stays.
  ASSERT_TRUE(
      context.setup_static_arena(kProgram, 1, BankRequest{4 * kKiB, 4 * kKiB, 4 * kKiB}).is_ok());
  EXPECT_TRUE(context.lookup_prebuilt_image(1, 5, &entry));
  // A failed growth changes nothing either.
  rig.faults.fail_nth_allocation(1);
  EXPECT_EQ(
      context.setup_static_arena(kProgram, 1, BankRequest{8 * kKiB, 4 * kKiB, 4 * kKiB}).code(),
      RRT_ERR_OUT_OF_MEMORY);
  EXPECT_TRUE(context.lookup_prebuilt_image(1, 5, &entry));
  // A growth re-bases gm_heap: the image baked the old base and is dropped.
  ASSERT_TRUE(
      context.setup_static_arena(kProgram, 1, BankRequest{8 * kKiB, 4 * kKiB, 4 * kKiB}).is_ok());
  EXPECT_FALSE(context.lookup_prebuilt_image(1, 5, &entry));
  EXPECT_EQ(context.region_stats(GrowthPoint::kArenaGmHeap).base_changes, 1u);
}

TEST_F(DeviceContextTest, ResidentImagesAppendUntilTheFrozenPoolIsFull) {
  ASSERT_TRUE(context.latch().latch(ExecutionMode::kKernel).is_ok());
  rrt_capacity_plan_t plan{};
  plan.gm_heap_bytes = 4 * kKiB;
  plan.gm_sm_bytes = kKiB;
  plan.runtime_pool_bytes = 4 * kKiB;
  ASSERT_TRUE(context.commit_capacity_plan(plan, 0).is_ok());
  void *first = nullptr;
  void *second = nullptr;
  ASSERT_TRUE(context.place_resident_image(kKernel, 0, 0, 1500, &first).is_ok());
  ASSERT_TRUE(context.place_resident_image(kKernel, 0, 0, 500, &second).is_ok());
  EXPECT_EQ(static_cast<std::byte *>(second) - static_cast<std::byte *>(first), 2048);
  void *third = nullptr;
  const Status refused = context.place_resident_image(kKernel, 0, 0, 1025, &third);
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kArenaRuntimePool);
  EXPECT_EQ(refused.requested_bytes(), 3 * kKiB + 1025);
  EXPECT_EQ(refused.capacity_bytes(), 4 * kKiB);
  EXPECT_EQ(third, nullptr);
  // A callable that needs a larger gm_heap is refused on gm_heap, before anything moves.
  EXPECT_EQ(context.place_resident_image(kKernel, 8 * kKiB, 0, 100, &third).growth_point(),
            GrowthPoint::kArenaGmHeap);
  void *fits = nullptr;
  ASSERT_TRUE(context.place_resident_image(kKernel, 0, 0, 1024, &fits).is_ok());
  EXPECT_EQ(static_cast<std::byte *>(fits) - static_cast<std::byte *>(first), 3 * 1024);
  EXPECT_EQ(context.region_stats(GrowthPoint::kArenaRuntimePool).used, 4 * kKiB);
}

TEST_F(DeviceContextTest, ReleaseAllFreesEverything) {
  ASSERT_TRUE(
      context.setup_static_arena(kProgram, 0, BankRequest{4 * kKiB, 4 * kKiB, 4 * kKiB}).is_ok());
  ASSERT_TRUE(context.retained_begin(kProgram, 1, kKiB).is_ok());
  context.release_all();
  EXPECT_EQ(context.counters().live_bytes.load(), 0u);
  EXPECT_EQ(rig.counters().live_bytes, 0u);
  EXPECT_EQ(context.counters().device_alloc_calls.load(),
            context.counters().device_free_calls.load());
}

TEST_F(DeviceContextTest, OutOfRangeSlotsAndBanksAreRejected) {
  EXPECT_EQ(context.retained_begin(kProgram, 2, kKiB).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(context.setup_static_arena(kProgram, -1, BankRequest{}).code(),
            RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(context.retained_acquire(5, 1), nullptr);
  EXPECT_EQ(context.pooled_bases(9), BankBases{});
}

}  // namespace
}  // namespace replayrt
