#include "runtime/host_build_bind.h"

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "context/device_context.h"
#include "context/launch_scope.h"
#include "platform/sim/kernels/builtin_kernels.h"
#include "runtime/task_graph_builder.h"
#include "support/callable_builder.h"
#include "support/counting_slot.h"
#include "support/device_rig.h"

namespace replayrt {
namespace {

using testing::CallableBuilder;
using testing::CountingSlot;
using testing::f32;
using testing::imm_f32;
using testing::inter;
using testing::param;

class HostBuildBindTest : public ::testing::Test {
 protected:
  std::unique_ptr<const Callable> make(std::uint64_t n) {
    CallableBuilder b(RRT_BIND_HOST_BUILD);
    b.param(f32({n})).param(f32({n}, RRT_DIR_OUT)).intermediate(f32({n}));
    b.task(testing::kScale, {param(0), inter(0), imm_f32(2.0F)});
    b.task(testing::kAdd, {inter(0), param(0), param(1)});
    std::unique_ptr<const Callable> callable;
    EXPECT_TRUE(testing::create_callable(b.desc(), kernels_, &callable).is_ok());
    return callable;
  }

  Status bind(const Callable &callable, std::uint64_t generation, CountingSlot &slot,
              bool in_launch, std::vector<TensorArg> &tensors, BoundRun *out,
              ResidentPlacement resident = {}) {
    BindRequest request;
    request.callable = &callable;
    request.callable_id = 0;
    request.generation = generation;
    request.args = RunArgsView{tensors, {}};
    request.resident = resident;
    if (!in_launch) {
      return strategy_.bind(slot, request, out);
    }
    const LaunchScope scope(context_);
    return strategy_.bind(slot, request, out);
  }

  testing::DeviceRig rig_;
  DeviceContext context_{rig_.faults};
  KernelRegistry kernels_{sim::builtin_launchers()};
  HostBuildBind strategy_;
  CountingSlot slot0_{context_, 0};
  CountingSlot slot1_{context_, 1};
  std::vector<float> in_ = std::vector<float>(64, 1.0F);
  std::vector<float> out_ = std::vector<float>(64, 0.0F);
};

// G7: upstream's host-build bind committed the runtime pool twice, the second time larger. This
// bind sizes it once, for the seed and the working state together.
TEST_F(HostBuildBindTest, SizesTheRuntimePoolOnceAndUploadsTheDefinitionOncePerKey) {
  const auto callable = make(64);
  std::vector<TensorArg> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                    {out_.data(), 256, RRT_SPACE_HOST}};
  BoundRun first;
  ASSERT_TRUE(bind(*callable, 1, slot0_, false, tensors, &first).is_ok());
  EXPECT_EQ(slot0_.bank_sizings, 1);
  EXPECT_EQ(slot0_.uploads, 2);  // the scheduler seed, the definition
  EXPECT_EQ(context_.slot(0).bank_capacities().runtime_pool,
            strategy_.footprint(*callable).runtime_pool);

  BoundRun second;
  ASSERT_TRUE(bind(*callable, 1, slot0_, false, tensors, &second).is_ok());
  EXPECT_EQ(slot0_.bank_sizings, 1);
  EXPECT_EQ(first.referenced[0], second.referenced[0]);  // the same definition
  const std::uint64_t uploads = slot0_.uploads;
  BoundRun third;
  ASSERT_TRUE(bind(*callable, 1, slot0_, false, tensors, &third).is_ok());
  EXPECT_EQ(slot0_.uploads, uploads);
}

TEST_F(HostBuildBindTest, TwoCallablesAlternatingSettleIntoASteadyStateWithoutAllocations) {
  const auto a = make(64);
  const auto b = make(128);
  std::vector<TensorArg> small = {{in_.data(), 256, RRT_SPACE_HOST},
                                  {out_.data(), 256, RRT_SPACE_HOST}};
  std::vector<float> big_in(128, 1.0F);
  std::vector<float> big_out(128, 0.0F);
  std::vector<TensorArg> big = {{big_in.data(), 512, RRT_SPACE_HOST},
                                {big_out.data(), 512, RRT_SPACE_HOST}};
  BoundRun bound;
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(bind(*a, 1, slot0_, false, small, &bound).is_ok());
    ASSERT_TRUE(bind(*b, 2, slot0_, false, big, &bound).is_ok());
  }
  const MemoryCounters settled = rig_.counters();
  const std::uint64_t moves = context_.region_stats(GrowthPoint::kGraphDefinition).base_changes;
  for (int round = 0; round < 50; ++round) {
    ASSERT_TRUE(bind(*a, 1, slot0_, false, small, &bound).is_ok());
    ASSERT_TRUE(bind(*b, 2, slot0_, false, big, &bound).is_ok());
  }
  EXPECT_EQ(rig_.counters().allocation_calls, settled.allocation_calls);
  EXPECT_EQ(rig_.counters().free_calls, settled.free_calls);
  EXPECT_EQ(context_.region_stats(GrowthPoint::kGraphDefinition).base_changes, moves);
}

