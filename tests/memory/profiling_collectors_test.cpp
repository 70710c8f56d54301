#include "memory/profiling_collectors.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/allocation_failure_sweep.h"
#include "support/block_host_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using testing::BlockHostRig;
using testing::expect_refusal;
using testing::expect_same_status;
using testing::kKernel;
using testing::kLaunch;
using testing::kProgram;

constexpr int kAreas = 3;
constexpr int kFill = 0xA5;

// The timing-block bytes a shape of `tasks` records per area takes.
constexpr std::uint64_t pool_bytes_for(std::uint32_t tasks) {
  return std::uint64_t{tasks} * kAreas * sizeof(TaskTiming);
}
constexpr std::uint64_t kWallBytes = kAreas * sizeof(LaunchRecord);

// plan → stage → zero → publish → latch, as the context sizes the collectors in a transaction
// of their own.
Status size(ProfilingCollectors &collectors, std::uint32_t tasks) {
  BlockTransaction txn;
  RRT_RETURN_IF_ERROR(collectors.plan(txn, tasks));
  RRT_RETURN_IF_ERROR(txn.stage());
  RRT_RETURN_IF_ERROR(collectors.zero_staged());
  txn.publish();
  collectors.latch_shape();
  return Status::ok();
}

bool all_zero(const void *data, std::size_t bytes) {
  const auto *p = static_cast<const unsigned char *>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    if (p[i] != 0) {
      return false;
    }
  }
  return true;
}

struct CollectorState {
  TaskTiming *pool = nullptr;
  LaunchRecord *wall = nullptr;
  std::uint32_t shape = 0;
  std::uint64_t pool_bytes = 0;
  std::uint64_t base_changes = 0;
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;

  static CollectorState of(ProfilingCollectors &collectors) {
    const GuardedBlock &timing = collectors.timing_block();
    const GuardedBlock &wall = collectors.wall_block();
    return {collectors.timings(0),
            collectors.wall(0),
            collectors.shape(),
            collectors.pool_bytes(),
            timing.base_changes() + wall.base_changes(),
            timing.allocations() + wall.allocations(),
            timing.frees() + wall.frees()};
  }
  bool operator==(const CollectorState &) const = default;
};

class ProfilingCollectorsTest : public ::testing::Test {
 protected:
  ProfilingCollectorsTest() { host.fill_allocations_with(kFill); }

  std::vector<testing::BlockHostRig::Event> zeros() const {
    return host.events_of(BlockHostRig::EventKind::kZero);
  }

  BlockHostRig host;
  ProfilingCollectors collectors{host, kAreas};
};

TEST_F(ProfilingCollectorsTest, EmptyCollectorsHoldNoBuffers) {
  EXPECT_EQ(CollectorState::of(collectors), CollectorState{});
  for (int area = 0; area < kAreas; ++area) {
    EXPECT_EQ(collectors.timings(area), nullptr);
    EXPECT_EQ(collectors.wall(area), nullptr);
  }
  EXPECT_FALSE(collectors.would_rebuild(16));
  EXPECT_EQ(collectors.timing_block().point(), GrowthPoint::kDfxCollectors);
  EXPECT_EQ(collectors.wall_block().point(), GrowthPoint::kDfxCollectors);
}

