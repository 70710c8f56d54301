// BlockTransaction: several blocks sized all-or-nothing: plan all, stage all, publish all,
// free superseded backings last.
#include "memory/block_transaction.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/allocation_failure_sweep.h"
#include "support/block_host_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using Event = testing::BlockHostRig::Event;
using EventKind = testing::BlockHostRig::EventKind;
using testing::BlockHostRig;
using testing::expect_refusal;
using testing::kKernel;
using testing::kProgram;

constexpr std::uint64_t kTransactionKiB = 1024;

struct Published {
  void *base;
  std::uint64_t capacity;
  bool operator==(const Published &) const = default;
};

class BlockTransactionTest : public ::testing::Test {
 protected:
  std::array<Published, 3> published() const {
    return {Published{first.base(), first.capacity()}, Published{second.base(), second.capacity()},
            Published{third.base(), third.capacity()}};
  }

  BlockHostRig host;
  GuardedBlock first{host, GrowthPoint::kRetainedStaging};
  GuardedBlock second{host, GrowthPoint::kGraphDefinition};
  GuardedBlock third{host, GrowthPoint::kHostStaging};
};

TEST_F(BlockTransactionTest, CommitSizesEveryBlock) {
  BlockTransaction txn;
  ASSERT_TRUE(txn.add(first, kTransactionKiB).is_ok());
  ASSERT_TRUE(txn.add(second, 2 * kTransactionKiB).is_ok());
  ASSERT_TRUE(txn.add(third, 0).is_ok());
  EXPECT_EQ(host.allocate_calls(), 0u) << "add() only plans";
  ASSERT_TRUE(txn.commit().is_ok());
  EXPECT_EQ(first.capacity(), kTransactionKiB);
  EXPECT_EQ(second.capacity(), 2 * kTransactionKiB);
  EXPECT_FALSE(third.is_published());
  EXPECT_EQ(host.counters().allocation_calls, 2u);
}

TEST_F(BlockTransactionTest, KeepOnlyTransactionAllocatesAndFreesNothing) {
  ASSERT_TRUE(first.reserve(2 * kTransactionKiB).is_ok());
  ASSERT_TRUE(second.reserve(2 * kTransactionKiB).is_ok());
  const auto held = published();
  const MemoryCounters before = host.counters();
  for (const GrowthContext context : {kProgram, kKernel, testing::kLaunch}) {
    host.set_context(context);
    BlockTransaction txn;
    ASSERT_TRUE(txn.add(first, 2 * kTransactionKiB).is_ok());
    ASSERT_TRUE(txn.add(second, kTransactionKiB).is_ok());
    ASSERT_TRUE(txn.add(third, 0).is_ok());
    ASSERT_TRUE(txn.commit().is_ok());
    EXPECT_EQ(published(), held);
  }
  EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(host.counters().free_calls, before.free_calls);
}

// A refusal of a later block comes back from add(), before anything is staged: the earlier
// block, which would have been a legal first allocation, is never allocated.
TEST_F(BlockTransactionTest, RefusalOfTheSecondBlockLeavesTheFirstUntouched) {
  host.set_context(kKernel);
  ASSERT_TRUE(second.reserve(kTransactionKiB).is_ok());
  const auto held = published();
  const std::uint64_t calls_before = host.allocate_calls();
  {
    BlockTransaction txn;
    ASSERT_TRUE(txn.add(first, 4 * kTransactionKiB).is_ok());
    EXPECT_TRUE(first.needs_backing());
    expect_refusal(txn.add(second, 2 * kTransactionKiB), GrowthPoint::kGraphDefinition,
                   2 * kTransactionKiB, kTransactionKiB);
  }
  EXPECT_FALSE(first.needs_backing()) << "the destroyed transaction undid the first plan";
  EXPECT_EQ(published(), held);
  EXPECT_EQ(host.allocate_calls(), calls_before);
  EXPECT_EQ(first.allocations(), 0u);
  EXPECT_EQ(first.refusals(), 0u);
  EXPECT_EQ(second.refusals(), 1u);
  EXPECT_EQ(host.refusals(GrowthPoint::kGraphDefinition), 1u);
  EXPECT_EQ(host.total_refusals(), 1u);

  // Both blocks stay usable.
  ASSERT_TRUE(first.reserve(4 * kTransactionKiB).is_ok());
  ASSERT_TRUE(second.reserve(kTransactionKiB).is_ok());
  EXPECT_EQ(second.base(), held[1].base);
}

