#include "platform/allocation_table.h"

#include <gtest/gtest.h>

namespace replayrt {
namespace {

constexpr std::uintptr_t kBase = 0x100000;

TEST(AllocationTableTest, GenerationsAreFreshAndNeverReused) {
  AllocationTable table(0);
  std::uint64_t first = 0;
  std::uint64_t second = 0;
  ASSERT_TRUE(table.insert(kBase, 4096, false, &first).is_ok());
  ASSERT_TRUE(table.insert(kBase + 4096, 4096, false, &second).is_ok());
  EXPECT_NE(first, second);
  AllocationInfo erased;
  ASSERT_TRUE(table.erase(kBase, &erased).is_ok());
  EXPECT_EQ(erased.generation, first);
  std::uint64_t again = 0;
  ASSERT_TRUE(table.insert(kBase, 4096, false, &again).is_ok());
  EXPECT_NE(again, first);
  EXPECT_NE(again, second);
}

TEST(AllocationTableTest, FindCoversExactlyTheAllocation) {
  AllocationTable table(0);
  std::uint64_t generation = 0;
  ASSERT_TRUE(table.insert(kBase, 1024, false, &generation).is_ok());
  EXPECT_FALSE(table.find(kBase - 1).has_value());
  ASSERT_TRUE(table.find(kBase + 1023).has_value());
  EXPECT_EQ(table.find(kBase + 1023)->base, kBase);
  EXPECT_FALSE(table.find(kBase + 1024).has_value());
  EXPECT_TRUE(table.check_range(reinterpret_cast<void *>(kBase + 24), 1000, "x").is_ok());
  EXPECT_EQ(table.check_range(reinterpret_cast<void *>(kBase + 24), 1001, "x").code(),
            RRT_ERR_INVALID_ARGUMENT);
}

TEST(AllocationTableTest, OverlappingInsertsAreRefusedAndChangeNothing) {
  AllocationTable table(0);
  std::uint64_t generation = 0;
  ASSERT_TRUE(table.insert(kBase, 1024, false, &generation).is_ok());
  std::uint64_t refused = 0;
  EXPECT_EQ(table.insert(kBase + 512, 1024, false, &refused).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(table.insert(kBase - 512, 1024, false, &refused).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(table.insert(kBase, 0, false, &refused).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(table.live_count(), 1U);
  EXPECT_EQ(table.counters().allocation_calls, 1U);
}

TEST(AllocationTableTest, AStaleCaptureIsFoundAfterFreeAndAfterABA) {
  AllocationTable table(0);
  std::uint64_t generation = 0;
  ASSERT_TRUE(table.insert(kBase, 1024, false, &generation).is_ok());
  const CapturedAddress captured[] = {{kBase + 16, kBase, generation}};
  EXPECT_EQ(table.first_stale(captured), 1U);
  AllocationInfo erased;
  ASSERT_TRUE(table.erase(kBase, &erased).is_ok());
  EXPECT_EQ(table.first_stale(captured), 0U) << "freed";
  std::uint64_t reused = 0;
  ASSERT_TRUE(table.insert(kBase, 1024, false, &reused).is_ok());
  EXPECT_EQ(table.first_stale(captured), 0U) << "a new allocation at the same base (ABA)";
}

TEST(AllocationTableTest, TheFreeEpochAdvancesOnlyOnFrees) {
  AllocationTable table(0);
  const std::uint64_t start = table.free_epoch();
  std::uint64_t generation = 0;
  ASSERT_TRUE(table.insert(kBase, 1024, false, &generation).is_ok());
  ASSERT_TRUE(table.insert(kBase + 4096, 1024, true, &generation).is_ok());
  EXPECT_EQ(table.free_epoch(), start) << "inserts leave every earlier entry live";
  AllocationInfo erased;
  EXPECT_FALSE(table.erase(kBase + 1, &erased).is_ok());
  EXPECT_EQ(table.free_epoch(), start) << "a refused free changes nothing";
  ASSERT_TRUE(table.erase(kBase, &erased).is_ok());
  EXPECT_EQ(table.free_epoch(), start + 1);
  ASSERT_TRUE(table.erase_foreign(kBase + 4096).is_ok());
  EXPECT_EQ(table.free_epoch(), start + 2);
}

TEST(AllocationTableTest, TheQuarantineHoldsFreedBlocksUntilNewerFreesPushThemOut) {
  AllocationTable table(2048);
  std::uint64_t generation = 0;
  for (std::uintptr_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(table.insert(kBase + i * 4096, 1024, false, &generation).is_ok());
  }
  AllocationInfo erased;
  AllocationTable::Evicted evicted;
  ASSERT_TRUE(table.erase(kBase, &erased).is_ok());
  ASSERT_TRUE(table.erase(kBase + 4096, &erased).is_ok());
  EXPECT_FALSE(table.pop_evicted(&evicted)) << "2048 bytes fit the quarantine";
  EXPECT_EQ(table.quarantined_bytes(), 2048U);
  const Status twice = table.erase(kBase, &erased);
  EXPECT_EQ(twice.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(twice.message().find("already freed"), std::string::npos) << twice.message();
  ASSERT_TRUE(table.erase(kBase + 8192, &erased).is_ok());
  ASSERT_TRUE(table.pop_evicted(&evicted));
  EXPECT_EQ(evicted.base, kBase) << "the oldest block leaves first";
  EXPECT_FALSE(table.pop_evicted(&evicted));
}

TEST(AllocationTableTest, AZeroQuarantineReleasesAtOnce) {
  AllocationTable table(0);
  std::uint64_t generation = 0;
  ASSERT_TRUE(table.insert(kBase, 1024, false, &generation).is_ok());
  AllocationInfo erased;
  ASSERT_TRUE(table.erase(kBase, &erased).is_ok());
  AllocationTable::Evicted evicted;
  ASSERT_TRUE(table.pop_evicted(&evicted));
  EXPECT_EQ(evicted.base, kBase);
  EXPECT_EQ(evicted.size, 1024U);
}

TEST(AllocationTableTest, ForeignEntriesAreLiveButNeverFreedOrCounted) {
  AllocationTable table(0);
  std::uint64_t generation = 0;
  ASSERT_TRUE(table.insert(kBase, 1024, true, &generation).is_ok());
  EXPECT_TRUE(table.find(kBase + 8).has_value());
  EXPECT_TRUE(table.is_foreign(kBase));
  EXPECT_EQ(table.counters().allocation_calls, 0U);
  AllocationInfo erased;
  EXPECT_EQ(table.erase(kBase, &erased).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(table.erase_foreign(kBase + 8).code(), RRT_ERR_INVALID_ARGUMENT);
  ASSERT_TRUE(table.erase_foreign(kBase).is_ok());
  EXPECT_FALSE(table.find(kBase).has_value());
  AllocationTable::Evicted evicted;
  EXPECT_FALSE(table.pop_evicted(&evicted)) << "foreign memory is never released";
}

}  // namespace
}  // namespace replayrt
