#include "runtime/generation_registry.h"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace replayrt {
namespace {

constexpr std::uint64_t kUntouched = 12345;

TEST(GenerationRegistry, ClaimingZeroPicksTheLargestUnclaimedGeneration) {
  GenerationRegistry registry;
  std::uint64_t claimed = 0;
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX);
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX - 1);
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX - 2);
}

TEST(GenerationRegistry, ClaimingARequestedGenerationGivesExactlyIt) {
  GenerationRegistry registry;
  std::uint64_t claimed = 0;
  ASSERT_TRUE(registry.claim(7, &claimed).is_ok());
  EXPECT_EQ(claimed, 7u);
  // Small requested generations do not move what 0 picks.
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX);
}

TEST(GenerationRegistry, ClaimingATakenGenerationIsRefusedAndClaimsNothing) {
  GenerationRegistry registry;
  std::uint64_t claimed = 0;
  ASSERT_TRUE(registry.claim(7, &claimed).is_ok());
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());

  claimed = kUntouched;
  const Status taken = registry.claim(7, &claimed);
  EXPECT_EQ(taken.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(taken.message().find('7'), std::string::npos) << taken.message();
  EXPECT_EQ(claimed, kUntouched);
  EXPECT_EQ(registry.claim(UINT64_MAX, &claimed).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(claimed, kUntouched);

  // The refusals changed nothing: 0 still picks the next one down, and one unclaim frees 7.
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX - 1);
  registry.unclaim(7);
  ASSERT_TRUE(registry.claim(7, &claimed).is_ok());
  EXPECT_EQ(claimed, 7u);
}

TEST(GenerationRegistry, AnUnclaimedGenerationIsClaimableAgain) {
  GenerationRegistry registry;
  std::uint64_t claimed = 0;
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  ASSERT_EQ(claimed, UINT64_MAX - 2);

  // 0 fills the gap an unclaim leaves, then continues below the claimed run.
  registry.unclaim(UINT64_MAX - 1);
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX - 1);
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX - 3);

  registry.unclaim(UINT64_MAX);
  ASSERT_TRUE(registry.claim(UINT64_MAX, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX);
  // Unclaiming a generation never claimed is a no-op.
  registry.unclaim(99);
  ASSERT_TRUE(registry.claim(99, &claimed).is_ok());
}

TEST(GenerationRegistry, ClaimingZeroSkipsAGenerationClaimedByRequest) {
  GenerationRegistry registry;
  std::uint64_t claimed = 0;
  ASSERT_TRUE(registry.claim(UINT64_MAX - 1, &claimed).is_ok());
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX);
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX - 2);
}

TEST(GenerationRegistry, TwoRegistriesAreIndependent) {
  GenerationRegistry first;
  GenerationRegistry second;
  std::uint64_t claimed = 0;
  ASSERT_TRUE(first.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX);
  ASSERT_TRUE(second.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX);
  ASSERT_TRUE(first.claim(5, &claimed).is_ok());
  ASSERT_TRUE(second.claim(5, &claimed).is_ok());
  first.unclaim(5);
  EXPECT_EQ(second.claim(5, &claimed).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(first.claim(5, &claimed).is_ok());
}

// A claim not kept gives its generation back when it goes; a kept one holds it for good; a
// refused claim gives back nothing, not even the generation another claim holds.
TEST(GenerationClaim, GivesItsGenerationBackUnlessKept) {
  GenerationRegistry registry;
  std::uint64_t claimed = 0;
  {
    GenerationClaim dropped(registry);
    ASSERT_TRUE(dropped.claim(7).is_ok());
    EXPECT_EQ(dropped.generation(), 7u);
    EXPECT_EQ(registry.claim(7, &claimed).code(), RRT_ERR_INVALID_ARGUMENT);
  }
  {
    GenerationClaim kept(registry);
    ASSERT_TRUE(kept.claim(7).is_ok());
    kept.keep();
  }
  {
    GenerationClaim refused(registry);
    EXPECT_EQ(refused.claim(7).code(), RRT_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(refused.generation(), 0u);
  }
  EXPECT_EQ(registry.claim(7, &claimed).code(), RRT_ERR_INVALID_ARGUMENT);
  {
    GenerationClaim picked(registry);
    ASSERT_TRUE(picked.claim(0).is_ok());
    EXPECT_EQ(picked.generation(), UINT64_MAX);
  }
  ASSERT_TRUE(registry.claim(0, &claimed).is_ok());
  EXPECT_EQ(claimed, UINT64_MAX);
}

TEST(GenerationRegistry, ProcessWideIsOneRegistry) {
  EXPECT_EQ(&GenerationRegistry::process_wide(), &GenerationRegistry::process_wide());
}

// Concurrent claims of 0 each get a distinct generation, together the top of the range.
TEST(GenerationRegistry, ConcurrentClaimsGetDistinctGenerations) {
  constexpr std::size_t kThreads = 4;
  constexpr std::size_t kClaims = 500;
  GenerationRegistry registry;
  std::vector<std::vector<std::uint64_t>> claims(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&registry, &mine = claims[t]] {
      for (std::size_t i = 0; i < kClaims; ++i) {
        std::uint64_t claimed = 0;
        if (registry.claim(0, &claimed).is_ok()) {
          mine.push_back(claimed);
        }
      }
    });
  }
  for (std::thread &thread : threads) {
    thread.join();
  }
  std::set<std::uint64_t> all;
  for (const std::vector<std::uint64_t> &mine : claims) {
    EXPECT_EQ(mine.size(), kClaims);
    all.insert(mine.begin(), mine.end());
  }
  ASSERT_EQ(all.size(), kThreads * kClaims);
  EXPECT_EQ(*all.begin(), UINT64_MAX - (kThreads * kClaims) + 1);
  EXPECT_EQ(*all.rbegin(), UINT64_MAX);
}

}  // namespace
}  // namespace replayrt
