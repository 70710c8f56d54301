#include "memory/graph_definition_store.h"

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "support/allocation_failure_sweep.h"
#include "support/device_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using testing::byte_at;
using testing::expect_refusal;
using testing::expect_same_status;
using testing::kKernel;
using testing::kLaunch;
using testing::kProgram;

constexpr std::uint64_t kAlign = GraphDefinitionStore::kAlignment;
constexpr std::uint64_t kKiB = 1024;

using Placement = GraphDefinitionStore::Placement;

struct StoreState {
  void *address = nullptr;
  std::uint64_t capacity = 0;
  std::uint64_t used = 0;
  std::uint64_t base_changes = 0;
  std::uint64_t alloc_count = 0;
  std::uint64_t free_count = 0;

  static StoreState of(const GraphDefinitionStore &store) {
    return {store.address(),      store.capacity(),    store.used(),
            store.base_changes(), store.alloc_count(), store.free_count()};
  }
  bool operator==(const StoreState &) const = default;
};

class GraphDefinitionStoreTest : public ::testing::Test {
 protected:
  // The placement of a key the store already holds, checked to make no allocator call.
  Placement stored(std::uint64_t key, std::uint64_t bytes, GrowthContext context) {
    const MemoryCounters before = rig.counters();
    Placement placement;
    EXPECT_TRUE(store.acquire(key, bytes, context, &placement).is_ok());
    EXPECT_FALSE(placement.needs_upload);
    EXPECT_EQ(rig.counters().allocation_calls, before.allocation_calls);
    EXPECT_EQ(rig.counters().free_calls, before.free_calls);
    return placement;
  }

  testing::DeviceRig rig;
  GraphDefinitionStore store{rig.allocator};
};

// ---- program mode ------------------------------------------------------------------------

TEST_F(GraphDefinitionStoreTest, ProgramModePlacesNewKeysBehindEarlierOnesWhileTheyFit) {
  ASSERT_TRUE(store.commit(8 * kKiB, kProgram).is_ok());
  void *const block = store.address();
  Placement first;
  Placement second;
  Placement third;
  ASSERT_TRUE(store.acquire(1, 1000, kProgram, &first).is_ok());
  ASSERT_TRUE(store.acquire(2, 2000, kProgram, &second).is_ok());
  ASSERT_TRUE(store.acquire(3, 100, kProgram, &third).is_ok());
  EXPECT_EQ(first.address, block);
  EXPECT_EQ(second.address, byte_at(block, kAlign));
  EXPECT_EQ(third.address, byte_at(block, 3 * kAlign));
  EXPECT_TRUE(first.needs_upload);
  EXPECT_TRUE(second.needs_upload);
  EXPECT_TRUE(third.needs_upload);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(third.address) % kAlign, 0u);
  EXPECT_EQ(store.address(), block);
  EXPECT_EQ(store.used(), 3 * kAlign + 100);
  EXPECT_EQ(store.alloc_count(), 1u);
  EXPECT_EQ(store.base_changes(), 0u);
  EXPECT_EQ(rig.counters().allocation_calls, 1u);
}

TEST_F(GraphDefinitionStoreTest, StoredKeyReturnsItsAddressWithoutUploadOrAllocatorCall) {
  Placement placed;
  ASSERT_TRUE(store.acquire(7, 3000, kProgram, &placed).is_ok());
  const StoreState held = StoreState::of(store);
  EXPECT_EQ(stored(7, 3000, kProgram).address, placed.address);
  EXPECT_EQ(stored(7, 3000, kKernel).address, placed.address);
  EXPECT_EQ(stored(7, 3000, kLaunch).address, placed.address);
  EXPECT_EQ(StoreState::of(store), held);
}

TEST_F(GraphDefinitionStoreTest, EmptyStoreFirstAllocationIsSizedForTheDefinition) {
  Placement placed;
  ASSERT_TRUE(store.acquire(1, 3000, kProgram, &placed).is_ok());
  EXPECT_TRUE(placed.needs_upload);
  EXPECT_NE(placed.address, nullptr);
  EXPECT_EQ(placed.address, store.address());
  EXPECT_EQ(store.capacity(), 3000u);
  EXPECT_EQ(store.used(), 3000u);
  EXPECT_EQ(store.base_changes(), 0u);
  const auto allocation = rig.device.find_allocation(placed.address);
  ASSERT_TRUE(allocation.has_value());
  EXPECT_GE(allocation->size, 3000u);
}