TEST_F(BlockTransactionTest, DestroyedBeforeCommitUndoesEveryPlan) {
  ASSERT_TRUE(second.reserve(kTransactionKiB).is_ok());
  const auto held = published();
  {
    BlockTransaction txn;
    ASSERT_TRUE(txn.add(first, kTransactionKiB).is_ok());
    ASSERT_TRUE(txn.add(second, 4 * kTransactionKiB).is_ok());
    ASSERT_TRUE(txn.add(third, kTransactionKiB).is_ok());
  }
  EXPECT_FALSE(first.needs_backing());
  EXPECT_FALSE(second.needs_backing());
  EXPECT_FALSE(third.needs_backing());
  EXPECT_EQ(published(), held);
  EXPECT_EQ(host.allocate_calls(), 1u);
  // Nothing planned survives to a later stage() or publish().
  ASSERT_TRUE(first.stage().is_ok());
  first.publish();
  EXPECT_FALSE(first.is_published());
  EXPECT_EQ(host.allocate_calls(), 1u);
}

class BlockTransactionFailureTest : public ::testing::TestWithParam<bool> {};

// The second staged allocation fails: the first staged backing is freed again, and every
// block keeps the backing it had published.
TEST_P(BlockTransactionFailureTest, AllocationFailureOfTheSecondStagedBlockChangesNothing) {
  BlockHostRig host;
  {
    GuardedBlock first(host, GrowthPoint::kArenaGmHeap);
    GuardedBlock second(host, GrowthPoint::kArenaGmSm);
    GuardedBlock third(host, GrowthPoint::kArenaRuntimePool);
    ASSERT_TRUE(first.reserve(kTransactionKiB).is_ok());
    ASSERT_TRUE(second.reserve(kTransactionKiB).is_ok());
    void *const first_base = first.base();
    void *const second_base = second.base();
    const MemoryCounters before = host.counters();

    host.fail_nth_allocation(2, GetParam());
    BlockTransaction txn;
    ASSERT_TRUE(txn.add(first, 4 * kTransactionKiB).is_ok());
    ASSERT_TRUE(txn.add(second, 4 * kTransactionKiB).is_ok());
    ASSERT_TRUE(txn.add(third, 4 * kTransactionKiB).is_ok());
    const Status failed = txn.commit();
    EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_FALSE(failed.is_capacity_refusal());

    EXPECT_EQ(first.base(), first_base);
    EXPECT_EQ(first.capacity(), kTransactionKiB);
    EXPECT_EQ(second.base(), second_base);
    EXPECT_EQ(second.capacity(), kTransactionKiB);
    EXPECT_FALSE(third.is_published());
    EXPECT_TRUE(host.is_live(first_base));
    EXPECT_TRUE(host.is_live(second_base));
    EXPECT_EQ(first.base_changes() + second.base_changes(), 0u);
    // The first staged backing was allocated and freed again; the third was never staged.
    EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls + 1);
    EXPECT_EQ(host.counters().free_calls, before.free_calls + 1);
    EXPECT_EQ(host.counters().live_bytes, before.live_bytes);
    EXPECT_EQ(third.allocations(), 0u);
    EXPECT_FALSE(first.needs_backing());
    EXPECT_FALSE(third.needs_backing());

    BlockTransaction retry;
    ASSERT_TRUE(retry.add(first, 4 * kTransactionKiB).is_ok());
    ASSERT_TRUE(retry.add(second, 4 * kTransactionKiB).is_ok());
    ASSERT_TRUE(retry.add(third, 4 * kTransactionKiB).is_ok());
    ASSERT_TRUE(retry.commit().is_ok());
    EXPECT_EQ(third.capacity(), 4 * kTransactionKiB);
  }
  EXPECT_EQ(host.counters().allocation_calls, host.counters().free_calls);
  EXPECT_EQ(host.counters().live_bytes, 0u);
}

