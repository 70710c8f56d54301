#include "runtime/host_build_bind.h"

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "context/device_context.h"
#include "runtime/task_graph_builder.h"
#include "support/callable_builder.h"
#include "support/counting_host_api.h"
#include "support/device_rig.h"

namespace replayrt {
namespace {

using testing::CallableBuilder;
using testing::counting_ops;
using testing::CountingRunner;
using testing::f32;
using testing::imm_f32;
using testing::inter;
using testing::param;

class HostBuildBindTest : public ::testing::Test {
 protected:
  HostBuildBindTest() { runner_.context = &context_; }

  std::unique_ptr<const Callable> make(std::uint64_t n) {
    CallableBuilder b(RRT_BIND_HOST_BUILD);
    b.param(f32({n})).param(f32({n}, RRT_DIR_OUT)).intermediate(f32({n}));
    b.task(testing::kScale, {param(0), inter(0), imm_f32(2.0F)});
    b.task(testing::kAdd, {inter(0), param(0), param(1)});
    std::unique_ptr<const Callable> callable;
    EXPECT_TRUE(Callable::create(b.desc(), kernels_, &callable).is_ok());
    return callable;
  }

  Status bind(const Callable &callable, std::uint64_t generation, int slot, bool in_launch,
              std::vector<rrt_tensor_arg_t> &tensors, BoundRun *out,
              const void *resident_image = nullptr, const void *resident_scheduler = nullptr) {
    BindRequest request;
    request.callable = &callable;
    request.callable_id = 0;
    request.generation = generation;
    request.args = RunArgsView{tensors, {}};
    request.resident_image = resident_image;
    request.resident_scheduler = resident_scheduler;
    const HostApi api(&ops_, &runner_, slot, slot, in_launch);
    return bind_host_build(api, request, out);
  }

  testing::DeviceRig rig_;
  DeviceContext context_{rig_.faults};
  KernelRegistry kernels_;
  CountingRunner runner_;
  HostApiOps ops_ = counting_ops();
  std::vector<float> in_ = std::vector<float>(64, 1.0F);
  std::vector<float> out_ = std::vector<float>(64, 0.0F);
};

// G7: upstream's host-build bind committed the runtime pool twice, the second time larger. This
// bind sizes it once, for the seed and the working state together.
TEST_F(HostBuildBindTest, SizesTheRuntimePoolOnceAndUploadsTheDefinitionOncePerKey) {
  const auto callable = make(64);
  std::vector<rrt_tensor_arg_t> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                           {out_.data(), 256, RRT_SPACE_HOST}};
  BoundRun first;
  ASSERT_TRUE(bind(*callable, 1, 0, false, tensors, &first).is_ok());
  EXPECT_EQ(runner_.arena_calls, 1);
  EXPECT_EQ(runner_.uploads, 2);  // the scheduler seed, the definition
  EXPECT_EQ(context_.pooled_sizes(0).runtime_pool, host_build_pool_bytes(*callable));
  context_.end_host_staging(0);

  BoundRun second;
  ASSERT_TRUE(bind(*callable, 1, 0, false, tensors, &second).is_ok());
  EXPECT_EQ(runner_.arena_calls, 1);
  EXPECT_EQ(runner_.uploads, 2);
  EXPECT_EQ(first.referenced[0], second.referenced[0]);  // the same definition
  context_.end_host_staging(0);
}

TEST_F(HostBuildBindTest, ProgramModeStagesEveryHostTensorFreshAndFreesItWhenTheRunEnds) {
  const auto callable = make(64);
  std::vector<rrt_tensor_arg_t> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                           {out_.data(), 256, RRT_SPACE_HOST}};
  BoundRun bound;
  ASSERT_TRUE(bind(*callable, 1, 1, false, tensors, &bound).is_ok());
  ASSERT_EQ(bound.copies_in.size(), 1u);
  ASSERT_EQ(bound.copies_out.size(), 1u);
  EXPECT_EQ(bound.copies_in[0].src, in_.data());
  EXPECT_EQ(bound.copies_out[0].dst, out_.data());
  const std::uint64_t live_during_run = rig_.counters().live_bytes;
  context_.end_host_staging(1);
  EXPECT_EQ(rig_.counters().live_bytes, live_during_run - std::uint64_t{2} * 1024);
  EXPECT_FALSE(rig_.device.find_allocation(bound.copies_in[0].dst).has_value());
}

