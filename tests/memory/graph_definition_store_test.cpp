#include "memory/graph_definition_store.h"

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "memory/block_transaction.h"
#include "support/allocation_failure_sweep.h"
#include "support/block_host_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using testing::BlockHostRig;
using testing::byte_at;
using testing::expect_refusal;
using testing::expect_same_status;
using testing::kKernel;
using testing::kLaunch;
using testing::kProgram;

constexpr std::uint64_t kAlign = GraphDefinitionStore::kAlignment;
constexpr std::uint64_t kStoreKiB = 1024;

using Placement = GraphDefinitionStore::Placement;
using Pending = GraphDefinitionStore::Pending;

// plan → size the block alone → (upload when needed) → place, as a caller does outside a
// larger transaction; *out says whether the upload was needed.
Status place(GraphDefinitionStore &store, std::uint64_t key, std::uint64_t bytes, Placement *out,
             std::uint64_t binding = 0) {
  Pending pending = store.plan(key, bytes);
  RRT_RETURN_IF_ERROR(store.block().reserve(pending.required));
  const bool needs_upload = store.needs_upload(pending, binding);
  *out = store.place(std::move(pending), binding, true);
  out->needs_upload = needs_upload;
  return Status::ok();
}

struct StoreState {
  void *address = nullptr;
  std::uint64_t capacity = 0;
  std::uint64_t used = 0;
  std::uint64_t base_changes = 0;
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;

  static StoreState of(const GraphDefinitionStore &store) {
    const GuardedBlock &block = store.block();
    return {block.base(),         block.capacity(),    store.used(),
            block.base_changes(), block.allocations(), block.frees()};
  }
  bool operator==(const StoreState &) const = default;
};

class GraphDefinitionStoreTest : public ::testing::Test {
 protected:
  // The placement of a key the store already holds, checked to need no sizing, no upload
  // and no allocator call.
  Placement stored(std::uint64_t key, std::uint64_t bytes, std::uint64_t binding = 0) {
    const MemoryCounters before = host.counters();
    const Pending pending = store.plan(key, bytes);
    EXPECT_TRUE(pending.stored);
    EXPECT_EQ(pending.required, 0u);
    Placement placement;
    EXPECT_TRUE(place(store, key, bytes, &placement, binding).is_ok());
    EXPECT_FALSE(placement.needs_upload);
    EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls);
    EXPECT_EQ(host.counters().free_calls, before.free_calls);
    return placement;
  }

  BlockHostRig host;
  GraphDefinitionStore store{host};
};

TEST_F(GraphDefinitionStoreTest, StartsEmptyOnItsGrowthPoint) {
  EXPECT_EQ(StoreState::of(store), StoreState{});
  EXPECT_EQ(store.block().point(), GrowthPoint::kGraphDefinition);
  const Pending pending = store.plan(1, 1000);
  EXPECT_FALSE(pending.stored);
  EXPECT_EQ(pending.required, 1000u);
  EXPECT_FALSE(store.holds(1));
}

// stored_keys() lists what place() published, in key order, and only that.
TEST_F(GraphDefinitionStoreTest, StoredKeysListEachPlacementWithItsOffsetBindingAndUpload) {
  using StoredKey = GraphDefinitionStore::StoredKey;
  EXPECT_TRUE(store.stored_keys().empty());
  ASSERT_TRUE(store.block().reserve(8 * kStoreKiB).is_ok());
  Placement placement;
  ASSERT_TRUE(place(store, 9, 1000, &placement, 5).is_ok());
  Pending pending = store.plan(4, 100);
  ASSERT_TRUE(store.block().reserve(pending.required).is_ok());
  (void)store.place(std::move(pending), 6, false);
  const Pending unplaced = store.plan(7, 100);
  EXPECT_EQ(store.stored_keys(), (std::vector<StoredKey>{{4, kAlign, 6, false}, {9, 0, 5, true}}));
  store.release();
  EXPECT_TRUE(store.stored_keys().empty());
}