TEST_P(BlockTransactionFailureTest, FailedFirstAllocationsLeaveEveryBlockEmpty) {
  for (const std::uint64_t n : {1u, 2u, 3u}) {
    SCOPED_TRACE(::testing::Message() << "failing allocation " << n);
    BlockHostRig host(kKernel);
    GuardedBlock blocks[3] = {GuardedBlock(host, GrowthPoint::kArenaGmHeap),
                              GuardedBlock(host, GrowthPoint::kArenaGmSm),
                              GuardedBlock(host, GrowthPoint::kArenaRuntimePool)};
    host.fail_nth_allocation(n, GetParam());
    BlockTransaction txn;
    for (GuardedBlock &block : blocks) {
      ASSERT_TRUE(txn.add(block, kTransactionKiB).is_ok());
    }
    EXPECT_EQ(txn.commit().code(), RRT_ERR_OUT_OF_MEMORY);
    for (const GuardedBlock &block : blocks) {
      EXPECT_FALSE(block.is_published());
      EXPECT_EQ(block.allocations(), block.frees());
    }
    EXPECT_EQ(host.counters().live_bytes, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(NullAndThrow, BlockTransactionFailureTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "Throw" : "Null");
                         });

TEST_F(BlockTransactionTest, HostRefusalWhileStagingAbortsEveryStagedBlock) {
  ASSERT_TRUE(first.reserve(kTransactionKiB).is_ok());
  const auto held = published();
  host.refuse_nth_allocation(2);
  BlockTransaction txn;
  ASSERT_TRUE(txn.add(first, 2 * kTransactionKiB).is_ok());
  ASSERT_TRUE(txn.add(second, 2 * kTransactionKiB).is_ok());
  const Status refused = txn.commit();
  EXPECT_TRUE(refused.is_capacity_refusal());
  EXPECT_EQ(published(), held);
  EXPECT_EQ(second.refusals(), 1u);
  EXPECT_EQ(host.counters().live_bytes, kTransactionKiB);
}

// Publish all, then free superseded backings: when the first old backing is freed, every
// block already publishes its new backing, and every other old backing is still live.
TEST_F(BlockTransactionTest, PublishesEveryBlockBeforeFreeingAnySupersededBacking) {
  ASSERT_TRUE(first.reserve(kTransactionKiB).is_ok());
  ASSERT_TRUE(second.reserve(kTransactionKiB).is_ok());
  ASSERT_TRUE(third.reserve(kTransactionKiB).is_ok());
  const auto old = published();
  std::vector<const void *> freed;
  host.on_free([&](const void *ptr) {
    for (std::size_t i = 0; i < old.size(); ++i) {
      const GuardedBlock &block = i == 0 ? first : (i == 1 ? second : third);
      EXPECT_NE(block.base(), old[i].base) << "block " << i << " not yet published";
      EXPECT_TRUE(host.is_live(block.base()));
      const bool already_freed = std::find(freed.begin(), freed.end(), old[i].base) != freed.end();
      EXPECT_EQ(host.is_live(old[i].base), !already_freed) << "block " << i;
    }
    freed.push_back(ptr);
  });

  BlockTransaction txn;
  ASSERT_TRUE(txn.add(first, 2 * kTransactionKiB).is_ok());
  ASSERT_TRUE(txn.add(second, 2 * kTransactionKiB).is_ok());
  ASSERT_TRUE(txn.add(third, 2 * kTransactionKiB).is_ok());
  ASSERT_TRUE(txn.commit().is_ok());
  host.on_free(nullptr);
  EXPECT_EQ(freed, (std::vector<const void *>{old[0].base, old[1].base, old[2].base}));

  // Every allocation of the commit precedes every free.
  const std::vector<Event> &events = host.events();
  const std::vector<Event> commit_events(events.end() - 6, events.end());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(commit_events[static_cast<std::size_t>(i)].kind, EventKind::kAllocate);
    EXPECT_EQ(commit_events[static_cast<std::size_t>(i) + 3].kind, EventKind::kFree);
  }
  EXPECT_EQ(first.base_changes() + second.base_changes() + third.base_changes(), 3u);
  EXPECT_EQ(host.counters().peak_live_bytes, 9 * kTransactionKiB);
}

TEST_F(BlockTransactionTest, AddingPastTheLimitAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        std::vector<std::unique_ptr<GuardedBlock>> blocks;
        BlockTransaction txn;
        for (std::size_t i = 0; i <= BlockTransaction::kMaxBlocks; ++i) {
          blocks.push_back(std::make_unique<GuardedBlock>(host, GrowthPoint::kHostStaging));
          (void)txn.add(*blocks.back(), 0);
        }
      },
      "");
}

