#include "runtime/device_build_bind.h"

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
using testing::inter;
using testing::param;

class DeviceBuildBindTest : public ::testing::Test {
 protected:
  DeviceBuildBindTest() { runner_.context = &context_; }

  void make_callable() {
    CallableBuilder b;
    b.param(f32({16})).param(f32({16}, RRT_DIR_INOUT)).param(f32({16}, RRT_DIR_OUT));
    b.intermediate(f32({16}));
    b.task(testing::kAdd, {param(0), param(1), inter(0)});
    b.task(testing::kCopy, {inter(0), param(1)});
    b.task(testing::kCopy, {inter(0), param(2)});
    ASSERT_TRUE(Callable::create(b.desc(), kernels_, &callable_).is_ok());
  }

  BindRequest request(std::vector<rrt_tensor_arg_t> &tensors) {
    BindRequest r;
    r.callable = callable_.get();
    r.callable_id = 0;
    r.generation = 1;
    r.args = RunArgsView{tensors, {}};
    return r;
  }

  testing::DeviceRig rig_;
  DeviceContext context_{rig_.faults};
  KernelRegistry kernels_;
  std::unique_ptr<const Callable> callable_;
  CountingRunner runner_;
  HostApiOps ops_ = counting_ops();
  float in_[16] = {};
  float inout_[16] = {};
  float out_[16] = {};
};

TEST_F(DeviceBuildBindTest, StagesHostTensorsByDirectionAndPassesDeviceTensorsThrough) {
  make_callable();
  void *device_in = rig_.device.allocate(64);
  std::vector<rrt_tensor_arg_t> tensors = {
      {device_in, 64, RRT_SPACE_DEVICE}, {inout_, 64, RRT_SPACE_HOST}, {out_, 64, RRT_SPACE_HOST}};
  BoundRun bound;
  const HostApi api(&ops_, &runner_, 0, 0, false);
  ASSERT_TRUE(bind_device_build(api, request(tensors), &bound).is_ok());
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
  std::vector<rrt_tensor_arg_t> tensors = {
      {in_, 64, RRT_SPACE_HOST}, {inout_, 64, RRT_SPACE_HOST}, {out_, 64, RRT_SPACE_HOST}};
  const HostApi api(&ops_, &runner_, 1, 1, false);
  BoundRun first;
  ASSERT_TRUE(bind_device_build(api, request(tensors), &first).is_ok());
  EXPECT_EQ(runner_.arena_calls, 1);
  EXPECT_EQ(runner_.uploads, 1);
  const std::uint64_t allocations = rig_.counters().allocation_calls;
  BoundRun second;
  ASSERT_TRUE(bind_device_build(api, request(tensors), &second).is_ok());
  EXPECT_EQ(runner_.arena_calls, 1);
  EXPECT_EQ(runner_.uploads, 1);
  EXPECT_EQ(rig_.counters().allocation_calls, allocations);
  EXPECT_EQ(first.referenced, second.referenced);
}

TEST_F(DeviceBuildBindTest, KernelModeBindsTheResidentImageWithoutArenaCallsOrUploads) {
  make_callable();
  ASSERT_TRUE(context_.latch().latch(ExecutionMode::kKernel).is_ok());
  rrt_capacity_plan_t plan{};
  plan.gm_heap_bytes = callable_->requirements().gm_heap;
  plan.gm_sm_bytes = callable_->requirements().scheduler_state;
  plan.runtime_pool_bytes = 4096;
  plan.retained_staging_bytes = std::uint64_t{3} * 1024;
  ASSERT_TRUE(context_.commit_capacity_plan(plan, 0).is_ok());
  void *image = nullptr;
  ASSERT_TRUE(context_
                  .place_resident_image(GrowthContext{ExecutionMode::kKernel, false}, 0, 0,
                                        callable_->requirements().image, &image)
                  .is_ok());
  std::vector<rrt_tensor_arg_t> tensors = {
      {in_, 64, RRT_SPACE_HOST}, {inout_, 64, RRT_SPACE_HOST}, {out_, 64, RRT_SPACE_HOST}};
  BindRequest r = request(tensors);
  r.resident_image = image;
  r.resident_scheduler = context_.pooled_bases(0).gm_sm;
  r.resident_gm_heap = context_.pooled_bases(0).gm_heap;
  const HostApi api(&ops_, &runner_, 0, 0, true);
  const MemoryCounters before = rig_.counters();
  BoundRun bound;
  ASSERT_TRUE(bind_device_build(api, r, &bound).is_ok());
  EXPECT_EQ(runner_.arena_calls, 0);
  EXPECT_EQ(runner_.uploads, 0);
  EXPECT_EQ(bound.referenced[0], image);
  EXPECT_EQ(bound.referenced[1], r.resident_scheduler);
  EXPECT_EQ(bound.referenced[2], r.resident_gm_heap);
  EXPECT_EQ(rig_.counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(rig_.counters().free_calls, before.free_calls);
}

TEST_F(DeviceBuildBindTest, KernelModeStagingBeyondThePlanIsRefusedBeforeAnythingMoves) {
  make_callable();
  ASSERT_TRUE(context_.latch().latch(ExecutionMode::kKernel).is_ok());
  rrt_capacity_plan_t plan{};
  plan.retained_staging_bytes = std::uint64_t{2} * 1024;
  ASSERT_TRUE(context_.commit_capacity_plan(plan, 0).is_ok());
  const RegionStats held = context_.region_stats(GrowthPoint::kRetainedStaging);
  std::vector<rrt_tensor_arg_t> tensors = {
      {in_, 64, RRT_SPACE_HOST}, {inout_, 64, RRT_SPACE_HOST}, {out_, 64, RRT_SPACE_HOST}};
  BindRequest r = request(tensors);
  r.resident_image = this;  // never dereferenced: the refusal comes first
  const HostApi api(&ops_, &runner_, 0, 0, true);
  const MemoryCounters before = rig_.counters();
  BoundRun bound;
  const Status refused = bind_device_build(api, r, &bound);
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