// ---- program mode ------------------------------------------------------------------------

TEST_F(GraphDefinitionStoreTest, ProgramModePlacesNewKeysBehindEarlierOnesWhileTheyFit) {
  ASSERT_TRUE(store.block().reserve(8 * kStoreKiB).is_ok());
  void *const block = store.block().base();
  Placement first;
  Placement second;
  Placement third;
  ASSERT_TRUE(place(store, 1, 1000, &first).is_ok());
  ASSERT_TRUE(place(store, 2, 2000, &second).is_ok());
  ASSERT_TRUE(place(store, 3, 100, &third).is_ok());
  EXPECT_EQ(first.address, block);
  EXPECT_EQ(second.address, byte_at(block, kAlign));
  EXPECT_EQ(third.address, byte_at(block, 3 * kAlign));
  EXPECT_TRUE(first.needs_upload);
  EXPECT_TRUE(second.needs_upload);
  EXPECT_TRUE(third.needs_upload);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(third.address) % kAlign, 0u);
  EXPECT_EQ(store.block().base(), block);
  EXPECT_EQ(store.used(), 3 * kAlign + 100);
  EXPECT_EQ(store.block().allocations(), 1u);
  EXPECT_EQ(store.block().base_changes(), 0u);
  EXPECT_EQ(host.counters().allocation_calls, 1u);
}

TEST_F(GraphDefinitionStoreTest, StoredKeyNeedsNoSizingNoUploadAndNoAllocatorCallAnywhere) {
  Placement placed;
  ASSERT_TRUE(place(store, 7, 3000, &placed).is_ok());
  const StoreState held = StoreState::of(store);
  for (const GrowthContext context : {kProgram, kKernel, kLaunch}) {
    host.set_context(context);
    EXPECT_EQ(stored(7, 3000).address, placed.address);
  }
  EXPECT_EQ(StoreState::of(store), held);
}

TEST_F(GraphDefinitionStoreTest, AStoredKeyWithANewBindingIsUploadedAgainWhereItIs) {
  Placement placed;
  ASSERT_TRUE(place(store, 7, 3000, &placed, 11).is_ok());
  const StoreState held = StoreState::of(store);
  Placement rebound;
  ASSERT_TRUE(place(store, 7, 3000, &rebound, 12).is_ok());
  EXPECT_EQ(rebound.address, placed.address);
  EXPECT_TRUE(rebound.needs_upload);
  EXPECT_EQ(StoreState::of(store), held);
  EXPECT_EQ(stored(7, 3000, 12).address, placed.address);
}

TEST_F(GraphDefinitionStoreTest, EmptyStoreFirstAllocationIsSizedForTheDefinition) {
  Placement placed;
  ASSERT_TRUE(place(store, 1, 3000, &placed).is_ok());
  EXPECT_TRUE(placed.needs_upload);
  EXPECT_NE(placed.address, nullptr);
  EXPECT_EQ(placed.address, store.block().base());
  EXPECT_EQ(store.block().capacity(), 3000u);
  EXPECT_EQ(store.used(), 3000u);
  EXPECT_EQ(store.block().base_changes(), 0u);
  const auto allocation = host.device().find_allocation(placed.address);
  ASSERT_TRUE(allocation.has_value());
  EXPECT_GE(allocation->size, 3000u);
}