TEST_F(GraphDefinitionStoreTest, ProgramModeKeyThatDoesNotFitReplacesTheBlock) {
  ASSERT_TRUE(store.commit(4 * kKiB, kProgram).is_ok());
  Placement placed;
  ASSERT_TRUE(store.acquire(1, 1000, kProgram, &placed).is_ok());
  ASSERT_TRUE(store.acquire(2, 1000, kProgram, &placed).is_ok());
  void *const old_block = store.address();
  const MemoryCounters before = rig.counters();

  Placement grown;
  ASSERT_TRUE(store.acquire(3, 16 * kKiB, kProgram, &grown).is_ok());
  EXPECT_TRUE(grown.needs_upload);
  EXPECT_NE(grown.address, old_block);
  EXPECT_EQ(grown.address, store.address());
  EXPECT_EQ(store.capacity(), 16 * kKiB);
  EXPECT_EQ(store.used(), 16 * kKiB);
  EXPECT_EQ(store.base_changes(), 1u);
  EXPECT_EQ(store.alloc_count(), 2u);
  EXPECT_EQ(store.free_count(), 1u);
  EXPECT_FALSE(rig.device.find_allocation(old_block).has_value());
  // The new block is live before the old one is freed.
  EXPECT_GE(rig.counters().peak_live_bytes, before.live_bytes + 16 * kKiB);
  EXPECT_EQ(stored(3, 16 * kKiB, kProgram).address, grown.address);

  // The replaced block took every earlier definition with it.
  Placement again;
  ASSERT_TRUE(store.acquire(1, 1000, kProgram, &again).is_ok());
  EXPECT_TRUE(again.needs_upload);
  EXPECT_EQ(store.base_changes(), 2u);
}

class GraphDefinitionStoreFailureTest : public ::testing::TestWithParam<bool> {
 protected:
  void arm(testing::DeviceRig &rig) const {
    if (GetParam()) {
      rig.faults.throw_on_nth_allocation(1);
    } else {
      rig.faults.fail_nth_allocation(1);
    }
  }
};

TEST_P(GraphDefinitionStoreFailureTest, FailedReplacementKeepsTheOldBlockAndItsKeys) {
  testing::DeviceRig rig;
  {
    GraphDefinitionStore store(rig.allocator);
    ASSERT_TRUE(store.commit(4 * kKiB, kProgram).is_ok());
    Placement first;
    ASSERT_TRUE(store.acquire(1, 1000, kProgram, &first).is_ok());
    const StoreState held = StoreState::of(store);
    arm(rig);
    Placement untouched{reinterpret_cast<void *>(std::uintptr_t{0x40}), false};
    const Status failed = store.acquire(2, 16 * kKiB, kProgram, &untouched);
    EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_FALSE(failed.is_capacity_refusal());
    EXPECT_EQ(untouched.address, reinterpret_cast<void *>(std::uintptr_t{0x40}));
    EXPECT_EQ(StoreState::of(store), held);
    EXPECT_TRUE(rig.device.find_allocation(held.address).has_value());

    Placement again;
    ASSERT_TRUE(store.acquire(1, 1000, kProgram, &again).is_ok());
    EXPECT_EQ(again.address, first.address);
    EXPECT_FALSE(again.needs_upload);
    ASSERT_TRUE(store.acquire(2, 16 * kKiB, kProgram, &again).is_ok());
    EXPECT_TRUE(again.needs_upload);
  }
  EXPECT_EQ(rig.counters().allocation_calls, rig.counters().free_calls);
  EXPECT_EQ(rig.counters().live_bytes, 0u);
}

TEST_P(GraphDefinitionStoreFailureTest, FailedFirstAllocationLeavesTheStoreEmpty) {
  testing::DeviceRig rig;
  GraphDefinitionStore store(rig.allocator);
  arm(rig);
  Placement placed;
  EXPECT_EQ(store.acquire(1, 1000, kKernel, &placed).code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(StoreState::of(store), StoreState{});
  EXPECT_EQ(placed.address, nullptr);
  arm(rig);
  EXPECT_EQ(store.commit(4 * kKiB, kKernel).code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(StoreState::of(store), StoreState{});
  EXPECT_EQ(rig.counters().allocation_calls, 0u);

  ASSERT_TRUE(store.acquire(1, 1000, kKernel, &placed).is_ok());
  EXPECT_TRUE(placed.needs_upload);
  EXPECT_EQ(placed.address, store.address());
}

INSTANTIATE_TEST_SUITE_P(NullAndThrow, GraphDefinitionStoreFailureTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "Throw" : "Null");
                         });

// ---- kernel mode -------------------------------------------------------------------------

