#include "memory/dfx_collectors.h"

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "support/allocation_failure_sweep.h"
#include "support/device_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using testing::expect_refusal;
using testing::expect_same_status;
using testing::kKernel;
using testing::kLaunch;
using testing::kProgram;

constexpr int kAreas = 3;

// The pool bytes a shape of `tasks` records per area takes.
constexpr std::uint64_t pool_bytes_for(std::uint32_t tasks) {
  return std::uint64_t{tasks} * kAreas * sizeof(TaskTiming);
}

struct CollectorState {
  TaskTiming *pool = nullptr;
  LaunchRecord *wall = nullptr;
  std::uint32_t shape = 0;
  std::uint64_t pool_bytes = 0;
  std::uint64_t base_changes = 0;
  std::uint64_t alloc_count = 0;
  std::uint64_t free_count = 0;

  static CollectorState of(const DfxCollectors &dfx) {
    return {dfx.timings(0),     dfx.wall(0),       dfx.shape(),     dfx.pool_bytes(),
            dfx.base_changes(), dfx.alloc_count(), dfx.free_count()};
  }
  bool operator==(const CollectorState &) const = default;
};

class DfxCollectorsTest : public ::testing::Test {
 protected:
  testing::DeviceRig rig;
  DfxCollectors dfx{rig.allocator, kAreas};
};

// ---- program mode ------------------------------------------------------------------------

TEST_F(DfxCollectorsTest, EmptyCollectorsHoldNoBuffers) {
  EXPECT_EQ(CollectorState::of(dfx), CollectorState{});
  for (int area = 0; area < kAreas; ++area) {
    EXPECT_EQ(dfx.timings(area), nullptr);
    EXPECT_EQ(dfx.wall(area), nullptr);
  }
  EXPECT_FALSE(dfx.would_rebuild(16));
}

TEST_F(DfxCollectorsTest, FirstEnsureAllocatesThePoolAndTheWall) {
  ASSERT_TRUE(dfx.ensure(16, kProgram).is_ok());
  EXPECT_EQ(dfx.shape(), 16u);
  EXPECT_EQ(dfx.pool_bytes(), pool_bytes_for(16));
  EXPECT_EQ(dfx.alloc_count(), 2u);
  EXPECT_EQ(dfx.base_changes(), 0u);
  EXPECT_EQ(rig.counters().allocation_calls, 2u);

  const auto pool = rig.device.find_allocation(dfx.timings(0));
  const auto wall = rig.device.find_allocation(dfx.wall(0));
  ASSERT_TRUE(pool.has_value());
  ASSERT_TRUE(wall.has_value());
  EXPECT_EQ(pool->base, reinterpret_cast<std::uintptr_t>(dfx.timings(0)));
  EXPECT_GE(pool->size, pool_bytes_for(16));
  EXPECT_EQ(wall->base, reinterpret_cast<std::uintptr_t>(dfx.wall(0)));
  EXPECT_GE(wall->size, kAreas * sizeof(LaunchRecord));

  for (int area = 0; area < kAreas; ++area) {
    EXPECT_EQ(dfx.timings(area), dfx.timings(0) + static_cast<std::ptrdiff_t>(area) * 16);
    EXPECT_EQ(dfx.wall(area), dfx.wall(0) + area);
    EXPECT_EQ(dfx.wall(area)->launches, 0u);
    EXPECT_EQ(dfx.wall(area)->tasks, 0u);
  }
  for (std::uint32_t task = 0; task < 16u * kAreas; ++task) {
    EXPECT_EQ(dfx.timings(0)[task].end_ns, 0u);
  }
  EXPECT_EQ(dfx.timings(-1), nullptr);
  EXPECT_EQ(dfx.timings(kAreas), nullptr);
  EXPECT_EQ(dfx.wall(-1), nullptr);
  EXPECT_EQ(dfx.wall(kAreas), nullptr);
}

TEST_F(DfxCollectorsTest, ZeroTasksAllocateNothing) {
  for (const GrowthContext context : {kProgram, kKernel, kLaunch}) {
    ASSERT_TRUE(dfx.ensure(0, context).is_ok());
  }
  EXPECT_EQ(CollectorState::of(dfx), CollectorState{});
  EXPECT_EQ(rig.counters().allocation_calls, 0u);
}