// Growth asks for the stored definitions plus the new one; the fresh block forgets the old
// keys, places the new one at offset 0, and has room behind it for the ones that follow.
TEST_F(GraphDefinitionStoreTest, ProgramModeGrowthPlacesTheNewKeyAtZeroWithRoomForTheRest) {
  ASSERT_TRUE(store.block().reserve(4 * kStoreKiB).is_ok());
  Placement placed;
  ASSERT_TRUE(place(store, 1, 1000, &placed).is_ok());
  ASSERT_TRUE(place(store, 2, 1000, &placed).is_ok());
  void *const old_block = store.block().base();
  const MemoryCounters before = host.counters();

  Pending pending = store.plan(3, 16 * kStoreKiB);
  EXPECT_EQ(pending.required, 2 * kAlign + 16 * kStoreKiB);
  ASSERT_TRUE(store.block().reserve(pending.required).is_ok());
  const Placement grown = store.place(std::move(pending), 0, false);
  EXPECT_TRUE(grown.needs_upload);
  (void)store.place(store.plan(3, 16 * kStoreKiB), 0, true);
  EXPECT_NE(grown.address, old_block);
  EXPECT_EQ(grown.address, store.block().base());
  EXPECT_EQ(store.block().capacity(), 2 * kAlign + 16 * kStoreKiB);
  EXPECT_EQ(store.used(), 16 * kStoreKiB);
  EXPECT_FALSE(store.holds(1));
  EXPECT_FALSE(store.holds(2));
  EXPECT_TRUE(store.holds(3));
  EXPECT_EQ(store.block().base_changes(), 1u);
  EXPECT_EQ(store.block().allocations(), 2u);
  EXPECT_EQ(store.block().frees(), 1u);
  EXPECT_FALSE(host.is_live(old_block));
  // The new block is live before the old one is freed.
  EXPECT_GE(host.counters().peak_live_bytes, before.live_bytes + 16 * kStoreKiB);
  EXPECT_EQ(stored(3, 16 * kStoreKiB).address, grown.address);

  // The forgotten definitions come back behind it without another allocation.
  Placement again;
  ASSERT_TRUE(place(store, 1, 1000, &again).is_ok());
  EXPECT_TRUE(again.needs_upload);
  EXPECT_EQ(again.address, byte_at(grown.address, 16 * kStoreKiB));
  ASSERT_TRUE(place(store, 2, 1000, &again).is_ok());
  EXPECT_EQ(again.address, byte_at(grown.address, 17 * kStoreKiB));
  EXPECT_EQ(store.block().allocations(), 2u);
  EXPECT_EQ(store.block().base_changes(), 1u);
}

// Issue 8 defect 8: two callables alternating in program mode allocated on every run while
// the store kept one definition. With the block sized for all of them, the store settles.
TEST_F(GraphDefinitionStoreTest, TwoKeysAlternatingInProgramModeSettleWithNoFurtherAllocation) {
  for (const auto &[small_first, first_bytes, second_bytes] :
       {std::tuple{true, std::uint64_t{3000}, std::uint64_t{5000}},
        std::tuple{false, std::uint64_t{5000}, std::uint64_t{3000}}}) {
    SCOPED_TRACE(small_first ? "smaller key first" : "larger key first");
    BlockHostRig rig;
    GraphDefinitionStore alternating(rig);
    Placement placed;
    // Two rounds to settle.
    for (int round = 0; round < 2; ++round) {
      ASSERT_TRUE(place(alternating, 1, first_bytes, &placed).is_ok());
      ASSERT_TRUE(place(alternating, 2, second_bytes, &placed).is_ok());
    }
    ASSERT_TRUE(alternating.holds(1));
    ASSERT_TRUE(alternating.holds(2));
    const MemoryCounters settled = rig.counters();
    void *const base = alternating.block().base();
    for (int round = 0; round < 16; ++round) {
      for (const auto &[key, bytes] :
           {std::pair{std::uint64_t{1}, first_bytes}, std::pair{std::uint64_t{2}, second_bytes}}) {
        const Pending pending = alternating.plan(key, bytes);
        EXPECT_TRUE(pending.stored);
        ASSERT_TRUE(place(alternating, key, bytes, &placed).is_ok());
        EXPECT_FALSE(placed.needs_upload);
      }
    }
    EXPECT_EQ(rig.counters().allocation_calls, settled.allocation_calls);
    EXPECT_EQ(rig.counters().free_calls, settled.free_calls);
    EXPECT_EQ(alternating.block().base(), base);
    EXPECT_LE(alternating.block().allocations(), 3u);
  }
}

class GraphDefinitionStoreFailureTest : public ::testing::TestWithParam<bool> {};