TEST_F(HostBuildBindTest, AFailedStagingAllocationLeavesNothingBehind) {
  const auto callable = make(64);
  std::vector<rrt_tensor_arg_t> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                           {out_.data(), 256, RRT_SPACE_HOST}};
  rig_.faults.fail_nth_allocation(2);
  BoundRun bound;
  EXPECT_EQ(bind(*callable, 1, 0, false, tensors, &bound).code(), RRT_ERR_OUT_OF_MEMORY);
  context_.end_host_staging(0);
  EXPECT_EQ(rig_.counters().live_bytes, 0u);
}

TEST_F(HostBuildBindTest, KernelModeBindsTheResidentDefinitionWithoutArenaCallsOrAllocation) {
  const auto callable = make(64);
  ASSERT_TRUE(context_.latch().latch(ExecutionMode::kKernel).is_ok());
  rrt_capacity_plan_t plan{};
  plan.host_staging_bytes = std::uint64_t{2} * 1024;
  ASSERT_TRUE(context_.commit_capacity_plan(plan, 0).is_ok());
  void *pool = nullptr;
  GraphDefinitionStore::Placement definition;
  ASSERT_TRUE(context_
                  .place_host_build(GrowthContext{ExecutionMode::kKernel, false},
                                    callable->requirements().gm_heap,
                                    host_build_pool_bytes(*callable), 42,
                                    callable->requirements().image, &pool, &definition)
                  .is_ok());
  std::vector<rrt_tensor_arg_t> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                           {out_.data(), 256, RRT_SPACE_HOST}};
  const MemoryCounters before = rig_.counters();
  BoundRun bound;
  ASSERT_TRUE(bind(*callable, 1, 0, true, tensors, &bound, definition.address, pool).is_ok());
  EXPECT_EQ(runner_.arena_calls, 0);
  EXPECT_EQ(runner_.uploads, 0);
  EXPECT_EQ(bound.referenced[0], definition.address);
  EXPECT_EQ(bound.referenced[1], pool);
  EXPECT_EQ(rig_.counters().allocation_calls, before.allocation_calls);
  context_.end_host_staging(0);
  EXPECT_EQ(rig_.counters().free_calls, before.free_calls);
}

TEST_F(HostBuildBindTest, KernelModeStagingBeyondThePlanIsRefusedBeforeAnythingMoves) {
  const auto callable = make(64);
  ASSERT_TRUE(context_.latch().latch(ExecutionMode::kKernel).is_ok());
  rrt_capacity_plan_t plan{};
  plan.host_staging_bytes = 1024;
  ASSERT_TRUE(context_.commit_capacity_plan(plan, 0).is_ok());
  std::vector<rrt_tensor_arg_t> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                           {out_.data(), 256, RRT_SPACE_HOST}};
  const MemoryCounters before = rig_.counters();
  BoundRun bound;
  const Status refused = bind(*callable, 1, 0, true, tensors, &bound, this, this);
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
  std::vector<rrt_tensor_arg_t> tensors = {{in_.data(), 256, RRT_SPACE_HOST},
                                           {out_.data(), 256, RRT_SPACE_HOST}};
  BoundRun bound;
  const Status refused = bind(*callable, 1, 0, true, tensors, &bound, this, this);
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kLaunchAllocation);
  EXPECT_EQ(rig_.counters().allocation_calls, 0u);
}

}  // namespace
}  // namespace replayrt