TEST_F(ProfilingCollectorsTest, FirstSizingAllocatesTheTimingAndWallBlocks) {
  ASSERT_TRUE(size(collectors, 16).is_ok());
  EXPECT_EQ(collectors.shape(), 16u);
  EXPECT_EQ(collectors.pool_bytes(), pool_bytes_for(16));
  EXPECT_EQ(collectors.wall_block().capacity(), kWallBytes);
  EXPECT_EQ(CollectorState::of(collectors).allocations, 2u);
  EXPECT_EQ(CollectorState::of(collectors).base_changes, 0u);
  EXPECT_EQ(host.counters().allocation_calls, 2u);

  const auto pool = host.device().find_allocation(collectors.timings(0));
  const auto wall = host.device().find_allocation(collectors.wall(0));
  ASSERT_TRUE(pool.has_value());
  ASSERT_TRUE(wall.has_value());
  EXPECT_EQ(pool->base, reinterpret_cast<std::uintptr_t>(collectors.timings(0)));
  EXPECT_GE(pool->size, pool_bytes_for(16));
  EXPECT_EQ(wall->base, reinterpret_cast<std::uintptr_t>(collectors.wall(0)));
  EXPECT_GE(wall->size, kWallBytes);

  for (int area = 0; area < kAreas; ++area) {
    EXPECT_EQ(collectors.timings(area),
              collectors.timings(0) + static_cast<std::ptrdiff_t>(area) * 16);
    EXPECT_EQ(collectors.wall(area), collectors.wall(0) + area);
  }
  EXPECT_EQ(collectors.timings(-1), nullptr);
  EXPECT_EQ(collectors.timings(kAreas), nullptr);
  EXPECT_EQ(collectors.wall(-1), nullptr);
  EXPECT_EQ(collectors.wall(kAreas), nullptr);
}

// Issue 8 §4: the collectors are zeroed through the device (the host's zero()), not by a host
// memset. The rig fills every new backing, so only a zero() leaves them clean.
TEST_F(ProfilingCollectorsTest, SettleZeroesEveryNewBlockThroughTheHost) {
  ASSERT_TRUE(size(collectors, 16).is_ok());
  const auto zeroed = zeros();
  ASSERT_EQ(zeroed.size(), 2u);
  EXPECT_EQ(zeroed[0].ptr, collectors.timings(0));
  EXPECT_EQ(zeroed[0].bytes, pool_bytes_for(16));
  EXPECT_EQ(zeroed[1].ptr, collectors.wall(0));
  EXPECT_EQ(zeroed[1].bytes, kWallBytes);
  EXPECT_TRUE(all_zero(collectors.timings(0), pool_bytes_for(16)));
  EXPECT_TRUE(all_zero(collectors.wall(0), kWallBytes));

  // A sizing with nothing replaced zeroes nothing, and leaves what the device wrote.
  collectors.wall(1)->launches = 4;
  ASSERT_TRUE(size(collectors, 16).is_ok());
  ASSERT_TRUE(size(collectors, 8).is_ok());
  EXPECT_EQ(zeros().size(), 2u);
  EXPECT_EQ(collectors.wall(1)->launches, 4u);
}

TEST_F(ProfilingCollectorsTest, AFailedZeroLeavesTheCollectorsAsTheyWereAndTheNextSizingZeroes) {
  {
    BlockTransaction txn;
    ASSERT_TRUE(collectors.plan(txn, 8).is_ok());
    ASSERT_TRUE(txn.stage().is_ok());
    host.fail_next_zero();
    EXPECT_EQ(collectors.zero_staged().code(), RRT_ERR_INTERNAL);
  }
  EXPECT_EQ(collectors.shape(), 0u);
  EXPECT_EQ(collectors.timings(0), nullptr);
  EXPECT_FALSE(collectors.timing_block().is_published());
  EXPECT_FALSE(collectors.wall_block().is_published());
  ASSERT_TRUE(size(collectors, 8).is_ok());
  EXPECT_EQ(collectors.shape(), 8u);
  EXPECT_TRUE(all_zero(collectors.timings(0), pool_bytes_for(8)));
  EXPECT_TRUE(all_zero(collectors.wall(0), kWallBytes));
}

TEST_F(ProfilingCollectorsTest, TimingsAndWallAreNullUntilTheFirstLatch) {
  BlockTransaction txn;
  ASSERT_TRUE(collectors.plan(txn, 8).is_ok());
  ASSERT_TRUE(txn.stage().is_ok());
  ASSERT_TRUE(collectors.zero_staged().is_ok());
  txn.publish();
  EXPECT_EQ(collectors.timings(0), nullptr);
  EXPECT_EQ(collectors.wall(0), nullptr);
  collectors.latch_shape();
  EXPECT_NE(collectors.timings(0), nullptr);
  EXPECT_NE(collectors.wall(0), nullptr);
}