TEST_P(GraphDefinitionStoreFailureTest, FailedGrowthKeepsTheOldBlockAndItsKeys) {
  BlockHostRig host;
  {
    GraphDefinitionStore store(host);
    ASSERT_TRUE(store.block().reserve(4 * kStoreKiB).is_ok());
    Placement first;
    ASSERT_TRUE(place(store, 1, 1000, &first).is_ok());
    const StoreState held = StoreState::of(store);
    host.fail_nth_allocation(1, GetParam());
    Placement untouched{reinterpret_cast<void *>(std::uintptr_t{0x40}), false};
    const Status failed = place(store, 2, 16 * kStoreKiB, &untouched);
    EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_FALSE(failed.is_capacity_refusal());
    EXPECT_EQ(untouched.address, reinterpret_cast<void *>(std::uintptr_t{0x40}));
    EXPECT_EQ(StoreState::of(store), held);
    EXPECT_TRUE(host.is_live(held.address));
    EXPECT_TRUE(store.holds(1));
    EXPECT_FALSE(store.holds(2));

    Placement again;
    ASSERT_TRUE(place(store, 1, 1000, &again).is_ok());
    EXPECT_EQ(again.address, first.address);
    EXPECT_FALSE(again.needs_upload);
    ASSERT_TRUE(place(store, 2, 16 * kStoreKiB, &again).is_ok());
    EXPECT_TRUE(again.needs_upload);
  }
  EXPECT_EQ(host.counters().allocation_calls, host.counters().free_calls);
  EXPECT_EQ(host.counters().live_bytes, 0u);
}

TEST_P(GraphDefinitionStoreFailureTest, FailedFirstAllocationLeavesTheStoreEmpty) {
  BlockHostRig host(kKernel);
  GraphDefinitionStore store(host);
  host.fail_nth_allocation(1, GetParam());
  Placement placed;
  EXPECT_EQ(place(store, 1, 1000, &placed).code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(StoreState::of(store), StoreState{});
  EXPECT_EQ(placed.address, nullptr);
  EXPECT_FALSE(store.holds(1));
  host.fail_nth_allocation(1, GetParam());
  EXPECT_EQ(store.block().reserve(4 * kStoreKiB).code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(StoreState::of(store), StoreState{});
  EXPECT_EQ(host.counters().allocation_calls, 0u);

  ASSERT_TRUE(place(store, 1, 1000, &placed).is_ok());
  EXPECT_TRUE(placed.needs_upload);
  EXPECT_EQ(placed.address, store.block().base());
}

// The store's block in a transaction with another block: when the other block's allocation
// fails, nothing was placed and the stored keys are where they were.
TEST_P(GraphDefinitionStoreFailureTest, FailedTransactionKeepsEveryStoredKey) {
  BlockHostRig host;
  GraphDefinitionStore store(host);
  GuardedBlock staging(host, GrowthPoint::kHostStaging);
  Placement first;
  ASSERT_TRUE(place(store, 1, 1000, &first).is_ok());
  const StoreState held = StoreState::of(store);
  host.fail_nth_allocation(2, GetParam());
  {
    const Pending pending = store.plan(2, 4 * kStoreKiB);
    BlockTransaction txn;
    ASSERT_TRUE(txn.add(store.block(), pending.required).is_ok());
    ASSERT_TRUE(txn.add(staging, 4 * kStoreKiB).is_ok());
    EXPECT_EQ(txn.commit().code(), RRT_ERR_OUT_OF_MEMORY);
  }
  // The store's staged block was allocated and freed again; what it publishes is unchanged.
  StoreState after = StoreState::of(store);
  EXPECT_EQ(after.allocations - held.allocations, 1u);
  EXPECT_EQ(after.frees - held.frees, 1u);
  after.allocations = held.allocations;
  after.frees = held.frees;
  EXPECT_EQ(after, held);
  EXPECT_TRUE(store.holds(1));
  EXPECT_FALSE(staging.is_published());
  Placement again;
  ASSERT_TRUE(place(store, 1, 1000, &again).is_ok());
  EXPECT_EQ(again.address, first.address);
  EXPECT_FALSE(again.needs_upload);
}

INSTANTIATE_TEST_SUITE_P(NullAndThrow, GraphDefinitionStoreFailureTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "Throw" : "Null");
                         });