TEST_F(GraphDefinitionStoreTest, KernelModeTakesTheFirstAllocationThenRefusesToGrow) {
  Placement first;
  ASSERT_TRUE(store.acquire(1, 2000, kKernel, &first).is_ok());
  EXPECT_TRUE(first.needs_upload);
  EXPECT_EQ(store.capacity(), 2000u);
  const StoreState held = StoreState::of(store);
  const MemoryCounters device_before = rig.counters();

  Placement untouched;
  const Status refused = store.acquire(2, 1000, kKernel, &untouched);
  expect_refusal(refused, GrowthPoint::kGraphDefinition, 2 * kAlign + 1000, 2000);
  EXPECT_EQ(untouched.address, nullptr);
  EXPECT_EQ(StoreState::of(store), held);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
  EXPECT_EQ(stored(1, 2000, kKernel).address, first.address);
  EXPECT_EQ(StoreState::of(store), held);
}

TEST_F(GraphDefinitionStoreTest, KernelModeRefusalKeepsStoredDefinitionsAndTheBlockUsable) {
  ASSERT_TRUE(store.commit(4 * kKiB, kKernel).is_ok());
  Placement first;
  Placement second;
  ASSERT_TRUE(store.acquire(1, 1000, kKernel, &first).is_ok());
  ASSERT_TRUE(store.acquire(2, 1000, kKernel, &second).is_ok());
  const StoreState held = StoreState::of(store);
  const MemoryCounters device_before = rig.counters();

  Placement untouched;
  const Status refused = store.acquire(3, 3000, kKernel, &untouched);
  expect_refusal(refused, GrowthPoint::kGraphDefinition, 2 * kAlign + 3000, 4 * kKiB);
  EXPECT_EQ(StoreState::of(store), held);
  EXPECT_TRUE(rig.device.find_allocation(held.address).has_value());
  EXPECT_EQ(stored(1, 1000, kKernel).address, first.address);
  EXPECT_EQ(stored(2, 1000, kKernel).address, second.address);

  // A definition that fits is still placed in the same block.
  Placement fitting;
  ASSERT_TRUE(store.acquire(4, 2 * kKiB, kKernel, &fitting).is_ok());
  EXPECT_TRUE(fitting.needs_upload);
  EXPECT_EQ(fitting.address, byte_at(held.address, 2 * kAlign));
  EXPECT_EQ(store.address(), held.address);
  EXPECT_EQ(store.used(), 4 * kKiB);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

TEST_F(GraphDefinitionStoreTest, KernelModeRefusesToReplaceAProgramBuiltBlock) {
  Placement first;
  ASSERT_TRUE(store.acquire(1, 4 * kKiB, kProgram, &first).is_ok());
  const StoreState held = StoreState::of(store);
  Placement untouched;
  expect_refusal(store.acquire(2, 1, kKernel, &untouched), GrowthPoint::kGraphDefinition,
                 4 * kKiB + 1, 4 * kKiB);
  EXPECT_EQ(StoreState::of(store), held);
  EXPECT_EQ(stored(1, 4 * kKiB, kKernel).address, first.address);
}

TEST_F(GraphDefinitionStoreTest, KernelModeFirstAllocationWhileALaunchIsEncodedIsRefused) {
  Placement untouched;
  expect_refusal(store.acquire(1, 1000, kLaunch, &untouched), GrowthPoint::kLaunchAllocation, 1000,
                 0);
  EXPECT_EQ(untouched.address, nullptr);
  expect_refusal(store.commit(4 * kKiB, kLaunch), GrowthPoint::kLaunchAllocation, 4 * kKiB, 0);
  EXPECT_EQ(StoreState::of(store), StoreState{});
  EXPECT_EQ(rig.counters().allocation_calls, 0u);
}

TEST_F(GraphDefinitionStoreTest, KernelModeWhileALaunchIsEncodedServesFittingRequests) {
  ASSERT_TRUE(store.commit(4 * kKiB, kKernel).is_ok());
  const MemoryCounters device_before = rig.counters();
  Placement placed;
  ASSERT_TRUE(store.acquire(1, 1000, kLaunch, &placed).is_ok());
  EXPECT_TRUE(placed.needs_upload);
  EXPECT_EQ(placed.address, store.address());
  EXPECT_EQ(stored(1, 1000, kLaunch).address, placed.address);
  const StoreState held = StoreState::of(store);
  Placement untouched;
  expect_refusal(store.acquire(2, 4000, kLaunch, &untouched), GrowthPoint::kGraphDefinition,
                 kAlign + 4000, 4 * kKiB);
  EXPECT_EQ(StoreState::of(store), held);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

// ---- commit ------------------------------------------------------------------------------

TEST_F(GraphDefinitionStoreTest, CommitTakesTheFirstAllocation) {
  ASSERT_TRUE(store.commit(8 * kKiB, kKernel).is_ok());
  EXPECT_NE(store.address(), nullptr);
  EXPECT_EQ(store.capacity(), 8 * kKiB);
  EXPECT_EQ(store.used(), 0u);
  EXPECT_EQ(store.alloc_count(), 1u);
  EXPECT_EQ(store.base_changes(), 0u);
  EXPECT_EQ(rig.counters().allocation_calls, 1u);
  Placement placed;
  ASSERT_TRUE(store.acquire(1, 8 * kKiB, kKernel, &placed).is_ok());
  EXPECT_EQ(placed.address, store.address());
  EXPECT_EQ(rig.counters().allocation_calls, 1u);
}

TEST_F(GraphDefinitionStoreTest, CommitOfZeroDoesNothing) {
  for (const GrowthContext context : {kProgram, kKernel, kLaunch}) {
    ASSERT_TRUE(store.commit(0, context).is_ok());
  }
  EXPECT_EQ(StoreState::of(store), StoreState{});
  EXPECT_EQ(rig.counters().allocation_calls, 0u);
}

TEST_F(GraphDefinitionStoreTest, CommitOnACommittedStoreKeepsIt) {
  ASSERT_TRUE(store.commit(8 * kKiB, kKernel).is_ok());
  Placement placed;
  ASSERT_TRUE(store.acquire(1, 1000, kKernel, &placed).is_ok());
  const StoreState held = StoreState::of(store);
  const MemoryCounters device_before = rig.counters();
  for (const std::uint64_t bytes : {8 * kKiB, 2 * kKiB, std::uint64_t{0}}) {
    ASSERT_TRUE(store.commit(bytes, kKernel).is_ok());
    ASSERT_TRUE(store.commit(bytes, kLaunch).is_ok());
  }
  ASSERT_TRUE(store.commit(32 * kKiB, kProgram).is_ok());
  expect_refusal(store.commit(32 * kKiB, kKernel), GrowthPoint::kGraphDefinition, 32 * kKiB,
                 8 * kKiB);
  EXPECT_EQ(StoreState::of(store), held);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
  EXPECT_EQ(stored(1, 1000, kKernel).address, placed.address);
}

// ---- preflight ---------------------------------------------------------------------------

struct PreflightCase {
  std::uint64_t key;
  std::uint64_t bytes;
  GrowthContext context;
};

// preflight() answers exactly what acquire() then does, and touches nothing itself.
void expect_preflight_matches_acquire(testing::DeviceRig &rig, GraphDefinitionStore &store,
                                      const PreflightCase &request) {
  const StoreState before = StoreState::of(store);
  const MemoryCounters device_before = rig.counters();
  const Status predicted = store.preflight(request.key, request.bytes, request.context);
  EXPECT_EQ(StoreState::of(store), before);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
  Placement placement;
  const Status actual = store.acquire(request.key, request.bytes, request.context, &placement);
  expect_same_status(predicted, actual);
}

TEST_F(GraphDefinitionStoreTest, PreflightReturnsExactlyWhatAcquireWouldAndTouchesNothing) {
  const PreflightCase cases[] = {
      {1, 1000, kLaunch},       // empty store, launch encoded: launch_allocation refusal
      {1, 1000, kKernel},       // empty store: first allocation
      {1, 1000, kLaunch},       // stored key
      {2, 1, kKernel},          // does not fit: refusal
      {2, 1, kLaunch},          // does not fit while a launch is encoded: refusal
      {1, 5000, kKernel},       // stored key, whatever its size
      {3, 4 * kKiB, kProgram},  // program mode replaces
      {4, 1, kProgram},         // program mode replaces again
      {5, 8 * kKiB, kKernel},   // refusal at the replaced block
  };
  for (const PreflightCase &request : cases) {
    SCOPED_TRACE(::testing::Message() << "key " << request.key << " bytes " << request.bytes);
    expect_preflight_matches_acquire(rig, store, request);
  }
  // The last placement left one byte used: the next key starts one alignment step in.
  expect_refusal(store.preflight(6, 2, kKernel), GrowthPoint::kGraphDefinition, kAlign + 2, 1);
}

// ---- release -----------------------------------------------------------------------------

TEST_F(GraphDefinitionStoreTest, ReleaseFreesTheBlockAndForgetsEveryKey) {
  Placement placed;
  ASSERT_TRUE(store.acquire(1, 1000, kProgram, &placed).is_ok());
  store.release();
  EXPECT_EQ(store.address(), nullptr);
  EXPECT_EQ(store.capacity(), 0u);
  EXPECT_EQ(store.used(), 0u);
  EXPECT_EQ(store.free_count(), 1u);
  EXPECT_FALSE(rig.device.find_allocation(placed.address).has_value());
  EXPECT_EQ(rig.counters().live_bytes, 0u);
  store.release();
  EXPECT_EQ(store.free_count(), 1u);

  ASSERT_TRUE(store.acquire(1, 1000, kKernel, &placed).is_ok());
  EXPECT_TRUE(placed.needs_upload);
  EXPECT_EQ(store.base_changes(), 0u);
}

TEST(GraphDefinitionStoreLifetimeTest, DestructorReleasesTheBlock) {
  testing::DeviceRig rig;
  {
    GraphDefinitionStore store(rig.allocator);
    ASSERT_TRUE(store.commit(4 * kKiB, kProgram).is_ok());
    Placement placed;
    ASSERT_TRUE(store.acquire(1, 16 * kKiB, kProgram, &placed).is_ok());
  }
  EXPECT_EQ(rig.counters().allocation_calls, 2u);
  EXPECT_EQ(rig.counters().free_calls, 2u);
  EXPECT_EQ(rig.counters().live_bytes, 0u);
}

// ---- allocation-failure sweep ------------------------------------------------------------

// Two slots' stores, as a pipeline holds them.
struct Stores {
  explicit Stores(DeviceAllocator allocator)
      : slots{std::make_unique<GraphDefinitionStore>(allocator),
              std::make_unique<GraphDefinitionStore>(allocator)} {}

  std::unique_ptr<GraphDefinitionStore> slots[2];
};

struct PublishedStore {
  void *address;
  std::uint64_t capacity;
  std::uint64_t used;
  bool operator==(const PublishedStore &) const = default;
};

std::vector<PublishedStore> published_state(const Stores &stores) {
  std::vector<PublishedStore> state;
  for (const auto &store : stores.slots) {
    state.push_back({store->address(), store->capacity(), store->used()});
  }
  return state;
}

using Step = testing::SweepStep<Stores>;

Step commit(int slot, std::uint64_t bytes, GrowthContext context) {
  return [=](Stores &stores) { return stores.slots[slot]->commit(bytes, context); };
}

Step acquire(int slot, std::uint64_t key, std::uint64_t bytes, GrowthContext context) {
  return [=](Stores &stores) {
    Placement placement;
    return stores.slots[slot]->acquire(key, bytes, context, &placement);
  };
}

std::vector<Step> scenario(ExecutionMode mode) {
  const GrowthContext context{mode, false};
  if (mode == ExecutionMode::kProgram) {
    return {
        commit(0, 8 * kKiB, context),      acquire(0, 1, 1000, context),
        acquire(0, 2, 3000, context),      acquire(1, 1, 1000, context),
        acquire(0, 3, 16 * kKiB, context), acquire(0, 3, 16 * kKiB, context),
        acquire(1, 2, 2000, context),      acquire(0, 4, 32 * kKiB, context),
        commit(1, 64 * kKiB, context),     acquire(1, 5, 1000, context),
    };
  }
  return {
      commit(0, 8 * kKiB, context),     acquire(0, 1, 1000, context),
      acquire(1, 1, 4 * kKiB, context), acquire(0, 2, 3000, context),
      acquire(1, 1, 4 * kKiB, context), commit(1, 4 * kKiB, context),
      acquire(0, 1, 1000, context),
  };
}

std::vector<const void *> live_addresses(const std::vector<PublishedStore> &state) {
  std::vector<const void *> addresses;
  for (const PublishedStore &store : state) {
    if (store.address != nullptr) {
      addresses.push_back(store.address);
    }
  }
  return addresses;
}

testing::SweepSubject<Stores, std::vector<PublishedStore>> stores_subject() {
  return {[](DeviceAllocator allocator) { return std::make_unique<Stores>(allocator); },
          published_state, live_addresses};
}

class GraphDefinitionStoreSweepTest : public ::testing::TestWithParam<testing::SweepParam> {};

TEST_P(GraphDefinitionStoreSweepTest, EveryAllocationPointFailsWithoutSideEffects) {
  const auto [mode, throws] = GetParam();
  testing::sweep_allocation_failures(stores_subject(), scenario(mode), throws, 2);
}

INSTANTIATE_TEST_SUITE_P(ModesAndFailureKinds, GraphDefinitionStoreSweepTest,
                         testing::sweep_params(), testing::sweep_param_name);

}  // namespace
}  // namespace replayrt