TEST_F(ProfilingCollectorsTest, ZeroTasksAllocateNothing) {
  for (const GrowthContext context : {kProgram, kKernel, kLaunch}) {
    host.set_context(context);
    ASSERT_TRUE(size(collectors, 0).is_ok());
    EXPECT_TRUE(collectors.preflight(0).is_ok());
  }
  EXPECT_EQ(CollectorState::of(collectors), CollectorState{});
  EXPECT_EQ(host.allocate_calls(), 0u);
  EXPECT_TRUE(zeros().empty());
}

// ---- program mode ------------------------------------------------------------------------

TEST_F(ProfilingCollectorsTest, ProgramModeLargerShapeRebuildsTheTimingsButNotTheWall) {
  ASSERT_TRUE(size(collectors, 16).is_ok());
  TaskTiming *const old_pool = collectors.timings(0);
  LaunchRecord *const wall = collectors.wall(0);
  collectors.wall(1)->launches = 5;
  EXPECT_TRUE(collectors.would_rebuild(64));
  const MemoryCounters before = host.counters();

  ASSERT_TRUE(size(collectors, 64).is_ok());
  EXPECT_EQ(collectors.shape(), 64u);
  EXPECT_EQ(collectors.pool_bytes(), pool_bytes_for(64));
  EXPECT_NE(collectors.timings(0), old_pool);
  EXPECT_FALSE(host.is_live(old_pool));
  EXPECT_EQ(collectors.timings(1), collectors.timings(0) + 64);
  const CollectorState state = CollectorState::of(collectors);
  EXPECT_EQ(state.base_changes, 1u);
  EXPECT_EQ(state.allocations, 3u);
  EXPECT_EQ(state.frees, 1u);
  // The new timing block is live before the old one is freed.
  EXPECT_GE(host.counters().peak_live_bytes, before.live_bytes + pool_bytes_for(64));
  EXPECT_FALSE(collectors.would_rebuild(64));
  // The rebuilt block is zeroed through the host; the wall is not touched.
  const auto zeroed = zeros();
  ASSERT_EQ(zeroed.size(), 3u);
  EXPECT_EQ(zeroed[2].ptr, collectors.timings(0));
  EXPECT_EQ(zeroed[2].bytes, pool_bytes_for(64));
  EXPECT_TRUE(all_zero(collectors.timings(0), pool_bytes_for(64)));

  // The device-wall block is neither reallocated nor rewritten.
  EXPECT_EQ(collectors.wall(0), wall);
  EXPECT_EQ(collectors.wall(1)->launches, 5u);
  EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls + 1);
  EXPECT_EQ(host.counters().free_calls, before.free_calls + 1);
}

TEST_F(ProfilingCollectorsTest, ProgramModeSmallerShapesKeepTheTimings) {
  ASSERT_TRUE(size(collectors, 64).is_ok());
  const CollectorState held = CollectorState::of(collectors);
  const MemoryCounters before = host.counters();
  for (const std::uint32_t tasks : {64u, 16u, 1u, 0u, 63u}) {
    EXPECT_FALSE(collectors.would_rebuild(tasks));
    ASSERT_TRUE(size(collectors, tasks).is_ok());
    EXPECT_EQ(CollectorState::of(collectors), held);
  }
  EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(host.counters().free_calls, before.free_calls);
  EXPECT_EQ(zeros().size(), 2u);
}

class ProfilingCollectorsFailureTest : public ::testing::TestWithParam<bool> {};