// ---- kernel mode -------------------------------------------------------------------------

TEST_F(GraphDefinitionStoreTest, KernelModeTakesTheFirstAllocationThenRefusesToGrow) {
  host.set_context(kKernel);
  Placement first;
  ASSERT_TRUE(place(store, 1, 2000, &first).is_ok());
  EXPECT_TRUE(first.needs_upload);
  EXPECT_EQ(store.block().capacity(), 2000u);
  const StoreState held = StoreState::of(store);
  const MemoryCounters before = host.counters();

  Placement untouched;
  expect_refusal(place(store, 2, 1000, &untouched), GrowthPoint::kGraphDefinition,
                 2 * kAlign + 1000, 2000);
  EXPECT_EQ(untouched.address, nullptr);
  EXPECT_EQ(StoreState::of(store), held);
  EXPECT_FALSE(store.holds(2));
  EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(host.counters().free_calls, before.free_calls);
  EXPECT_EQ(host.refusals(GrowthPoint::kGraphDefinition), 1u);
  EXPECT_EQ(stored(1, 2000).address, first.address);
  EXPECT_EQ(StoreState::of(store), held);
}

TEST_F(GraphDefinitionStoreTest, KernelModeRefusalKeepsStoredDefinitionsAndTheBlockUsable) {
  host.set_context(kKernel);
  ASSERT_TRUE(store.block().reserve(4 * kStoreKiB).is_ok());
  Placement first;
  Placement second;
  ASSERT_TRUE(place(store, 1, 1000, &first).is_ok());
  ASSERT_TRUE(place(store, 2, 1000, &second).is_ok());
  const StoreState held = StoreState::of(store);
  const MemoryCounters before = host.counters();

  Placement untouched;
  expect_refusal(place(store, 3, 3000, &untouched), GrowthPoint::kGraphDefinition,
                 2 * kAlign + 3000, 4 * kStoreKiB);
  EXPECT_EQ(StoreState::of(store), held);
  EXPECT_TRUE(host.is_live(held.address));
  EXPECT_EQ(stored(1, 1000).address, first.address);
  EXPECT_EQ(stored(2, 1000).address, second.address);

  // A definition that fits is still placed in the same block.
  Placement fitting;
  ASSERT_TRUE(place(store, 4, 2 * kStoreKiB, &fitting).is_ok());
  EXPECT_TRUE(fitting.needs_upload);
  EXPECT_EQ(fitting.address, byte_at(held.address, 2 * kAlign));
  EXPECT_EQ(store.block().base(), held.address);
  EXPECT_EQ(store.used(), 4 * kStoreKiB);
  EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(host.counters().free_calls, before.free_calls);
}

TEST_F(GraphDefinitionStoreTest, KernelModeRefusesToReplaceAProgramBuiltBlock) {
  Placement first;
  ASSERT_TRUE(place(store, 1, 4 * kStoreKiB, &first).is_ok());
  const StoreState held = StoreState::of(store);
  host.set_context(kKernel);
  Placement untouched;
  expect_refusal(place(store, 2, 1, &untouched), GrowthPoint::kGraphDefinition, 4 * kStoreKiB + 1,
                 4 * kStoreKiB);
  EXPECT_EQ(StoreState::of(store), held);
  EXPECT_EQ(stored(1, 4 * kStoreKiB).address, first.address);
}

