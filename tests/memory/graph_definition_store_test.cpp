#include "memory/graph_definition_store.h"

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "support/device_rig.h"

namespace replayrt {
namespace {

constexpr GrowthContext kProgram{ExecutionMode::kProgram, false};
constexpr GrowthContext kKernel{ExecutionMode::kKernel, false};
constexpr GrowthContext kLaunch{ExecutionMode::kKernel, true};
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

std::byte *at(void *base, std::uint64_t offset) {
  return static_cast<std::byte *>(base) + offset;
}

void expect_refusal(const Status &status, GrowthPoint point, std::uint64_t requested,
                    std::uint64_t capacity) {
  EXPECT_EQ(status.code(), RRT_ERR_INTERNAL) << status.message();
  EXPECT_TRUE(status.is_capacity_refusal());
  EXPECT_EQ(status.growth_point(), point);
  EXPECT_EQ(status.requested_bytes(), requested);
  EXPECT_EQ(status.capacity_bytes(), capacity);
}

void expect_same_status(const Status &actual, const Status &expected) {
  EXPECT_EQ(actual.code(), expected.code());
  EXPECT_EQ(actual.is_capacity_refusal(), expected.is_capacity_refusal());
  EXPECT_EQ(actual.growth_point(), expected.growth_point());
  EXPECT_EQ(actual.requested_bytes(), expected.requested_bytes());
  EXPECT_EQ(actual.capacity_bytes(), expected.capacity_bytes());
  EXPECT_EQ(actual.message(), expected.message());
}

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
  EXPECT_EQ(second.address, at(block, kAlign));
  EXPECT_EQ(third.address, at(block, 3 * kAlign));
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
  EXPECT_EQ(fitting.address, at(held.address, 2 * kAlign));
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

using Step = std::function<Status(Stores &)>;

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

std::uint64_t allocations_of_a_clean_run(ExecutionMode mode) {
  testing::DeviceRig rig;
  Stores stores(rig.allocator);
  for (const Step &step : scenario(mode)) {
    EXPECT_TRUE(step(stores).is_ok());
  }
  return rig.faults.allocation_attempts();
}

class GraphDefinitionStoreSweepTest
    : public ::testing::TestWithParam<std::tuple<ExecutionMode, bool>> {};

TEST_P(GraphDefinitionStoreSweepTest, EveryAllocationPointFailsWithoutSideEffects) {
  const auto [mode, throws] = GetParam();
  const std::uint64_t points = allocations_of_a_clean_run(mode);
  ASSERT_GE(points, 2u);
  for (std::uint64_t n = 1; n <= points; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing allocation " << n << " of " << points);
    testing::DeviceRig rig;
    {
      Stores stores(rig.allocator);
      if (throws) {
        rig.faults.throw_on_nth_allocation(n);
      } else {
        rig.faults.fail_nth_allocation(n);
      }
      int failed_steps = 0;
      for (const Step &step : scenario(mode)) {
        const std::vector<PublishedStore> before = published_state(stores);
        const Status status = step(stores);
        if (status.is_ok()) {
          continue;
        }
        ++failed_steps;
        EXPECT_EQ(status.code(), RRT_ERR_OUT_OF_MEMORY) << status.message();
        EXPECT_EQ(published_state(stores), before);
        for (const PublishedStore &store : before) {
          if (store.address != nullptr) {
            EXPECT_TRUE(rig.device.find_allocation(store.address).has_value());
          }
        }
        ASSERT_TRUE(step(stores).is_ok()) << "retry after the device recovered";
      }
      EXPECT_EQ(failed_steps, 1);
      EXPECT_EQ(rig.faults.injected_failures(), 1u);
    }
    EXPECT_EQ(rig.counters().allocation_calls, rig.counters().free_calls);
    EXPECT_EQ(rig.counters().live_bytes, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    ModesAndFailureKinds, GraphDefinitionStoreSweepTest,
    ::testing::Combine(::testing::Values(ExecutionMode::kProgram, ExecutionMode::kKernel),
                       ::testing::Bool()),
    [](const ::testing::TestParamInfo<GraphDefinitionStoreSweepTest::ParamType> &info) {
      const bool kernel = std::get<0>(info.param) == ExecutionMode::kKernel;
      return std::string(kernel ? "Kernel" : "Program") +
             (std::get<1>(info.param) ? "Throw" : "Null");
    });

}  // namespace
}  // namespace replayrt
