// Decoding rrt_callable_desc_t into CallableSpec: versions, enum fields and counts are checked
// here, once, and what decodes is what the caller described.
#include "capi/callable_spec_codec.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "common/raw_enum.h"
#include "runtime/callable.h"
#include "support/callable_builder.h"

namespace replayrt::capi {
namespace {

using testing::CallableBuilder;
using testing::f32;
using testing::imm;
using testing::inter;
using testing::param;

constexpr std::uint32_t kAbi11Size = offsetof(rrt_callable_desc_t, num_views);

// A callable with a HOST param, a DEVICE param, an intermediate, a view and a device value.
CallableBuilder every_field() {
  CallableBuilder b(RRT_BIND_HOST_BUILD);
  rrt_tensor_desc_t host = f32({4});
  host.space = RRT_PARAM_SPACE_HOST;
  rrt_tensor_desc_t device = f32({2, 4}, RRT_DIR_OUT);
  device.space = RRT_PARAM_SPACE_DEVICE;
  b.param(host).param(device).intermediate(f32({4})).scalars(1);
  b.view(RRT_OPERAND_PARAM, 1, {4}, 4, 0, 1, 3);
  b.device_value(RRT_OPERAND_INTERMEDIATE, 0, 2);
  b.task(testing::kCopy, {param(0), inter(0)});
  b.task(testing::kCopy, {inter(0), testing::view(0)});
  b.task(testing::kFill, {param(1), testing::device_value(0)});
  return b;
}

void expect_refused(const rrt_callable_desc_t &desc, const std::string &fragment) {
  CallableSpec spec;
  const Status status = decode_callable_desc(&desc, &spec);
  EXPECT_EQ(status.code(), RRT_ERR_INVALID_ARGUMENT) << fragment;
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
}

TEST(CallableSpecCodecTest, ADescDecodesIntoTheSpecItDescribes) {
  CallableBuilder b = every_field();
  CallableSpec spec;
  ASSERT_TRUE(decode_callable_desc(&b.desc(), &spec).is_ok());
  EXPECT_EQ(spec.bind, RRT_BIND_HOST_BUILD);
  EXPECT_EQ(spec.num_scalars, 1u);
  ASSERT_EQ(spec.params.size(), 2u);
  EXPECT_EQ(spec.params[0].space, RRT_PARAM_SPACE_HOST);
  EXPECT_EQ(spec.params[1].space, RRT_PARAM_SPACE_DEVICE);
  EXPECT_EQ(spec.params[1].direction, RRT_DIR_OUT);
  EXPECT_EQ(spec.params[1].ndim, 2u);
  EXPECT_EQ(spec.params[1].shape[0], 2u);
  EXPECT_EQ(spec.params[1].shape[1], 4u);
  ASSERT_EQ(spec.intermediates.size(), 1u);
  EXPECT_EQ(spec.intermediates[0].direction, RRT_DIR_INOUT);
  ASSERT_EQ(spec.views.size(), 1u);
  EXPECT_EQ(spec.views[0].base.kind, RRT_OPERAND_PARAM);
  EXPECT_EQ(spec.views[0].base.index, 1u);
  EXPECT_EQ(spec.views[0].offset, 4u);
  EXPECT_EQ(spec.views[0].offset_value, 0);
  EXPECT_EQ(spec.views[0].offset_stride, 1u);
  EXPECT_EQ(spec.views[0].offset_value_max, 3u);
  ASSERT_EQ(spec.device_values.size(), 1u);
  EXPECT_EQ(spec.device_values[0].source.kind, RRT_OPERAND_INTERMEDIATE);
  EXPECT_EQ(spec.device_values[0].element, 2u);
  ASSERT_EQ(spec.tasks.size(), 3u);
  EXPECT_EQ(spec.tasks[2].kernel_id, testing::kFill);
  ASSERT_EQ(spec.tasks[2].operands.size(), 2u);
  EXPECT_EQ(spec.tasks[2].operands[1].kind, RRT_OPERAND_DEVICE_VALUE);
}

TEST(CallableSpecCodecTest, AnAbi11DescIsReadWithoutTheAppendedFieldsOrSpaces) {
  CallableBuilder b;
  rrt_tensor_desc_t spaced = f32({4}, RRT_DIR_INOUT);
  store_raw_enum(&spaced.space, 77);  // padding in a 1.1 tensor desc
  b.param(spaced).task(testing::kFill, {param(0), imm(0)});
  rrt_callable_desc_t desc = b.desc();
  desc.struct_size = kAbi11Size;
  desc.num_views = 5;  // past the end of a 1.1 caller's struct
  CallableSpec spec;
  ASSERT_TRUE(decode_callable_desc(&desc, &spec).is_ok());
  EXPECT_EQ(spec.params[0].space, RRT_PARAM_SPACE_ANY);
  EXPECT_TRUE(spec.views.empty());
  EXPECT_TRUE(spec.device_values.empty());
}

TEST(CallableSpecCodecTest, AnAbi11DescKnowsNoViewOrDeviceValueOperands) {
  CallableBuilder b;
  b.param(f32({4}, RRT_DIR_INOUT)).task(testing::kFill, {param(0), testing::device_value(0)});
  rrt_callable_desc_t desc = b.desc();
  desc.struct_size = kAbi11Size;
  expect_refused(desc, "task 0 operand 1: unknown operand kind");
}

TEST(CallableSpecCodecTest, EveryEnumFieldIsCheckedAsTheIntegerTheCallerStored) {
  {
    CallableBuilder b = every_field();
    rrt_callable_desc_t desc = b.desc();
    store_raw_enum(&desc.bind, 2);
    expect_refused(desc, "unknown bind strategy 2");
  }
  const auto with_param = [](auto edit, const std::string &fragment) {
    CallableBuilder b;
    rrt_tensor_desc_t tensor = f32({4}, RRT_DIR_INOUT);
    edit(&tensor);
    b.param(tensor).task(testing::kFill, {param(0), imm(0)});
    expect_refused(b.desc(), fragment);
  };
  with_param([](rrt_tensor_desc_t *t) { store_raw_enum(&t->dtype, 6); },
             "param 0: unknown dtype 6");
  with_param([](rrt_tensor_desc_t *t) { store_raw_enum(&t->direction, -1); },
             "param 0: unknown direction -1");
  with_param([](rrt_tensor_desc_t *t) { store_raw_enum(&t->space, 3); },
             "param 0: unknown space 3");
  with_param([](rrt_tensor_desc_t *t) { t->ndim = RRT_MAX_DIMS + 1; }, "param 0: 9 dimensions");
  {
    CallableBuilder b = every_field();
    b.view(RRT_OPERAND_PARAM, 0, {4}, 0);
    rrt_callable_desc_t desc = b.desc();
    rrt_view_desc_t views[2] = {desc.views[0], desc.views[1]};
    store_raw_enum(&views[1].base_kind, RRT_OPERAND_SCALAR);
    desc.views = views;
    expect_refused(desc, "view 1: base_kind 2 is neither");
  }
  {
    CallableBuilder b = every_field();
    rrt_callable_desc_t desc = b.desc();
    rrt_device_value_desc_t value = desc.device_values[0];
    store_raw_enum(&value.source_kind, RRT_OPERAND_VIEW);
    desc.device_values = &value;
    expect_refused(desc, "device value 0: source_kind 4 is neither");
  }
}

TEST(CallableSpecCodecTest, CountsPastTheLimitsAreRefusedWithoutReadingTheArrays) {
  CallableBuilder b = every_field();
  rrt_callable_desc_t desc = b.desc();
  // Arrays this long would be read past their ends; only the counts may be looked at.
  rrt_callable_desc_t params = desc;
  params.num_params = Callable::kMaxParams + 1;
  expect_refused(params, "callable has 1025 params");
  rrt_callable_desc_t tasks = desc;
  tasks.num_tasks = Callable::kMaxTasks + 1;
  expect_refused(tasks, "tasks (1 to 65536)");
  rrt_callable_desc_t views = desc;
  views.num_views = Callable::kMaxViews + 1;
  expect_refused(views, "views (at most 65536)");
  rrt_callable_desc_t values = desc;
  values.num_device_values = Callable::kMaxDeviceValues + 1;
  expect_refused(values, "device values (at most 65536)");
  rrt_task_desc_t wide = desc.tasks[0];
  wide.num_operands = Callable::kMaxOperandsPerTask + 1;
  rrt_callable_desc_t operands = desc;
  operands.tasks = &wide;
  operands.num_tasks = 1;
  expect_refused(operands, "task 0: 129 operands");
}

TEST(CallableSpecCodecTest, NullArraysWithCountsAreRefused) {
  CallableBuilder b = every_field();
  rrt_callable_desc_t views = b.desc();
  views.views = nullptr;
  expect_refused(views, "views is null with num_views 1");
  rrt_callable_desc_t values = b.desc();
  values.device_values = nullptr;
  expect_refused(values, "device_values is null with num_device_values 1");
  rrt_callable_desc_t params = b.desc();
  params.params = nullptr;
  expect_refused(params, "null array with a nonzero count");
  rrt_task_desc_t task = b.desc().tasks[0];
  task.operands = nullptr;
  rrt_callable_desc_t operands = b.desc();
  operands.tasks = &task;
  operands.num_tasks = 1;
  expect_refused(operands, "task 0: null operand array");
  CallableSpec spec;
  EXPECT_EQ(decode_callable_desc(nullptr, &spec).code(), RRT_ERR_INVALID_ARGUMENT);
  rrt_callable_desc_t small = b.desc();
  small.struct_size = kAbi11Size - 1;
  expect_refused(small, "struct_size");
}

}  // namespace
}  // namespace replayrt::capi