TEST_F(GraphDefinitionStoreTest, KernelModeFirstAllocationWhileALaunchIsEncodedIsRefused) {
  host.set_context(kLaunch);
  Placement untouched;
  expect_refusal(place(store, 1, 1000, &untouched), GrowthPoint::kLaunchAllocation, 1000, 0);
  EXPECT_EQ(untouched.address, nullptr);
  expect_refusal(store.block().reserve(4 * kStoreKiB), GrowthPoint::kLaunchAllocation,
                 4 * kStoreKiB, 0);
  EXPECT_EQ(StoreState::of(store), StoreState{});
  EXPECT_EQ(host.allocate_calls(), 0u);
  EXPECT_EQ(host.refusals(GrowthPoint::kLaunchAllocation), 2u);
}

TEST_F(GraphDefinitionStoreTest, KernelModeWhileALaunchIsEncodedServesFittingRequests) {
  host.set_context(kKernel);
  ASSERT_TRUE(store.block().reserve(4 * kStoreKiB).is_ok());
  const MemoryCounters before = host.counters();
  host.set_context(kLaunch);
  Placement placed;
  ASSERT_TRUE(place(store, 1, 1000, &placed).is_ok());
  EXPECT_TRUE(placed.needs_upload);
  EXPECT_EQ(placed.address, store.block().base());
  EXPECT_EQ(stored(1, 1000).address, placed.address);
  const StoreState held = StoreState::of(store);
  Placement untouched;
  expect_refusal(place(store, 2, 4000, &untouched), GrowthPoint::kGraphDefinition, kAlign + 4000,
                 4 * kStoreKiB);
  EXPECT_EQ(StoreState::of(store), held);
  EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(host.counters().free_calls, before.free_calls);
}

// ---- kernel-init sizing --------------------------------------------------------------------

TEST_F(GraphDefinitionStoreTest, SizingTheBlockAtInitTakesTheFirstAllocationAndPlacesNothing) {
  host.set_context(kKernel);
  ASSERT_TRUE(store.block().reserve(8 * kStoreKiB).is_ok());
  EXPECT_NE(store.block().base(), nullptr);
  EXPECT_EQ(store.block().capacity(), 8 * kStoreKiB);
  EXPECT_EQ(store.used(), 0u);
  EXPECT_EQ(store.block().allocations(), 1u);
  Placement placed;
  ASSERT_TRUE(place(store, 1, 8 * kStoreKiB, &placed).is_ok());
  EXPECT_EQ(placed.address, store.block().base());
  EXPECT_EQ(host.counters().allocation_calls, 1u);
}

TEST_F(GraphDefinitionStoreTest, SizingAnAlreadySizedBlockKeepsItAndItsKeys) {
  host.set_context(kKernel);
  ASSERT_TRUE(store.block().reserve(8 * kStoreKiB).is_ok());
  Placement placed;
  ASSERT_TRUE(place(store, 1, 1000, &placed).is_ok());
  const StoreState held = StoreState::of(store);
  const MemoryCounters before = host.counters();
  for (const std::uint64_t bytes : {8 * kStoreKiB, 2 * kStoreKiB, std::uint64_t{0}}) {
    host.set_context(kKernel);
    ASSERT_TRUE(store.block().reserve(bytes).is_ok());
    host.set_context(kLaunch);
    ASSERT_TRUE(store.block().reserve(bytes).is_ok());
  }
  host.set_context(kKernel);
  expect_refusal(store.block().reserve(32 * kStoreKiB), GrowthPoint::kGraphDefinition,
                 32 * kStoreKiB, 8 * kStoreKiB);
  EXPECT_EQ(StoreState::of(store), held);
  EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(host.counters().free_calls, before.free_calls);
  EXPECT_EQ(stored(1, 1000).address, placed.address);
}

// ---- preflight ---------------------------------------------------------------------------

