#include "memory/device_arena.h"

#include <cstdint>

#include <gtest/gtest.h>

#include "support/device_rig.h"

namespace replayrt {
namespace {

std::uintptr_t address(const void *ptr) {
  return reinterpret_cast<std::uintptr_t>(ptr);
}

class DeviceArenaTest : public ::testing::Test {
 protected:
  testing::DeviceRig rig;
  DeviceArena arena{rig.allocator};
};

TEST_F(DeviceArenaTest, ReserveLaysOutAlignedRegions) {
  EXPECT_EQ(arena.reserve(100, 64), 0u);
  EXPECT_EQ(arena.reserve(10, 64), 128u);
  EXPECT_EQ(arena.reserve(0, 256), 256u);
  EXPECT_EQ(arena.reserve(1, 1), 256u);
  EXPECT_EQ(arena.total_size(), 257u);
  EXPECT_EQ(arena.region_size(128), 10u);
  EXPECT_EQ(arena.region_size(7), 0u);
}

TEST_F(DeviceArenaTest, ReserveRejectsBadAlignmentFullTableAndCommittedArena) {
  EXPECT_EQ(arena.reserve(8, 3), DeviceArena::kInvalidOffset);
  EXPECT_EQ(arena.reserve(8, 0), DeviceArena::kInvalidOffset);
  for (std::size_t i = 0; i < DeviceArena::kMaxRegions; ++i) {
    ASSERT_NE(arena.reserve(8, 8), DeviceArena::kInvalidOffset);
  }
  EXPECT_EQ(arena.reserve(8, 8), DeviceArena::kInvalidOffset);
  arena.release();
  ASSERT_NE(arena.reserve(8, 8), DeviceArena::kInvalidOffset);
  ASSERT_NE(arena.commit(), nullptr);
  EXPECT_EQ(arena.reserve(8, 8), DeviceArena::kInvalidOffset);
}

TEST_F(DeviceArenaTest, ReserveRejectsOverflow) {
  ASSERT_NE(arena.reserve(16, 16), DeviceArena::kInvalidOffset);
  EXPECT_EQ(arena.reserve(static_cast<std::size_t>(-1) - 8, 16), DeviceArena::kInvalidOffset);
}

TEST_F(DeviceArenaTest, CommitAllocatesOnceAndIsIdempotent) {
  const std::size_t a = arena.reserve(100, 64);
  const std::size_t b = arena.reserve(200, 512);
  void *const base = arena.commit();
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(address(base) % DeviceArena::kDefaultBaseAlignment, 0u);
  EXPECT_EQ(arena.commit(), base);
  EXPECT_EQ(arena.alloc_count(), 1u);
  EXPECT_EQ(rig.counters().allocation_calls, 1u);
  EXPECT_EQ(arena.region_ptr(a), base);
  EXPECT_EQ(address(arena.region_ptr(b)), address(base) + b);
  EXPECT_TRUE(arena.is_committed());
}

TEST_F(DeviceArenaTest, CommitHonoursALargerBaseAlignment) {
  arena.reserve(100, 1);
  void *const base = arena.commit(8192);
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(address(base) % 8192, 0u);
}

TEST_F(DeviceArenaTest, CommitFailureLeavesTheArenaUncommittedWithItsReservations) {
  const std::size_t offset = arena.reserve(100, 64);
  rig.faults.fail_nth_allocation(1);
  EXPECT_EQ(arena.commit(), nullptr);
  EXPECT_FALSE(arena.is_committed());
  EXPECT_EQ(arena.alloc_count(), 0u);
  EXPECT_EQ(arena.region_size(offset), 100u);
  rig.faults.throw_on_nth_allocation(1);
  EXPECT_EQ(arena.commit(), nullptr);
  EXPECT_FALSE(arena.is_committed());
  EXPECT_NE(arena.commit(), nullptr);
}

TEST_F(DeviceArenaTest, RegionPtrIsNullBeforeCommit) {
  arena.reserve(8, 8);
  EXPECT_EQ(arena.region_ptr(0), nullptr);
  EXPECT_EQ(arena.base(), nullptr);
}

TEST_F(DeviceArenaTest, ReleaseFreesAndResetsToTheConstructedState) {
  arena.reserve(100, 64);
  void *const base = arena.commit();
  arena.release();
  EXPECT_FALSE(arena.is_committed());
  EXPECT_EQ(arena.total_size(), 0u);
  EXPECT_EQ(arena.base(), nullptr);
  EXPECT_EQ(arena.free_count(), 1u);
  EXPECT_FALSE(rig.device.find_allocation(base).has_value());
  arena.release();
  EXPECT_EQ(arena.free_count(), 1u);
}

TEST_F(DeviceArenaTest, AttachWrapsCallerMemoryAndNeverFreesIt) {
  void *const external = rig.device.allocate(4096);
  arena.attach(external);
  EXPECT_TRUE(arena.is_committed());
  EXPECT_TRUE(arena.is_attached());
  EXPECT_EQ(arena.base(), external);
  EXPECT_EQ(arena.region_size(0), 0u);
  arena.attach(external);  // re-attach is allowed
  arena.release();
  EXPECT_EQ(arena.free_count(), 0u);
  EXPECT_TRUE(rig.device.find_allocation(external).has_value());
  EXPECT_TRUE(rig.device.free(external).is_ok());
}

using DeviceArenaDeathTest = DeviceArenaTest;

TEST_F(DeviceArenaDeathTest, AttachAbortsOnInvalidBases) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(arena.attach(nullptr), "null base");
  void *const external = rig.device.allocate(4096);
  EXPECT_DEATH(arena.attach(static_cast<std::byte *>(external) + 8), "not aligned");
  EXPECT_DEATH(arena.attach(external, 3), "power of two");
  arena.reserve(8, 8);
  ASSERT_NE(arena.commit(), nullptr);
  EXPECT_DEATH(arena.attach(external), "committed allocation");
  EXPECT_TRUE(rig.device.free(external).is_ok());
}

TEST_F(DeviceArenaTest, AbandonForgetsTheBackingWithoutFreeing) {
  arena.reserve(100, 64);
  void *const base = arena.commit();
  arena.abandon_after_device_failure();
  EXPECT_FALSE(arena.is_committed());
  EXPECT_EQ(arena.free_count(), 0u);
  EXPECT_TRUE(rig.device.find_allocation(base).has_value());
  EXPECT_TRUE(rig.device.free(base).is_ok());
}

TEST_F(DeviceArenaTest, StagedReplacementLeavesThePublishedBackingUntilPublished) {
  arena.reserve(100, 64);
  void *const old_base = arena.commit();
  ASSERT_TRUE(arena.stage_replacement(4096));
  EXPECT_TRUE(arena.has_staged_replacement());
  EXPECT_EQ(arena.base(), old_base);
  EXPECT_EQ(arena.total_size(), 100u);

  arena.publish_replacement();
  EXPECT_NE(arena.base(), old_base);
  EXPECT_EQ(arena.total_size(), 4096u);
  EXPECT_EQ(arena.region_size(0), 4096u);
  // The superseded backing lives until the transaction frees it.
  EXPECT_TRUE(rig.device.find_allocation(old_base).has_value());
  arena.free_superseded();
  EXPECT_FALSE(rig.device.find_allocation(old_base).has_value());
  EXPECT_EQ(arena.alloc_count(), 2u);
  EXPECT_EQ(arena.free_count(), 1u);
}

TEST_F(DeviceArenaTest, AbortedReplacementChangesNothing) {
  arena.reserve(100, 64);
  void *const base = arena.commit();
  ASSERT_TRUE(arena.stage_replacement(4096));
  arena.abort_replacement();
  EXPECT_FALSE(arena.has_staged_replacement());
  EXPECT_EQ(arena.base(), base);
  EXPECT_EQ(arena.total_size(), 100u);
  EXPECT_EQ(arena.alloc_count(), 2u);
  EXPECT_EQ(arena.free_count(), 1u);
  EXPECT_EQ(rig.counters().live_bytes, 1024u);
}

TEST_F(DeviceArenaTest, FailedStagingChangesNothing) {
  arena.reserve(100, 64);
  void *const base = arena.commit();
  rig.faults.fail_nth_allocation(1);
  EXPECT_FALSE(arena.stage_replacement(4096));
  rig.faults.throw_on_nth_allocation(1);
  EXPECT_FALSE(arena.stage_replacement(4096));
  EXPECT_FALSE(arena.has_staged_replacement());
  EXPECT_EQ(arena.base(), base);
  EXPECT_EQ(arena.alloc_count(), 1u);
}

TEST_F(DeviceArenaTest, StagingIntoAnEmptyArenaPublishesAFirstCommit) {
  ASSERT_TRUE(arena.stage_replacement(2048));
  EXPECT_FALSE(arena.is_committed());
  arena.publish_replacement();
  EXPECT_TRUE(arena.is_committed());
  EXPECT_NE(arena.base(), nullptr);
  arena.free_superseded();
  EXPECT_EQ(arena.free_count(), 0u);
}

TEST_F(DeviceArenaTest, ReleaseAlsoFreesStagedAndSupersededBackings) {
  arena.reserve(100, 64);
  ASSERT_NE(arena.commit(), nullptr);
  ASSERT_TRUE(arena.stage_replacement(2048));
  arena.publish_replacement();
  ASSERT_TRUE(arena.stage_replacement(4096));
  arena.release();
  EXPECT_EQ(arena.alloc_count(), arena.free_count());
  EXPECT_EQ(rig.counters().live_bytes, 0u);
}

TEST_F(DeviceArenaTest, DestructorReleases) {
  {
    DeviceArena scoped(rig.allocator);
    scoped.reserve(64, 64);
    ASSERT_NE(scoped.commit(), nullptr);
  }
  EXPECT_EQ(rig.counters().live_bytes, 0u);
}

}  // namespace
}  // namespace replayrt