TEST_P(ProfilingCollectorsFailureTest, FailedRebuildKeepsTheOldTimings) {
  BlockHostRig host;
  {
    ProfilingCollectors collectors(host, kAreas);
    ASSERT_TRUE(size(collectors, 16).is_ok());
    collectors.timings(2)[3].end_ns = 99;
    const CollectorState held = CollectorState::of(collectors);
    host.fail_nth_allocation(1, GetParam());
    const Status failed = size(collectors, 64);
    EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_FALSE(failed.is_capacity_refusal());
    EXPECT_EQ(CollectorState::of(collectors), held);
    EXPECT_TRUE(host.is_live(held.pool));
    EXPECT_TRUE(host.is_live(held.wall));
    EXPECT_EQ(collectors.timings(2)[3].end_ns, 99u);
    ASSERT_TRUE(size(collectors, 64).is_ok());
    EXPECT_EQ(collectors.shape(), 64u);
    EXPECT_EQ(collectors.wall(0), held.wall);
  }
  EXPECT_EQ(host.counters().allocation_calls, host.counters().free_calls);
  EXPECT_EQ(host.counters().live_bytes, 0u);
}

// The timing block is the first allocation and the wall the second: a failed wall allocation
// frees the timing block it has just taken.
TEST_P(ProfilingCollectorsFailureTest, FailedFirstAllocationLeavesTheCollectorsEmpty) {
  for (const std::uint64_t n : {1u, 2u}) {
    SCOPED_TRACE(::testing::Message() << "failing allocation " << n);
    BlockHostRig host(kKernel);
    ProfilingCollectors collectors(host, kAreas);
    host.fail_nth_allocation(n, GetParam());
    const Status failed = size(collectors, 16);
    EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_FALSE(failed.is_capacity_refusal());
    EXPECT_EQ(collectors.timings(0), nullptr);
    EXPECT_EQ(collectors.wall(0), nullptr);
    EXPECT_EQ(collectors.shape(), 0u);
    EXPECT_EQ(collectors.pool_bytes(), 0u);
    const CollectorState state = CollectorState::of(collectors);
    EXPECT_EQ(state.allocations, state.frees);
    EXPECT_EQ(host.counters().allocation_calls, host.counters().free_calls);
    EXPECT_EQ(host.counters().live_bytes, 0u);
    EXPECT_TRUE(host.events_of(BlockHostRig::EventKind::kZero).empty());

    ASSERT_TRUE(size(collectors, 16).is_ok());
    EXPECT_NE(collectors.timings(0), nullptr);
    EXPECT_NE(collectors.wall(0), nullptr);
    EXPECT_EQ(collectors.shape(), 16u);
  }
}

INSTANTIATE_TEST_SUITE_P(NullAndThrow, ProfilingCollectorsFailureTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "Throw" : "Null");
                         });

// ---- kernel mode -------------------------------------------------------------------------

TEST_F(ProfilingCollectorsTest, KernelModeTakesTheFirstAllocationThenRefusesALargerShape) {
  host.set_context(kKernel);
  ASSERT_TRUE(size(collectors, 16).is_ok());
  EXPECT_EQ(CollectorState::of(collectors).allocations, 2u);
  collectors.timings(1)[0].end_ns = 7;
  collectors.wall(2)->launches = 3;
  const CollectorState held = CollectorState::of(collectors);
  const MemoryCounters before = host.counters();

  expect_refusal(size(collectors, 17), GrowthPoint::kDfxCollectors, pool_bytes_for(17),
                 pool_bytes_for(16));
  EXPECT_EQ(CollectorState::of(collectors), held);
  EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(host.counters().free_calls, before.free_calls);
  EXPECT_EQ(collectors.timings(1)[0].end_ns, 7u);
  EXPECT_EQ(collectors.wall(2)->launches, 3u);
  EXPECT_EQ(host.refusals(GrowthPoint::kDfxCollectors), 1u);

  // The collectors stay usable: a shape that fits is served from the same blocks.
  for (const std::uint32_t tasks : {16u, 8u, 1u}) {
    ASSERT_TRUE(size(collectors, tasks).is_ok());
    EXPECT_EQ(CollectorState::of(collectors), held);
  }
  EXPECT_EQ(collectors.timings(1)[0].end_ns, 7u);
  EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(host.counters().free_calls, before.free_calls);
}

