#include "runtime/device_build_bind.h"

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
using testing::inter;
using testing::param;

class DeviceBuildBindTest : public ::testing::Test {
 protected:
  void make_callable() {
    CallableBuilder b;
    b.param(f32({16})).param(f32({16}, RRT_DIR_INOUT)).param(f32({16}, RRT_DIR_OUT));
    b.intermediate(f32({16}));
    b.task(testing::kAdd, {param(0), param(1), inter(0)});
    b.task(testing::kCopy, {inter(0), param(1)});
    b.task(testing::kCopy, {inter(0), param(2)});
    ASSERT_TRUE(testing::create_callable(b.desc(), kernels_, &callable_).is_ok());
  }

  BindRequest request(std::vector<TensorArg> &tensors) {
    BindRequest r;
    r.callable = callable_.get();
    r.callable_id = 0;
    r.generation = 1;
    r.args = RunArgsView{tensors, {}};
    return r;
  }

  testing::DeviceRig rig_;
  DeviceContext context_{rig_.faults};
  KernelRegistry kernels_{sim::builtin_launchers()};
  std::unique_ptr<const Callable> callable_;
  DeviceBuildBind strategy_;
  float in_[16] = {};
  float inout_[16] = {};
  float out_[16] = {};
};

TEST_F(DeviceBuildBindTest, StagesHostTensorsByDirectionAndPassesDeviceTensorsThrough) {
  make_callable();
  void *device_in = rig_.device.allocate(64);
  std::vector<TensorArg> tensors = {
      {device_in, 64, RRT_SPACE_DEVICE}, {inout_, 64, RRT_SPACE_HOST}, {out_, 64, RRT_SPACE_HOST}};
  BoundRun bound;
  CountingSlot slot(context_, 0);
  ASSERT_TRUE(strategy_.bind(slot, request(tensors), &bound).is_ok());
  // INOUT: in and out; OUT: out only; DEVICE: nothing.
  ASSERT_EQ(bound.copies_in.size(), 1u);
  EXPECT_EQ(bound.copies_in[0].src, inout_);
  ASSERT_EQ(bound.copies_out.size(), 2u);
  EXPECT_EQ(bound.copies_out[0].dst, inout_);
  EXPECT_EQ(bound.copies_out[1].dst, out_);
  // The slices are distinct 1024-aligned pieces of slot 0's retained buffer.
  EXPECT_NE(bound.copies_in[0].dst, bound.copies_out[1].src);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(bound.copies_out[1].src) % 1024, 0u);
  EXPECT_EQ(context_.region_stats(GrowthPoint::kRetainedStaging).capacity, 2048u);
  // The launch may touch the image, gm_sm, gm_heap and all three tensors.
  EXPECT_EQ(bound.referenced.size(), 6u);
  EXPECT_EQ(bound.referenced[3], device_in);
  EXPECT_TRUE(rig_.device.free(device_in).is_ok());
}

TEST_F(DeviceBuildBindTest, ACacheHitMakesNoArenaCallAndNoUpload) {
  make_callable();
  std::vector<TensorArg> tensors = {
      {in_, 64, RRT_SPACE_HOST}, {inout_, 64, RRT_SPACE_HOST}, {out_, 64, RRT_SPACE_HOST}};
  CountingSlot slot(context_, 1);
  BoundRun first;
  ASSERT_TRUE(strategy_.bind(slot, request(tensors), &first).is_ok());
  EXPECT_EQ(slot.bank_sizings, 1);
  EXPECT_EQ(slot.uploads, 1);
  const std::uint64_t allocations = rig_.counters().allocation_calls;
  BoundRun second;
  ASSERT_TRUE(strategy_.bind(slot, request(tensors), &second).is_ok());
  EXPECT_EQ(slot.bank_sizings, 1);
  EXPECT_EQ(slot.uploads, 1);
  EXPECT_EQ(rig_.counters().allocation_calls, allocations);
  EXPECT_EQ(first.referenced, second.referenced);
}

TEST_F(DeviceBuildBindTest, KernelModeBindsTheResidentImageWithoutArenaCallsOrUploads) {
  make_callable();
  CapacityPlan plan{};
  plan.gm_heap_bytes = callable_->requirements().gm_heap;
  plan.gm_sm_bytes = callable_->requirements().scheduler_state;
  plan.runtime_pool_bytes = 4096;
  plan.retained_staging_bytes = std::uint64_t{3} * 1024;
  auto latch_kernel_mode = [this] { return context_.latch().latch(ExecutionMode::kKernel); };
  ASSERT_TRUE(context_.commit_capacity_plan(plan, 0, latch_kernel_mode).is_ok());
  std::vector<TensorArg> tensors = {
      {in_, 64, RRT_SPACE_HOST}, {inout_, 64, RRT_SPACE_HOST}, {out_, 64, RRT_SPACE_HOST}};
  BindRequest r = request(tensors);
  ASSERT_TRUE(strategy_.place_resident(context_, *callable_, 0, 1, &r.resident).is_ok());
  EXPECT_EQ(r.resident.scheduler, context_.slot(0).bank_bases().gm_sm);
  EXPECT_EQ(r.resident.gm_heap, context_.slot(0).bank_bases().gm_heap);
  CountingSlot slot(context_, 0);
  const MemoryCounters before = rig_.counters();
  BoundRun bound;
  {
    const LaunchScope scope(context_);
    ASSERT_TRUE(strategy_.bind(slot, r, &bound).is_ok());
  }
  EXPECT_EQ(slot.bank_sizings, 0);
  EXPECT_EQ(slot.uploads, 0);
  EXPECT_EQ(bound.referenced[0], r.resident.image);
  EXPECT_EQ(bound.referenced[1], r.resident.scheduler);
  EXPECT_EQ(bound.referenced[2], r.resident.gm_heap);
  EXPECT_EQ(rig_.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(rig_.counters().free_calls, before.free_calls);
}

TEST_F(DeviceBuildBindTest, KernelModeStagingBeyondThePlanIsRefusedBeforeAnythingMoves) {
  make_callable();
  CapacityPlan plan{};
  plan.retained_staging_bytes = std::uint64_t{2} * 1024;
  auto latch_kernel_mode = [this] { return context_.latch().latch(ExecutionMode::kKernel); };
  ASSERT_TRUE(context_.commit_capacity_plan(plan, 0, latch_kernel_mode).is_ok());
  const RegionStats held = context_.region_stats(GrowthPoint::kRetainedStaging);
  std::vector<TensorArg> tensors = {
      {in_, 64, RRT_SPACE_HOST}, {inout_, 64, RRT_SPACE_HOST}, {out_, 64, RRT_SPACE_HOST}};
  BindRequest r = request(tensors);
  r.resident.image = this;  // never dereferenced: the refusal comes first
  CountingSlot slot(context_, 0);
  const MemoryCounters before = rig_.counters();
  BoundRun bound;
  const LaunchScope scope(context_);
  const Status refused = strategy_.bind(slot, r, &bound);
  EXPECT_EQ(refused.code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kRetainedStaging);
  EXPECT_EQ(refused.requested_bytes(), 3 * 1024u);
  EXPECT_EQ(refused.capacity_bytes(), 2 * 1024u);
  EXPECT_EQ(rig_.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(rig_.counters().free_calls, before.free_calls);
  EXPECT_EQ(context_.region_stats(GrowthPoint::kRetainedStaging).capacity, held.capacity);
  EXPECT_TRUE(bound.copies_in.empty());
}

}  // namespace
}  // namespace replayrt
