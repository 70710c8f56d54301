// Views and device values in a callable: dependencies through a view's base and a device
// value's source, data-flow checks, and their records in the task-graph image.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "platform/launch/task_graph_image.h"
#include "platform/sim/kernels/builtin_kernels.h"
#include "runtime/bind.h"
#include "runtime/callable.h"
#include "runtime/task_graph_builder.h"
#include "support/callable_builder.h"

namespace replayrt {
namespace {

using testing::CallableBuilder;
using testing::f32;
using testing::imm;
using testing::inter;
using testing::param;

rrt_operand_t view_op(std::uint32_t index) {
  return {RRT_OPERAND_VIEW, index};
}
rrt_operand_t value_op(std::uint32_t index) {
  return {RRT_OPERAND_DEVICE_VALUE, index};
}

rrt_view_desc_t half_view(rrt_operand_kind_t kind, std::uint32_t base, std::uint64_t offset) {
  rrt_view_desc_t view{};
  view.base_kind = kind;
  view.base_index = base;
  view.ndim = 1;
  view.shape[0] = 4;
  view.offset = offset;
  view.offset_value = -1;
  return view;
}

class CallableViewsTest : public ::testing::Test {
 protected:
  Status create(CallableBuilder &builder) {
    desc_ = builder.desc();
    desc_.num_views = static_cast<std::uint32_t>(views_.size());
    desc_.views = views_.data();
    desc_.num_device_values = static_cast<std::uint32_t>(values_.size());
    desc_.device_values = values_.data();
    return testing::create_callable(desc_, kernels_, &callable_);
  }

  std::vector<std::uint32_t> successors_of(std::uint32_t task) const {
    const TaskPlan &plan = callable_->tasks()[task];
    const auto all = callable_->successors();
    return {all.begin() + plan.first_successor,
            all.begin() + plan.first_successor + plan.num_successors};
  }