TEST_F(HostBuildBindTest, ProgramModeStagesHostTensorsInTheSlotsKeptHostStaging) {
  const auto callable = make(64);
  std::vector<TensorArg> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                    {out_.data(), 256, RRT_SPACE_HOST}};
  BoundRun bound;
  ASSERT_TRUE(bind(*callable, 1, slot1_, false, tensors, &bound).is_ok());
  ASSERT_EQ(bound.copies_in.size(), 1u);
  ASSERT_EQ(bound.copies_out.size(), 1u);
  EXPECT_EQ(bound.copies_in[0].src, in_.data());
  EXPECT_EQ(bound.copies_out[0].dst, out_.data());
  EXPECT_EQ(context_.region_stats(GrowthPoint::kHostStaging).capacity, 2048u);
  const MemoryCounters before = rig_.counters();
  BoundRun again;
  ASSERT_TRUE(bind(*callable, 1, slot1_, false, tensors, &again).is_ok());
  EXPECT_EQ(again.copies_in[0].dst, bound.copies_in[0].dst);
  EXPECT_EQ(rig_.counters().allocation_calls, before.allocation_calls);
}

TEST_F(HostBuildBindTest, AFailedStagingAllocationLeavesNothingBehind) {
  const auto callable = make(64);
  std::vector<TensorArg> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                    {out_.data(), 256, RRT_SPACE_HOST}};
  for (int n = 1; n <= 4; ++n) {
    SCOPED_TRACE(n);
    rig_.faults.fail_nth_allocation(n);
    BoundRun bound;
    EXPECT_EQ(bind(*callable, 1, slot0_, false, tensors, &bound).code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(rig_.counters().live_bytes, 0u);
    EXPECT_EQ(context_.slot(0).bank_bases(), BankBases{});
    rig_.faults.clear_faults();
  }
}

TEST_F(HostBuildBindTest, KernelModeBindsTheResidentDefinitionWithoutArenaCallsOrAllocation) {
  const auto callable = make(64);
  CapacityPlan plan{};
  plan.host_staging_bytes = std::uint64_t{2} * 1024;
  auto latch_kernel_mode = [this] { return context_.latch().latch(ExecutionMode::kKernel); };
  ASSERT_TRUE(context_.commit_capacity_plan(plan, 0, latch_kernel_mode).is_ok());
  ResidentPlacement resident;
  ASSERT_TRUE(strategy_.place_resident(context_, *callable, 0, 1, &resident).is_ok());
  std::vector<TensorArg> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                    {out_.data(), 256, RRT_SPACE_HOST}};
  const MemoryCounters before = rig_.counters();
  BoundRun bound;
  ASSERT_TRUE(bind(*callable, 1, slot0_, true, tensors, &bound, resident).is_ok());
  EXPECT_EQ(slot0_.bank_sizings, 0);
  EXPECT_EQ(slot0_.uploads, 0);
  EXPECT_EQ(bound.referenced[0], resident.image);
  EXPECT_EQ(bound.referenced[1], resident.scheduler);
  EXPECT_EQ(rig_.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(rig_.counters().free_calls, before.free_calls);
}

TEST_F(HostBuildBindTest, KernelModeStagingBeyondThePlanIsRefusedBeforeAnythingMoves) {
  const auto callable = make(64);
  CapacityPlan plan{};
  plan.host_staging_bytes = 1024;
  auto latch_kernel_mode = [this] { return context_.latch().latch(ExecutionMode::kKernel); };
  ASSERT_TRUE(context_.commit_capacity_plan(plan, 0, latch_kernel_mode).is_ok());
  std::vector<TensorArg> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                    {out_.data(), 256, RRT_SPACE_HOST}};
  const MemoryCounters before = rig_.counters();
  BoundRun bound;
  const Status refused =
      bind(*callable, 1, slot0_, true, tensors, &bound, ResidentPlacement{this, this, this});
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kHostStaging);
  EXPECT_EQ(refused.requested_bytes(), 2048u);
  EXPECT_EQ(refused.capacity_bytes(), 1024u);
  EXPECT_EQ(rig_.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(context_.region_stats(GrowthPoint::kHostStaging).capacity, 1024u);
  EXPECT_TRUE(bound.copies_in.empty());
}

TEST_F(HostBuildBindTest, KernelModeStagingThatWasNeverPlannedIsALaunchAllocationRefusal) {
  const auto callable = make(64);
  ASSERT_TRUE(context_.latch().latch(ExecutionMode::kKernel).is_ok());
  std::vector<TensorArg> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                    {out_.data(), 256, RRT_SPACE_HOST}};
  BoundRun bound;
  const Status refused =
      bind(*callable, 1, slot0_, true, tensors, &bound, ResidentPlacement{this, this, this});
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kLaunchAllocation);
  EXPECT_EQ(rig_.counters().allocation_calls, 0u);
}

}  // namespace
}  // namespace replayrt