TEST_F(DfxCollectorsTest, ProgramModeLargerShapeRebuildsThePoolButNotTheWall) {
  ASSERT_TRUE(dfx.ensure(16, kProgram).is_ok());
  TaskTiming *const old_pool = dfx.timings(0);
  LaunchRecord *const wall = dfx.wall(0);
  dfx.wall(1)->launches = 5;
  EXPECT_TRUE(dfx.would_rebuild(64));
  const MemoryCounters before = rig.counters();

  ASSERT_TRUE(dfx.ensure(64, kProgram).is_ok());
  EXPECT_EQ(dfx.shape(), 64u);
  EXPECT_EQ(dfx.pool_bytes(), pool_bytes_for(64));
  EXPECT_NE(dfx.timings(0), old_pool);
  EXPECT_FALSE(rig.device.find_allocation(old_pool).has_value());
  EXPECT_EQ(dfx.timings(1), dfx.timings(0) + 64);
  EXPECT_EQ(dfx.base_changes(), 1u);
  EXPECT_EQ(dfx.alloc_count(), 3u);
  EXPECT_EQ(dfx.free_count(), 1u);
  // The new pool is live before the old one is freed.
  EXPECT_GE(rig.counters().peak_live_bytes, before.live_bytes + pool_bytes_for(64));
  EXPECT_FALSE(dfx.would_rebuild(64));

  // The device-wall buffer is neither reallocated nor rewritten.
  EXPECT_EQ(dfx.wall(0), wall);
  EXPECT_EQ(dfx.wall(1)->launches, 5u);
  EXPECT_EQ(rig.counters().allocation_calls, before.allocation_calls + 1);
  EXPECT_EQ(rig.counters().free_calls, before.free_calls + 1);
}

TEST_F(DfxCollectorsTest, ProgramModeSmallerShapesKeepThePool) {
  ASSERT_TRUE(dfx.ensure(64, kProgram).is_ok());
  const CollectorState held = CollectorState::of(dfx);
  const MemoryCounters device_before = rig.counters();
  for (const std::uint32_t tasks : {64u, 16u, 1u, 0u, 63u}) {
    EXPECT_FALSE(dfx.would_rebuild(tasks));
    ASSERT_TRUE(dfx.ensure(tasks, kProgram).is_ok());
    EXPECT_EQ(CollectorState::of(dfx), held);
  }
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

class DfxCollectorsFailureTest : public ::testing::TestWithParam<bool> {
 protected:
  void arm(testing::DeviceRig &rig, std::uint64_t n) const {
    if (GetParam()) {
      rig.faults.throw_on_nth_allocation(n);
    } else {
      rig.faults.fail_nth_allocation(n);
    }
  }
};

TEST_P(DfxCollectorsFailureTest, FailedRebuildKeepsTheOldPool) {
  testing::DeviceRig rig;
  {
    DfxCollectors dfx(rig.allocator, kAreas);
    ASSERT_TRUE(dfx.ensure(16, kProgram).is_ok());
    dfx.timings(2)[3].end_ns = 99;
    const CollectorState held = CollectorState::of(dfx);
    arm(rig, 1);
    const Status failed = dfx.ensure(64, kProgram);
    EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_FALSE(failed.is_capacity_refusal());
    EXPECT_EQ(CollectorState::of(dfx), held);
    EXPECT_TRUE(rig.device.find_allocation(held.pool).has_value());
    EXPECT_TRUE(rig.device.find_allocation(held.wall).has_value());
    EXPECT_EQ(dfx.timings(2)[3].end_ns, 99u);
    ASSERT_TRUE(dfx.ensure(64, kProgram).is_ok());
    EXPECT_EQ(dfx.shape(), 64u);
    EXPECT_EQ(dfx.wall(0), held.wall);
  }
  EXPECT_EQ(rig.counters().allocation_calls, rig.counters().free_calls);
  EXPECT_EQ(rig.counters().live_bytes, 0u);
}

// The wall is the first allocation and the pool the second: a failed pool allocation frees the
// wall it has just taken.
TEST_P(DfxCollectorsFailureTest, FailedFirstAllocationLeavesTheCollectorsEmpty) {
  for (const std::uint64_t n : {1u, 2u}) {
    SCOPED_TRACE(::testing::Message() << "failing allocation " << n);
    testing::DeviceRig rig;
    DfxCollectors dfx(rig.allocator, kAreas);
    arm(rig, n);
    const Status failed = dfx.ensure(16, kKernel);
    EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_FALSE(failed.is_capacity_refusal());
    EXPECT_EQ(dfx.timings(0), nullptr);
    EXPECT_EQ(dfx.wall(0), nullptr);
    EXPECT_EQ(dfx.shape(), 0u);
    EXPECT_EQ(dfx.pool_bytes(), 0u);
    EXPECT_EQ(dfx.alloc_count(), dfx.free_count());
    EXPECT_EQ(rig.counters().allocation_calls, rig.counters().free_calls);
    EXPECT_EQ(rig.counters().live_bytes, 0u);

    ASSERT_TRUE(dfx.ensure(16, kKernel).is_ok());
    EXPECT_NE(dfx.timings(0), nullptr);
    EXPECT_NE(dfx.wall(0), nullptr);
    EXPECT_EQ(dfx.shape(), 16u);
  }
}

INSTANTIATE_TEST_SUITE_P(NullAndThrow, DfxCollectorsFailureTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "Throw" : "Null");
                         });