  KernelRegistry kernels_{sim::builtin_launchers()};
  rrt_callable_desc_t desc_{};
  std::vector<rrt_view_desc_t> views_;
  std::vector<rrt_device_value_desc_t> values_;
  std::unique_ptr<const Callable> callable_;
};

TEST_F(CallableViewsTest, AViewTouchesItsWholeBase) {
  CallableBuilder b;
  b.param(f32({8}, RRT_DIR_OUT)).intermediate(f32({8}));
  views_ = {half_view(RRT_OPERAND_INTERMEDIATE, 0, 0), half_view(RRT_OPERAND_INTERMEDIATE, 0, 4)};
  b.task(testing::kFill, {view_op(0), imm(0)});
  b.task(testing::kFill, {view_op(1), imm(0)});
  b.task(testing::kCopy, {inter(0), param(0)});
  const Status status = create(b);
  ASSERT_TRUE(status.is_ok()) << status.message();
  EXPECT_EQ(successors_of(0), std::vector<std::uint32_t>({1}));
  EXPECT_EQ(successors_of(1), std::vector<std::uint32_t>({2}));
  EXPECT_EQ(callable_->tasks()[2].num_predecessors, 1u);
}

TEST_F(CallableViewsTest, AWriteThroughAViewOfAnInParamIsRefused) {
  CallableBuilder b;
  b.param(f32({8}));
  views_ = {half_view(RRT_OPERAND_PARAM, 0, 4)};
  b.task(testing::kFill, {view_op(0), imm(0)});
  const Status status = create(b);
  EXPECT_EQ(status.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("writes IN param 0"), std::string::npos) << status.message();
}

// t0 writes the factor into an intermediate; t1 scales by it (a device value); t2 overwrites
// the factor and so waits for t1's read.
TEST_F(CallableViewsTest, ADeviceValueReadWaitsForTheWriterOfItsSource) {
  CallableBuilder b;
  b.param(f32({2})).param(f32({8})).param(f32({8}, RRT_DIR_OUT)).intermediate(f32({2}));
  values_ = {rrt_device_value_desc_t{RRT_OPERAND_INTERMEDIATE, 0, 1}};
  b.task(testing::kCopy, {param(0), inter(0)});
  b.task(testing::kScale, {param(1), param(2), value_op(0)});
  b.task(testing::kFill, {inter(0), imm(0)});
  const Status status = create(b);
  ASSERT_TRUE(status.is_ok()) << status.message();
  EXPECT_EQ(successors_of(0), std::vector<std::uint32_t>({1, 2}));
  EXPECT_EQ(successors_of(1), std::vector<std::uint32_t>({2}));
  EXPECT_EQ(callable_->tasks()[1].num_scalars, 1u);
}

TEST_F(CallableViewsTest, ADeviceValueOfAnUnwrittenIntermediateIsRefused) {
  CallableBuilder b;
  b.param(f32({8})).param(f32({8}, RRT_DIR_OUT)).intermediate(f32({2}));
  values_ = {rrt_device_value_desc_t{RRT_OPERAND_INTERMEDIATE, 0, 0}};
  b.task(testing::kScale, {param(0), param(1), value_op(0)});
  const Status status = create(b);
  EXPECT_EQ(status.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("task 0 reads device value 0 from intermediate 0"),
            std::string::npos)
      << status.message();
}

TEST_F(CallableViewsTest, TheImageCarriesViewAndDeviceValueRecords) {
  CallableBuilder b;
  rrt_tensor_desc_t pos = f32({1});
  pos.dtype = RRT_DTYPE_I64;
  b.param(pos).param(f32({4})).intermediate(f32({6, 4}));
  values_ = {rrt_device_value_desc_t{RRT_OPERAND_PARAM, 0, 0}};
  rrt_view_desc_t row = half_view(RRT_OPERAND_INTERMEDIATE, 0, 4);
  row.offset_value = 0;
  row.offset_stride = 4;
  row.offset_value_max = 4;
  views_ = {row};
  b.task(testing::kCopy, {param(1), view_op(0)});
  const Status status = create(b);
  ASSERT_TRUE(status.is_ok()) << status.message();
  const CallableRequirements &needs = callable_->requirements();
  EXPECT_EQ(needs.image, task_graph_image_bytes(1, 2, 0, 1, 1));
  EXPECT_EQ(needs.staged_all_host, staging_slice_bytes(8) + staging_slice_bytes(16));

  std::vector<std::byte> image(needs.image);
  alignas(256) static std::byte heap[256];
  ASSERT_TRUE(build_task_graph_image(*callable_, ImageBinding{1, 2, heap, nullptr, nullptr}, image)
                  .is_ok());
  TaskGraphHeader header;
  std::memcpy(&header, image.data(), sizeof header);
  EXPECT_EQ(header.version, kTaskGraphVersion);
  ASSERT_EQ(header.num_views, 1u);
  ASSERT_EQ(header.num_device_values, 1u);
  EXPECT_TRUE(task_graph_layout_matches(header));
  ViewRecord view;
  std::memcpy(&view, image.data() + header.views_offset, sizeof view);
  EXPECT_EQ(view.source, static_cast<std::uint32_t>(ImageTensorSource::kBaked));
  EXPECT_EQ(view.address, reinterpret_cast<std::uint64_t>(heap));
  EXPECT_EQ(view.base_bytes, 96u);
  EXPECT_EQ(view.byte_offset, 16u);
  EXPECT_EQ(view.bytes, 16u);
  EXPECT_EQ(view.offset_value, 0);
  EXPECT_EQ(view.offset_stride_bytes, 16u);
  EXPECT_EQ(view.offset_value_max, 4u);
  DeviceValueRecord value;
  std::memcpy(&value, image.data() + header.device_values_offset, sizeof value);
  EXPECT_EQ(value.source, static_cast<std::uint32_t>(ImageTensorSource::kParam));
  EXPECT_EQ(value.index, 0u);
  EXPECT_EQ(value.dtype, static_cast<std::uint32_t>(RRT_DTYPE_I64));
  OperandRecord operand;
  std::memcpy(&operand, image.data() + header.operands_offset + sizeof operand, sizeof operand);
  EXPECT_EQ(operand.kind, static_cast<std::uint32_t>(ImageOperandKind::kView));
  EXPECT_EQ(operand.index, 0u);
}

}  // namespace
}  // namespace replayrt