TEST_F(ProfilingCollectorsTest, KernelModeRefusesToRebuildAProgramBuiltPool) {
  ASSERT_TRUE(size(collectors, 16).is_ok());
  const CollectorState held = CollectorState::of(collectors);
  host.set_context(kKernel);
  expect_refusal(size(collectors, 1000), GrowthPoint::kDfxCollectors, pool_bytes_for(1000),
                 pool_bytes_for(16));
  EXPECT_EQ(CollectorState::of(collectors), held);
  EXPECT_TRUE(host.is_live(held.pool));
  EXPECT_EQ(host.counters().allocation_calls, 2u);
}

TEST_F(ProfilingCollectorsTest, KernelModeFirstAllocationWhileALaunchIsEncodedIsRefused) {
  host.set_context(kLaunch);
  expect_refusal(size(collectors, 8), GrowthPoint::kLaunchAllocation, pool_bytes_for(8), 0);
  EXPECT_EQ(CollectorState::of(collectors), CollectorState{});
  EXPECT_EQ(host.allocate_calls(), 0u);
  EXPECT_EQ(host.refusals(GrowthPoint::kLaunchAllocation), 1u);
}

TEST_F(ProfilingCollectorsTest, KernelModeWhileALaunchIsEncodedServesFittingShapes) {
  host.set_context(kKernel);
  ASSERT_TRUE(size(collectors, 16).is_ok());
  const CollectorState held = CollectorState::of(collectors);
  const MemoryCounters before = host.counters();
  host.set_context(kLaunch);
  ASSERT_TRUE(size(collectors, 16).is_ok());
  ASSERT_TRUE(size(collectors, 4).is_ok());
  expect_refusal(size(collectors, 32), GrowthPoint::kDfxCollectors, pool_bytes_for(32),
                 pool_bytes_for(16));
  EXPECT_EQ(CollectorState::of(collectors), held);
  EXPECT_EQ(host.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(host.counters().free_calls, before.free_calls);
}

// ---- preflight ---------------------------------------------------------------------------

TEST_F(ProfilingCollectorsTest, PreflightReturnsExactlyWhatPlanWouldAndTouchesNothing) {
  struct Request {
    std::uint32_t tasks;
    GrowthContext context;
  };
  const Request requests[] = {
      {8, kLaunch},    // empty, launch encoded: launch_allocation refusal
      {0, kLaunch},    // nothing needed
      {8, kKernel},    // first allocation
      {8, kLaunch},    // fits
      {9, kKernel},    // larger shape: refusal
      {9, kLaunch},    // larger shape while a launch is encoded: refusal
      {32, kProgram},  // program mode rebuilds
      {4, kKernel},    // fits the rebuilt pool
      {33, kKernel},   // refusal at the rebuilt shape
  };
  for (const Request &request : requests) {
    SCOPED_TRACE(::testing::Message() << "tasks " << request.tasks);
    host.set_context(request.context);
    const CollectorState before = CollectorState::of(collectors);
    const std::uint64_t calls_before = host.allocate_calls();
    const std::uint64_t refusals_before = host.total_refusals();
    const Status predicted = collectors.preflight(request.tasks);
    EXPECT_EQ(CollectorState::of(collectors), before);
    EXPECT_EQ(host.allocate_calls(), calls_before);
    EXPECT_EQ(host.total_refusals(), refusals_before);
    expect_same_status(predicted, size(collectors, request.tasks));
  }
  expect_refusal(collectors.preflight(33), GrowthPoint::kDfxCollectors, pool_bytes_for(33),
                 pool_bytes_for(32));
}

// ---- release -----------------------------------------------------------------------------

TEST_F(ProfilingCollectorsTest, ReleaseFreesBothBlocks) {
  host.set_context(kKernel);
  ASSERT_TRUE(size(collectors, 16).is_ok());
  const CollectorState held = CollectorState::of(collectors);
  collectors.release();
  EXPECT_EQ(collectors.timings(0), nullptr);
  EXPECT_EQ(collectors.wall(0), nullptr);
  EXPECT_EQ(collectors.shape(), 0u);
  EXPECT_EQ(collectors.pool_bytes(), 0u);
  EXPECT_EQ(CollectorState::of(collectors).frees, 2u);
  EXPECT_FALSE(host.is_live(held.pool));
  EXPECT_FALSE(host.is_live(held.wall));
  EXPECT_EQ(host.counters().live_bytes, 0u);
  collectors.release();
  EXPECT_EQ(CollectorState::of(collectors).frees, 2u);

  // Released collectors take a first allocation again, wall included, zeroed again.
  ASSERT_TRUE(size(collectors, 8).is_ok());
  EXPECT_NE(collectors.wall(0), nullptr);
  EXPECT_EQ(CollectorState::of(collectors).allocations, 4u);
  EXPECT_EQ(CollectorState::of(collectors).base_changes, 0u);
  EXPECT_EQ(zeros().size(), 4u);
  EXPECT_TRUE(all_zero(collectors.timings(0), pool_bytes_for(8)));
}

TEST(ProfilingCollectorsLifetimeTest, DestructorReleasesBothBlocks) {
  BlockHostRig host;
  {
    ProfilingCollectors collectors(host, kAreas);
    ASSERT_TRUE(size(collectors, 16).is_ok());
    ASSERT_TRUE(size(collectors, 32).is_ok());
  }
  EXPECT_EQ(host.counters().allocation_calls, 3u);
  EXPECT_EQ(host.counters().free_calls, 3u);
  EXPECT_EQ(host.counters().live_bytes, 0u);
}

// ---- allocation-failure sweep ------------------------------------------------------------

struct PublishedCollectors {
  TaskTiming *pool;
  LaunchRecord *wall;
  std::uint32_t shape;
  std::uint64_t pool_bytes;
  std::uint64_t held_timing_blocks;
  bool operator==(const PublishedCollectors &) const = default;
};

PublishedCollectors collectors_published_state(const ProfilingCollectors &collectors) {
  const GuardedBlock &timing = collectors.timing_block();
  return {collectors.timings(0), collectors.wall(0), collectors.shape(), collectors.pool_bytes(),
          timing.allocations() - timing.frees()};
}

std::vector<const void *> collectors_live_addresses(const PublishedCollectors &state) {
  if (state.pool == nullptr) {
    return {};
  }
  return {state.pool, state.wall};
}

testing::SweepSubject<ProfilingCollectors, PublishedCollectors> collectors_subject() {
  return {[](BlockHost &host) { return std::make_unique<ProfilingCollectors>(host, kAreas); },
          collectors_published_state, collectors_live_addresses};
}

std::vector<testing::SweepStep<ProfilingCollectors>> collectors_scenario(ExecutionMode mode) {
  const std::vector<std::uint32_t> task_counts =
      mode == ExecutionMode::kProgram ? std::vector<std::uint32_t>{8, 4, 16, 16, 0, 64, 32, 128}
                                      : std::vector<std::uint32_t>{16, 8, 16, 0, 1};
  std::vector<testing::SweepStep<ProfilingCollectors>> steps;
  for (const std::uint32_t tasks : task_counts) {
    steps.emplace_back([=](ProfilingCollectors &collectors) { return size(collectors, tasks); });
  }
  return steps;
}

class ProfilingCollectorsSweepTest : public ::testing::TestWithParam<testing::SweepParam> {};

TEST_P(ProfilingCollectorsSweepTest, EveryAllocationPointFailsWithoutSideEffects) {
  const auto [mode, throws] = GetParam();
  testing::sweep_allocation_failures(collectors_subject(), collectors_scenario(mode), mode, throws,
                                     2);
}

INSTANTIATE_TEST_SUITE_P(ModesAndFailureKinds, ProfilingCollectorsSweepTest,
                         testing::sweep_params(), testing::sweep_param_name);

}  // namespace
}  // namespace replayrt