TEST_F(BlockTransactionTest, AddingAfterCommitAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        BlockTransaction txn;
        (void)txn.add(first, kTransactionKiB);
        (void)txn.commit();
        (void)txn.add(second, kTransactionKiB);
      },
      "");
}

TEST_F(BlockTransactionTest, TheLimitHoldsKMaxBlocks) {
  std::vector<std::unique_ptr<GuardedBlock>> blocks;
  BlockTransaction txn;
  for (std::size_t i = 0; i < BlockTransaction::kMaxBlocks; ++i) {
    blocks.push_back(std::make_unique<GuardedBlock>(host, GrowthPoint::kHostStaging));
    ASSERT_TRUE(txn.add(*blocks.back(), kTransactionKiB).is_ok());
  }
  ASSERT_TRUE(txn.commit().is_ok());
  for (const auto &block : blocks) {
    EXPECT_EQ(block->capacity(), kTransactionKiB);
  }
}

// ---- allocation-failure sweep ------------------------------------------------------------

// The shape of a multi-block call: four blocks sized together, transaction after transaction.
struct Blocks {
  explicit Blocks(BlockHost &host)
      : blocks{std::make_unique<GuardedBlock>(host, GrowthPoint::kArenaGmHeap),
               std::make_unique<GuardedBlock>(host, GrowthPoint::kArenaGmSm),
               std::make_unique<GuardedBlock>(host, GrowthPoint::kRetainedStaging),
               std::make_unique<GuardedBlock>(host, GrowthPoint::kGraphDefinition)} {}

  std::unique_ptr<GuardedBlock> blocks[4];
};

std::vector<Published> blocks_published_state(const Blocks &set) {
  std::vector<Published> state;
  for (const auto &block : set.blocks) {
    state.push_back({block->base(), block->capacity()});
  }
  return state;
}

std::vector<const void *> blocks_live_addresses(const std::vector<Published> &state) {
  std::vector<const void *> addresses;
  for (const Published &block : state) {
    if (block.base != nullptr) {
      addresses.push_back(block.base);
    }
  }
  return addresses;
}

using BlocksStep = testing::SweepStep<Blocks>;

BlocksStep size_all(std::array<std::uint64_t, 4> required) {
  return [=](Blocks &set) {
    BlockTransaction txn;
    for (std::size_t i = 0; i < required.size(); ++i) {
      RRT_RETURN_IF_ERROR(txn.add(*set.blocks[i], required[i]));
    }
    return txn.commit();
  };
}

std::vector<BlocksStep> blocks_scenario(ExecutionMode mode) {
  if (mode == ExecutionMode::kProgram) {
    return {
        size_all({4 * kTransactionKiB, kTransactionKiB, 0, 2 * kTransactionKiB}),
        size_all({4 * kTransactionKiB, 2 * kTransactionKiB, kTransactionKiB, 0}),
        size_all(
            {8 * kTransactionKiB, 2 * kTransactionKiB, 4 * kTransactionKiB, 8 * kTransactionKiB}),
        size_all({kTransactionKiB, kTransactionKiB, kTransactionKiB, kTransactionKiB}),
        size_all({16 * kTransactionKiB, 0, 0, 16 * kTransactionKiB}),
    };
  }
  return {
      size_all({4 * kTransactionKiB, 0, 2 * kTransactionKiB, 0}),
      size_all({4 * kTransactionKiB, kTransactionKiB, 2 * kTransactionKiB, 2 * kTransactionKiB}),
      size_all({kTransactionKiB, kTransactionKiB, kTransactionKiB, kTransactionKiB}),
  };
}

testing::SweepSubject<Blocks, std::vector<Published>> blocks_subject() {
  return {[](BlockHost &host) { return std::make_unique<Blocks>(host); }, blocks_published_state,
          blocks_live_addresses};
}

class BlockTransactionSweepTest : public ::testing::TestWithParam<testing::SweepParam> {};

TEST_P(BlockTransactionSweepTest, EveryAllocationPointFailsWithoutSideEffects) {
  const auto [mode, throws] = GetParam();
  testing::sweep_allocation_failures(blocks_subject(), blocks_scenario(mode), mode, throws, 4);
}

INSTANTIATE_TEST_SUITE_P(ModesAndFailureKinds, BlockTransactionSweepTest, testing::sweep_params(),
                         testing::sweep_param_name);

}  // namespace
}  // namespace replayrt
