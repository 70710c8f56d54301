#include "memory/prebuilt_image_cache.h"

#include <gtest/gtest.h>

#include "support/block_host_rig.h"

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

TEST(PrebuiltImageCacheTest, EntryIsTheValidEntryOrNull) {
  PrebuiltImageCache cache;
  EXPECT_EQ(cache.entry(), nullptr);
  const PrebuiltImageCache::Entry stored{
      .bank = 0, .bases = fake_bases(0x10000), .content_key = 3, .image_bytes = 64};
  cache.store(stored);
  ASSERT_NE(cache.entry(), nullptr);
  EXPECT_EQ(*cache.entry(), stored);
  cache.invalidate_bank(0);
  EXPECT_EQ(cache.entry(), nullptr);
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

// The cache is invalidated exactly when a commit changes the bank's bases; a refusal or a
// failed allocation changes none.
TEST(PrebuiltImageCacheTest, SurvivesRefusalsAndAllocationFailuresOfItsBank) {
  testing::BlockHostRig host(GrowthContext{ExecutionMode::kKernel, false});
  ArenaBank bank(host);
  PrebuiltImageCache cache;
  const BankRequest plan{4096, 4096, 4096};
  auto commit = [&](const BankRequest &request) {
    const BankBases before = bank.bases();
    Status status = bank.commit(request);
    if (bank.bases() != before) {
      cache.invalidate_bank(0);
    }
    return status;
  };
  ASSERT_TRUE(commit(plan).is_ok());
  cache.store({.bank = 0, .bases = bank.bases(), .content_key = 9});

  EXPECT_EQ(commit(BankRequest{8192, 4096, 4096}).code(), RRT_ERR_INTERNAL);
  EXPECT_TRUE(cache.is_valid());

  host.set_mode(ExecutionMode::kProgram);
  host.fail_nth_allocation(1, false);
  EXPECT_EQ(commit(BankRequest{8192, 4096, 4096}).code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_TRUE(cache.is_valid());
  PrebuiltImageCache::Entry entry;
  EXPECT_TRUE(cache.lookup(0, 9, bank.bases(), &entry));

  ASSERT_TRUE(commit(BankRequest{8192, 4096, 4096}).is_ok());
  EXPECT_FALSE(cache.is_valid());
}

}  // namespace
}  // namespace replayrt