// The block's preflight of a plan's requirement answers exactly what sizing then does.
TEST_F(GraphDefinitionStoreTest, PreflightOfAPlanReturnsExactlyWhatPlacingWould) {
  struct Case {
    std::uint64_t key;
    std::uint64_t bytes;
    GrowthContext context;
  };
  const Case cases[] = {
      {1, 1000, kLaunch},            // empty store, launch encoded: launch_allocation refusal
      {1, 1000, kKernel},            // empty store: first allocation
      {1, 1000, kLaunch},            // stored key
      {2, 1, kKernel},               // does not fit: refusal
      {2, 1, kLaunch},               // does not fit while a launch is encoded: refusal
      {1, 5000, kKernel},            // stored key, whatever its size
      {3, 4 * kStoreKiB, kProgram},  // program mode grows
      {4, 1, kKernel},               // fits behind key 3
      {5, 8 * kStoreKiB, kKernel},   // refusal at the grown block
  };
  for (const Case &request : cases) {
    SCOPED_TRACE(::testing::Message() << "key " << request.key << " bytes " << request.bytes);
    host.set_context(request.context);
    const StoreState before = StoreState::of(store);
    const std::uint64_t calls_before = host.allocate_calls();
    const Status predicted =
        store.block().preflight(store.plan(request.key, request.bytes).required);
    EXPECT_EQ(StoreState::of(store), before);
    EXPECT_EQ(host.allocate_calls(), calls_before);
    Placement placement;
    expect_same_status(predicted, place(store, request.key, request.bytes, &placement));
  }
}

// ---- uploads -----------------------------------------------------------------------------

// A key placed without its contents (its upload failed) is not trusted: it needs the upload
// until it is placed with them.
TEST_F(GraphDefinitionStoreTest, AKeyPlacedWithoutItsContentsNeedsTheUploadAgain) {
  ASSERT_TRUE(store.block().reserve(8 * kStoreKiB).is_ok());
  Pending first = store.plan(1, 1000);
  EXPECT_TRUE(store.needs_upload(first, 5));
  const Placement placed = store.place(std::move(first), 5, false);
  EXPECT_TRUE(placed.newly_stored);
  EXPECT_TRUE(placed.needs_upload);
  Pending again = store.plan(1, 1000);
  EXPECT_TRUE(again.stored);
  EXPECT_TRUE(store.needs_upload(again, 5)) << "a key whose contents never arrived was trusted";
  EXPECT_EQ(store.place(std::move(again), 5, true).address, placed.address);
  EXPECT_FALSE(store.needs_upload(store.plan(1, 1000), 5));
  EXPECT_TRUE(store.needs_upload(store.plan(1, 1000), 6)) << "a new binding needs the upload";
}

// A caller that uploads before it places (inside a transaction) writes where the pending key
// lands once the block publishes, a staged first allocation included.
TEST_F(GraphDefinitionStoreTest, TheAddressAfterPublishIsWherePlaceLandsTheKey) {
  Pending pending = store.plan(4, 1000);
  BlockTransaction txn;
  ASSERT_TRUE(txn.add(store.block(), pending.required).is_ok());
  ASSERT_TRUE(txn.stage().is_ok());
  void *const planned = store.address_after_publish(pending);
  EXPECT_EQ(store.block().base(), nullptr);
  txn.publish();
  EXPECT_EQ(store.place(std::move(pending), 0, true).address, planned);
  EXPECT_EQ(planned, store.block().base());
}

// ---- release -----------------------------------------------------------------------------

TEST_F(GraphDefinitionStoreTest, ReleaseFreesTheBlockAndForgetsEveryKey) {
  Placement placed;
  ASSERT_TRUE(place(store, 1, 1000, &placed).is_ok());
  store.release();
  EXPECT_EQ(store.block().base(), nullptr);
  EXPECT_EQ(store.block().capacity(), 0u);
  EXPECT_EQ(store.used(), 0u);
  EXPECT_FALSE(store.holds(1));
  EXPECT_EQ(store.block().frees(), 1u);
  EXPECT_FALSE(host.is_live(placed.address));
  EXPECT_EQ(host.counters().live_bytes, 0u);
  store.release();
  EXPECT_EQ(store.block().frees(), 1u);

  host.set_context(kKernel);
  ASSERT_TRUE(place(store, 1, 1000, &placed).is_ok());
  EXPECT_TRUE(placed.needs_upload);
  EXPECT_EQ(store.block().base_changes(), 0u);
}

