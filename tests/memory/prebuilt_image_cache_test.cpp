#include "memory/prebuilt_image_cache.h"

#include <gtest/gtest.h>

#include "support/device_rig.h"

namespace replayrt {
namespace {

BankBases fake_bases(std::uintptr_t seed) {
  return BankBases{reinterpret_cast<void *>(seed), reinterpret_cast<void *>(seed + 0x1000),
                   reinterpret_cast<void *>(seed + 0x2000)};
}

TEST(PrebuiltImageCacheTest, StartsEmpty) {
  PrebuiltImageCache cache;
  PrebuiltImageCache::Entry entry;
  EXPECT_FALSE(cache.is_valid());
  EXPECT_FALSE(cache.lookup(0, 1, BankBases{}, &entry));
}

TEST(PrebuiltImageCacheTest, HitsOnlyForTheSameBankKeyAndBases) {
  PrebuiltImageCache cache;
  const BankBases bases = fake_bases(0x10000);
  cache.store(
      {.bank = 1, .bases = bases, .content_key = 42, .image_offset = 64, .image_bytes = 512});
  PrebuiltImageCache::Entry entry;
  ASSERT_TRUE(cache.lookup(1, 42, bases, &entry));
  EXPECT_EQ(entry.image_offset, 64u);
  EXPECT_EQ(entry.image_bytes, 512u);
  EXPECT_FALSE(cache.lookup(0, 42, bases, &entry));
  EXPECT_FALSE(cache.lookup(1, 43, bases, &entry));
  EXPECT_FALSE(cache.lookup(1, 42, fake_bases(0x20000), &entry));
  EXPECT_FALSE(cache.lookup(1, 42, bases, nullptr));
}

TEST(PrebuiltImageCacheTest, InvalidationIsPerBank) {
  PrebuiltImageCache cache;
  const BankBases bases = fake_bases(0x10000);
  cache.store({.bank = 0, .bases = bases, .content_key = 7});
  cache.invalidate_bank(1);
  EXPECT_TRUE(cache.is_valid());
  EXPECT_EQ(cache.invalidations(), 0u);
  cache.invalidate_bank(0);
  EXPECT_FALSE(cache.is_valid());
  EXPECT_EQ(cache.invalidations(), 1u);
  PrebuiltImageCache::Entry entry;
  EXPECT_FALSE(cache.lookup(0, 7, bases, &entry));
}

// The cache is invalidated exactly when a commit reports bases_changed; a refusal or a failed
// allocation reports no change.
TEST(PrebuiltImageCacheTest, SurvivesRefusalsAndAllocationFailuresOfItsBank) {
  testing::DeviceRig rig;
  ArenaBank bank(rig.allocator);
  PrebuiltImageCache cache;
  const GrowthContext kernel{ExecutionMode::kKernel, false};
  const BankRequest plan{4096, 4096, 4096};
  auto commit = [&](const BankRequest &request, GrowthContext context) {
    BankCommitOutcome outcome = bank.commit(request, context);
    if (outcome.bases_changed) {
      cache.invalidate_bank(0);
    }
    return outcome;
  };
  ASSERT_TRUE(commit(plan, kernel).status.is_ok());
  cache.store({.bank = 0, .bases = bank.bases(), .content_key = 9});

  EXPECT_EQ(commit(BankRequest{8192, 4096, 4096}, kernel).status.code(), RRT_ERR_INTERNAL);
  EXPECT_TRUE(cache.is_valid());

  const GrowthContext program{ExecutionMode::kProgram, false};
  rig.faults.fail_nth_allocation(1);
  EXPECT_EQ(commit(BankRequest{8192, 4096, 4096}, program).status.code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_TRUE(cache.is_valid());
  PrebuiltImageCache::Entry entry;
  EXPECT_TRUE(cache.lookup(0, 9, bank.bases(), &entry));

  ASSERT_TRUE(commit(BankRequest{8192, 4096, 4096}, program).status.is_ok());
  EXPECT_FALSE(cache.is_valid());
}

}  // namespace
}  // namespace replayrt