// ---- kernel mode -------------------------------------------------------------------------

TEST_F(DfxCollectorsTest, KernelModeTakesTheFirstAllocationThenRefusesALargerShape) {
  ASSERT_TRUE(dfx.ensure(16, kKernel).is_ok());
  EXPECT_EQ(dfx.alloc_count(), 2u);
  dfx.timings(1)[0].end_ns = 7;
  dfx.wall(2)->launches = 3;
  const CollectorState held = CollectorState::of(dfx);
  const MemoryCounters device_before = rig.counters();

  const Status refused = dfx.ensure(17, kKernel);
  expect_refusal(refused, GrowthPoint::kDfxCollectors, pool_bytes_for(17), pool_bytes_for(16));
  EXPECT_EQ(CollectorState::of(dfx), held);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
  EXPECT_EQ(dfx.timings(1)[0].end_ns, 7u);
  EXPECT_EQ(dfx.wall(2)->launches, 3u);

  // The collectors stay usable: a shape that fits is served from the same buffers.
  for (const std::uint32_t tasks : {16u, 8u, 1u}) {
    ASSERT_TRUE(dfx.ensure(tasks, kKernel).is_ok());
    EXPECT_EQ(CollectorState::of(dfx), held);
  }
  EXPECT_EQ(dfx.timings(1)[0].end_ns, 7u);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

TEST_F(DfxCollectorsTest, KernelModeRefusesToRebuildAProgramBuiltPool) {
  ASSERT_TRUE(dfx.ensure(16, kProgram).is_ok());
  const CollectorState held = CollectorState::of(dfx);
  expect_refusal(dfx.ensure(1000, kKernel), GrowthPoint::kDfxCollectors, pool_bytes_for(1000),
                 pool_bytes_for(16));
  EXPECT_EQ(CollectorState::of(dfx), held);
  EXPECT_TRUE(rig.device.find_allocation(held.pool).has_value());
  EXPECT_EQ(rig.counters().allocation_calls, 2u);
}

TEST_F(DfxCollectorsTest, KernelModeFirstAllocationWhileALaunchIsEncodedIsRefused) {
  expect_refusal(dfx.ensure(8, kLaunch), GrowthPoint::kLaunchAllocation, pool_bytes_for(8), 0);
  EXPECT_EQ(CollectorState::of(dfx), CollectorState{});
  EXPECT_EQ(rig.counters().allocation_calls, 0u);
}

TEST_F(DfxCollectorsTest, KernelModeWhileALaunchIsEncodedServesFittingShapes) {
  ASSERT_TRUE(dfx.ensure(16, kKernel).is_ok());
  const CollectorState held = CollectorState::of(dfx);
  const MemoryCounters device_before = rig.counters();
  ASSERT_TRUE(dfx.ensure(16, kLaunch).is_ok());
  ASSERT_TRUE(dfx.ensure(4, kLaunch).is_ok());
  expect_refusal(dfx.ensure(32, kLaunch), GrowthPoint::kDfxCollectors, pool_bytes_for(32),
                 pool_bytes_for(16));
  EXPECT_EQ(CollectorState::of(dfx), held);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

// ---- preflight ---------------------------------------------------------------------------

TEST_F(DfxCollectorsTest, PreflightReturnsExactlyWhatEnsureWouldAndTouchesNothing) {
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
    const CollectorState before = CollectorState::of(dfx);
    const MemoryCounters device_before = rig.counters();
    const Status predicted = dfx.preflight(request.tasks, request.context);
    EXPECT_EQ(CollectorState::of(dfx), before);
    EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
    EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
    expect_same_status(predicted, dfx.ensure(request.tasks, request.context));
  }
  expect_refusal(dfx.preflight(33, kKernel), GrowthPoint::kDfxCollectors, pool_bytes_for(33),
                 pool_bytes_for(32));
}

// ---- release -----------------------------------------------------------------------------

TEST_F(DfxCollectorsTest, ReleaseFreesThePoolAndTheWall) {
  ASSERT_TRUE(dfx.ensure(16, kKernel).is_ok());
  const CollectorState held = CollectorState::of(dfx);
  dfx.release();
  EXPECT_EQ(dfx.timings(0), nullptr);
  EXPECT_EQ(dfx.wall(0), nullptr);
  EXPECT_EQ(dfx.shape(), 0u);
  EXPECT_EQ(dfx.pool_bytes(), 0u);
  EXPECT_EQ(dfx.free_count(), 2u);
  EXPECT_FALSE(rig.device.find_allocation(held.pool).has_value());
  EXPECT_FALSE(rig.device.find_allocation(held.wall).has_value());
  EXPECT_EQ(rig.counters().live_bytes, 0u);
  dfx.release();
  EXPECT_EQ(dfx.free_count(), 2u);

  // Released collectors take a first allocation again, wall included.
  ASSERT_TRUE(dfx.ensure(8, kKernel).is_ok());
  EXPECT_NE(dfx.wall(0), nullptr);
  EXPECT_EQ(dfx.alloc_count(), 4u);
  EXPECT_EQ(dfx.base_changes(), 0u);
}

TEST(DfxCollectorsLifetimeTest, DestructorReleasesBothBuffers) {
  testing::DeviceRig rig;
  {
    DfxCollectors dfx(rig.allocator, kAreas);
    ASSERT_TRUE(dfx.ensure(16, kProgram).is_ok());
    ASSERT_TRUE(dfx.ensure(32, kProgram).is_ok());
  }
  EXPECT_EQ(rig.counters().allocation_calls, 3u);
  EXPECT_EQ(rig.counters().free_calls, 3u);
  EXPECT_EQ(rig.counters().live_bytes, 0u);
}

// ---- allocation-failure sweep ------------------------------------------------------------

struct PublishedCollectors {
  TaskTiming *pool;
  LaunchRecord *wall;
  std::uint32_t shape;
  std::uint64_t pool_bytes;
  std::uint64_t held_allocations;
  bool operator==(const PublishedCollectors &) const = default;
};

PublishedCollectors published_state(const DfxCollectors &dfx) {
  return {dfx.timings(0), dfx.wall(0), dfx.shape(), dfx.pool_bytes(),
          dfx.alloc_count() - dfx.free_count()};
}

std::vector<const void *> live_addresses(const PublishedCollectors &state) {
  if (state.pool == nullptr) {
    return {};
  }
  return {state.pool, state.wall};
}

testing::SweepSubject<DfxCollectors, PublishedCollectors> collectors_subject() {
  return {
      [](DeviceAllocator allocator) { return std::make_unique<DfxCollectors>(allocator, kAreas); },
      published_state, live_addresses};
}

std::vector<testing::SweepStep<DfxCollectors>> scenario(ExecutionMode mode) {
  const std::vector<std::uint32_t> task_counts =
      mode == ExecutionMode::kProgram ? std::vector<std::uint32_t>{8, 4, 16, 16, 0, 64, 32, 128}
                                      : std::vector<std::uint32_t>{16, 8, 16, 0, 1};
  std::vector<testing::SweepStep<DfxCollectors>> steps;
  for (const std::uint32_t tasks : task_counts) {
    steps.emplace_back([=](DfxCollectors &dfx) {
      return dfx.ensure(tasks, GrowthContext{mode, false});
    });
  }
  return steps;
}

class DfxCollectorsSweepTest : public ::testing::TestWithParam<testing::SweepParam> {};

TEST_P(DfxCollectorsSweepTest, EveryAllocationPointFailsWithoutSideEffects) {
  const auto [mode, throws] = GetParam();
  testing::sweep_allocation_failures(collectors_subject(), scenario(mode), throws, 2);
}

INSTANTIATE_TEST_SUITE_P(ModesAndFailureKinds, DfxCollectorsSweepTest, testing::sweep_params(),
                         testing::sweep_param_name);

}  // namespace
}  // namespace replayrt