TEST(GraphDefinitionStoreLifetimeTest, DestructorReleasesTheBlock) {
  BlockHostRig host;
  {
    GraphDefinitionStore store(host);
    ASSERT_TRUE(store.block().reserve(4 * kStoreKiB).is_ok());
    Placement placed;
    ASSERT_TRUE(place(store, 1, 16 * kStoreKiB, &placed).is_ok());
  }
  EXPECT_EQ(host.counters().allocation_calls, 2u);
  EXPECT_EQ(host.counters().free_calls, 2u);
  EXPECT_EQ(host.counters().live_bytes, 0u);
}

// ---- allocation-failure sweep ------------------------------------------------------------

// Two slots' stores, as a pipeline holds them.
struct Stores {
  explicit Stores(BlockHost &host)
      : slots{std::make_unique<GraphDefinitionStore>(host),
              std::make_unique<GraphDefinitionStore>(host)} {}

  std::unique_ptr<GraphDefinitionStore> slots[2];
};

struct PublishedStore {
  void *address;
  std::uint64_t capacity;
  std::uint64_t used;
  bool operator==(const PublishedStore &) const = default;
};

std::vector<PublishedStore> stores_published_state(const Stores &stores) {
  std::vector<PublishedStore> state;
  for (const auto &store : stores.slots) {
    state.push_back({store->block().base(), store->block().capacity(), store->used()});
  }
  return state;
}

using StoresStep = testing::SweepStep<Stores>;

StoresStep size_block(int slot, std::uint64_t bytes) {
  return [=](Stores &stores) { return stores.slots[slot]->block().reserve(bytes); };
}

StoresStep place_key(int slot, std::uint64_t key, std::uint64_t bytes) {
  return [=](Stores &stores) {
    Placement placement;
    return place(*stores.slots[slot], key, bytes, &placement);
  };
}

std::vector<StoresStep> stores_scenario(ExecutionMode mode) {
  if (mode == ExecutionMode::kProgram) {
    return {
        size_block(0, 8 * kStoreKiB),    place_key(0, 1, 1000),
        place_key(0, 2, 3000),           place_key(1, 1, 1000),
        place_key(0, 3, 16 * kStoreKiB), place_key(0, 3, 16 * kStoreKiB),
        place_key(1, 2, 2000),           place_key(0, 4, 32 * kStoreKiB),
        size_block(1, 64 * kStoreKiB),   place_key(1, 5, 1000),
        place_key(0, 1, 1000),           place_key(0, 4, 32 * kStoreKiB),
    };
  }
  return {
      size_block(0, 8 * kStoreKiB), place_key(0, 1, 1000),          place_key(1, 1, 4 * kStoreKiB),
      place_key(0, 2, 3000),        place_key(1, 1, 4 * kStoreKiB), size_block(1, 4 * kStoreKiB),
      place_key(0, 1, 1000),
  };
}

std::vector<const void *> stores_live_addresses(const std::vector<PublishedStore> &state) {
  std::vector<const void *> addresses;
  for (const PublishedStore &store : state) {
    if (store.address != nullptr) {
      addresses.push_back(store.address);
    }
  }
  return addresses;
}

testing::SweepSubject<Stores, std::vector<PublishedStore>> stores_subject() {
  return {[](BlockHost &host) { return std::make_unique<Stores>(host); }, stores_published_state,
          stores_live_addresses};
}

class GraphDefinitionStoreSweepTest : public ::testing::TestWithParam<testing::SweepParam> {};

TEST_P(GraphDefinitionStoreSweepTest, EveryAllocationPointFailsWithoutSideEffects) {
  const auto [mode, throws] = GetParam();
  testing::sweep_allocation_failures(stores_subject(), stores_scenario(mode), mode, throws, 2);
}

INSTANTIATE_TEST_SUITE_P(ModesAndFailureKinds, GraphDefinitionStoreSweepTest,
                         testing::sweep_params(), testing::sweep_param_name);

}  // namespace
}  // namespace replayrt
