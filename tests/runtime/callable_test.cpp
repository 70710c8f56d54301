#include "runtime/callable.h"

#include <string>

#include <gtest/gtest.h>

#include "common/raw_enum.h"
#include "platform/sim/kernels/builtin_kernels.h"
#include "support/callable_builder.h"

namespace replayrt {
namespace {

using testing::CallableBuilder;
using testing::f32;
using testing::imm;
using testing::imm_f32;
using testing::inter;
using testing::param;
using testing::scalar;

class CallableTest : public ::testing::Test {
 protected:
  Status create(CallableBuilder &builder) {
    return testing::create_callable(builder.desc(), kernels_, &callable_);
  }

  void expect_invalid(CallableBuilder &builder, const std::string &fragment) {
    const Status status = create(builder);
    EXPECT_EQ(status.code(), RRT_ERR_INVALID_ARGUMENT) << status.message();
    EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
  }

  KernelRegistry kernels_{sim::builtin_launchers()};
  std::unique_ptr<const Callable> callable_;
};

// x -> scale -> t0 -> add(t0, x) -> out
CallableBuilder two_step_chain() {
  CallableBuilder b;
  b.param(f32({4, 8})).param(f32({4, 8}, RRT_DIR_OUT)).intermediate(f32({4, 8}));
  b.task(testing::kScale, {param(0), inter(0), imm_f32(2.0F)});
  b.task(testing::kAdd, {inter(0), param(0), param(1)});
  return b;
}

TEST_F(CallableTest, ChainHasOneEdgeAndLaysOutIntermediates) {
  CallableBuilder b = two_step_chain();
  ASSERT_TRUE(create(b).is_ok());
  const auto tasks = callable_->tasks();
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].num_predecessors, 0u);
  EXPECT_EQ(tasks[0].num_successors, 1u);
  EXPECT_EQ(tasks[1].num_predecessors, 1u);
  EXPECT_EQ(callable_->successors()[tasks[0].first_successor], 1u);
  EXPECT_EQ(tasks[0].num_tensors, 2u);
  EXPECT_EQ(tasks[0].num_scalars, 1u);
  EXPECT_EQ(callable_->params()[0].bytes, 128u);
  EXPECT_EQ(callable_->intermediate_offsets()[0], 0u);
  EXPECT_EQ(callable_->requirements().gm_heap, 128u);
  EXPECT_EQ(callable_->requirements().staged_all_host, 2048u);
  EXPECT_GT(callable_->requirements().image, 0u);
  EXPECT_GT(callable_->requirements().scheduler_state, 0u);
}

TEST_F(CallableTest, IndependentTasksFanOut) {
  CallableBuilder b;
  b.param(f32({16}));
  for (std::uint32_t i = 0; i < 8; ++i) {
    b.intermediate(f32({16}));
    b.task(testing::kScale, {param(0), inter(i), imm_f32(1.0F)});
  }
  ASSERT_TRUE(create(b).is_ok());
  for (const TaskPlan &task : callable_->tasks()) {
    EXPECT_EQ(task.num_predecessors, 0u);
  }
  EXPECT_TRUE(callable_->successors().empty());
  // Intermediates are aligned apart.
  EXPECT_EQ(callable_->intermediate_offsets()[1], Callable::kIntermediateAlignment);
}

TEST_F(CallableTest, WriterWaitsForEveryEarlierReader) {
  CallableBuilder b;
  b.param(f32({16})).intermediate(f32({16})).intermediate(f32({16})).intermediate(f32({16}));
  b.task(testing::kCopy, {param(0), inter(0)});       // 0 writes t0
  b.task(testing::kCopy, {inter(0), inter(1)});       // 1 reads t0
  b.task(testing::kCopy, {inter(0), inter(2)});       // 2 reads t0
  b.task(testing::kFill, {inter(0), imm_f32(0.0F)});  // 3 overwrites t0: after 1 and 2
  ASSERT_TRUE(create(b).is_ok());
  const TaskPlan &overwrite = callable_->tasks()[3];
  EXPECT_EQ(overwrite.num_predecessors, 3u);  // writer 0 and readers 1, 2
  EXPECT_EQ(callable_->tasks()[1].num_predecessors, 1u);
  EXPECT_EQ(callable_->tasks()[2].num_predecessors, 1u);
}

TEST_F(CallableTest, UserKernelsReadAndWriteEveryTensor) {
  std::int32_t id = -1;
  ASSERT_TRUE(kernels_
                  .add(KernelEntry{"mine", [](const rrt_kernel_args_t *, void *) { return 0; },
                                   nullptr, -1, -1, KernelEntry::kWritesEveryTensor},
                       &id)
                  .is_ok());
  CallableBuilder b;
  b.param(f32({4}, RRT_DIR_INOUT));
  b.task(id, {param(0)});
  b.task(id, {param(0)});
  ASSERT_TRUE(create(b).is_ok());
  EXPECT_EQ(callable_->tasks()[1].num_predecessors, 1u);
}

// A kernel registered with a descriptor: `tensors` tensor operands, `scalars` scalars, writing
// the tensors whose bit is set in `writes`.
std::int32_t add_declared(KernelRegistry &kernels, const char *name, int tensors, int scalars,
                          std::uint64_t writes) {
  KernelEntry entry;
  entry.name = name;
  entry.host_fn = [](const rrt_kernel_args_t *, void *) { return 0; };
  entry.num_tensors = tensors;
  entry.num_scalars = scalars;
  entry.writes = writes;
  std::int32_t id = -1;
  EXPECT_TRUE(kernels.add(std::move(entry), &id).is_ok());
  return id;
}

TEST_F(CallableTest, TasksThatOnlyReadATensorThroughADeclaredKernelAreNotOrdered) {
  const std::int32_t reduce = add_declared(kernels_, "reduce", 2, 0, 0b10);  // reads 0, writes 1
  CallableBuilder b;
  b.param(f32({4})).param(f32({4}, RRT_DIR_OUT)).param(f32({4}, RRT_DIR_OUT));
  b.intermediate(f32({4}));
  b.task(testing::kCopy, {param(0), inter(0)});  // 0 writes t0
  b.task(reduce, {inter(0), param(1)});          // 1 reads t0
  b.task(reduce, {inter(0), param(2)});          // 2 reads t0
  ASSERT_TRUE(create(b).is_ok());
  EXPECT_EQ(callable_->tasks()[1].num_predecessors, 1u);
  EXPECT_EQ(callable_->tasks()[2].num_predecessors, 1u);  // the writer only, not task 1
  EXPECT_EQ(callable_->tasks()[0].num_successors, 2u);
}

TEST_F(CallableTest, ADeclaredWriteOrdersEarlierReadersAndLaterOnes) {
  const std::int32_t update = add_declared(kernels_, "update", 2, 0, 0b01);  // writes 0, reads 1
  const std::int32_t reduce = add_declared(kernels_, "reduce", 2, 0, 0b10);  // reads 0, writes 1
  CallableBuilder b;
  b.param(f32({4}, RRT_DIR_INOUT)).param(f32({4})).param(f32({4}, RRT_DIR_OUT));
  b.param(f32({4}, RRT_DIR_OUT));
  b.task(reduce, {param(0), param(2)});  // 0 reads p0
  b.task(update, {param(0), param(1)});  // 1 writes p0: after reader 0
  b.task(reduce, {param(0), param(3)});  // 2 reads p0: after writer 1
  ASSERT_TRUE(create(b).is_ok());
  EXPECT_EQ(callable_->tasks()[0].num_predecessors, 0u);
  EXPECT_EQ(callable_->tasks()[1].num_predecessors, 1u);
  EXPECT_EQ(callable_->tasks()[2].num_predecessors, 1u);
  EXPECT_EQ(callable_->successors()[callable_->tasks()[1].first_successor], 2u);
}

TEST_F(CallableTest, ADeclaredWriteToAnInParamIsRefusedNamingTaskOperandAndParam) {
  const std::int32_t update = add_declared(kernels_, "update", 2, 0, 0b01);
  CallableBuilder b;
  b.param(f32({4}, RRT_DIR_INOUT)).param(f32({4}));
  b.task(update, {param(0), param(1)});
  b.task(update, {param(1), param(0)});
  expect_invalid(b, "task 1 operand 0: kernel 'update' writes IN param 1");
}

TEST_F(CallableTest, ADeclaringKernelWithTheWrongArityIsRefusedNamingTaskAndKernel) {
  const std::int32_t update = add_declared(kernels_, "update", 2, 1, 0b01);
  CallableBuilder b;
  b.param(f32({4}, RRT_DIR_INOUT)).param(f32({4}));
  b.task(update, {param(0), param(1), imm(3)});
  b.task(update, {param(0), imm(3)});
  expect_invalid(b,
                 "task 1: kernel 'update' takes 2 tensors and 1 scalars, the task gives 1 and 1");
}

TEST_F(CallableTest, ADeclaringKernelReadingAnUnwrittenIntermediateIsRefused) {
  const std::int32_t reduce = add_declared(kernels_, "reduce", 2, 0, 0b10);
  CallableBuilder b;
  b.param(f32({4}, RRT_DIR_OUT)).intermediate(f32({4}));
  b.task(reduce, {inter(0), param(0)});
  expect_invalid(b, "task 0 reads intermediate 0 before any task writes it");
}

TEST_F(CallableTest, TheRegistryRefusesDeclaredWritesBeyondTheTensorCount) {
  KernelEntry entry;
  entry.name = "wide";
  entry.host_fn = [](const rrt_kernel_args_t *, void *) { return 0; };
  entry.num_tensors = 2;
  entry.num_scalars = 0;
  entry.writes = 0b100;
  std::int32_t id = -1;
  const Status status = kernels_.add(entry, &id);
  EXPECT_EQ(status.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("only 2 tensor operands"), std::string::npos) << status.message();
  entry.num_tensors = RRT_KERNEL_MAX_TENSORS + 1;
  EXPECT_EQ(kernels_.add(entry, &id).code(), RRT_ERR_INVALID_ARGUMENT);
  entry.num_tensors = RRT_KERNEL_MAX_TENSORS;
  entry.writes = KernelEntry::kWritesEveryTensor;
  EXPECT_TRUE(kernels_.add(entry, &id).is_ok());
}

TEST_F(CallableTest, TheRegistryRefusesDeclaredCountsNoTaskCanTake) {
  KernelEntry entry;
  entry.name = "many_scalars";
  entry.host_fn = [](const rrt_kernel_args_t *, void *) { return 0; };
  entry.num_tensors = static_cast<int>(Callable::kMaxTensorOperandsPerTask);
  entry.num_scalars = static_cast<int>(Callable::kMaxScalarOperandsPerTask) + 1;
  entry.writes = KernelEntry::kWritesEveryTensor;
  std::int32_t id = -1;
  const Status status = kernels_.add(entry, &id);
  EXPECT_EQ(status.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("declares 64 tensors and 65 scalars"), std::string::npos)
      << status.message();
  entry.num_scalars = static_cast<int>(Callable::kMaxScalarOperandsPerTask);
  EXPECT_TRUE(kernels_.add(entry, &id).is_ok());
}

TEST_F(CallableTest, ContentKeyFollowsContent) {
  CallableBuilder a = two_step_chain();
  CallableBuilder b = two_step_chain();
  std::unique_ptr<const Callable> first;
  std::unique_ptr<const Callable> second;
  ASSERT_TRUE(testing::create_callable(a.desc(), kernels_, &first).is_ok());
  ASSERT_TRUE(testing::create_callable(b.desc(), kernels_, &second).is_ok());
  EXPECT_EQ(first->content_key(), second->content_key());
  CallableBuilder c;
  c.param(f32({4, 9})).param(f32({4, 9}, RRT_DIR_OUT)).intermediate(f32({4, 9}));
  c.task(testing::kScale, {param(0), inter(0), imm_f32(2.0F)});
  c.task(testing::kAdd, {inter(0), param(0), param(1)});
  std::unique_ptr<const Callable> third;
  ASSERT_TRUE(testing::create_callable(c.desc(), kernels_, &third).is_ok());
  EXPECT_NE(first->content_key(), third->content_key());
}

TEST_F(CallableTest, RejectsUnknownKernels) {
  CallableBuilder b;
  b.param(f32({4})).param(f32({4}, RRT_DIR_OUT));
  b.task(999, {param(0), param(1)});
  expect_invalid(b, "kernel id 999");
}

TEST_F(CallableTest, SizingAcceptsUnregisteredKernelsAsUserKernels) {
  CallableBuilder b;
  b.param(f32({4}, RRT_DIR_INOUT));
  b.task(57, {param(0)});
  std::unique_ptr<const Callable> sized;
  EXPECT_TRUE(
      testing::create_callable(b.desc(), kernels_, &sized, Callable::UnknownKernels::kAsUserKernels)
          .is_ok());
  CallableBuilder negative;
  negative.param(f32({4}, RRT_DIR_INOUT));
  negative.task(-1, {param(0)});
  EXPECT_EQ(testing::create_callable(negative.desc(), kernels_, &sized,
                                     Callable::UnknownKernels::kAsUserKernels)
                .code(),
            RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(CallableTest, RejectsOutOfRangeReferences) {
  CallableBuilder params;
  params.param(f32({4})).param(f32({4}, RRT_DIR_OUT));
  params.task(testing::kCopy, {param(0), param(5)});
  expect_invalid(params, "param 5 out of range");

  CallableBuilder inters;
  inters.param(f32({4}));
  inters.task(testing::kCopy, {param(0), inter(0)});
  expect_invalid(inters, "intermediate 0 out of range");

  CallableBuilder scalars;
  scalars.param(f32({4})).param(f32({4}, RRT_DIR_OUT));
  scalars.task(testing::kScale, {param(0), param(1), scalar(0)});
  expect_invalid(scalars, "scalar 0 out of range");
}

TEST_F(CallableTest, RejectsWrongArityForBuiltins) {
  CallableBuilder b;
  b.param(f32({4})).param(f32({4}, RRT_DIR_OUT));
  b.task(testing::kAdd, {param(0), param(1)});
  expect_invalid(b, "kernel 'add' takes 3 tensors and 0 scalars");
}

TEST_F(CallableTest, RejectsScalarsBeforeTensors) {
  CallableBuilder b;
  b.param(f32({4})).param(f32({4}, RRT_DIR_OUT));
  b.task(testing::kScale, {param(0), imm(1), param(1)});
  expect_invalid(b, "tensor operands must come before scalars");
}

TEST_F(CallableTest, RejectsOverflowingAndDegenerateShapes) {
  CallableBuilder overflow;
  rrt_tensor_desc_t huge = f32({1u << 20, 1u << 20, 1u << 20});
  overflow.param(huge).param(f32({4}, RRT_DIR_OUT));
  overflow.task(testing::kCopy, {param(0), param(1)});
  expect_invalid(overflow, "size overflows");

  CallableBuilder zero;
  zero.param(f32({4, 0})).param(f32({4}, RRT_DIR_OUT));
  zero.task(testing::kCopy, {param(0), param(1)});
  expect_invalid(zero, "dimension 1 is zero");

  CallableBuilder dtype;
  rrt_tensor_desc_t bad = f32({4});
  store_raw_enum(&bad.dtype, 42);
  dtype.param(bad).param(f32({4}, RRT_DIR_OUT));
  dtype.task(testing::kCopy, {param(0), param(1)});
  expect_invalid(dtype, "unknown dtype");

  CallableBuilder dims;
  rrt_tensor_desc_t many = f32({4});
  many.ndim = RRT_MAX_DIMS + 1;
  dims.param(many).param(f32({4}, RRT_DIR_OUT));
  dims.task(testing::kCopy, {param(0), param(1)});
  expect_invalid(dims, "dimensions");
}

TEST_F(CallableTest, RejectsBadDataFlow) {
  CallableBuilder read_before_write;
  read_before_write.param(f32({4}, RRT_DIR_OUT)).intermediate(f32({4}));
  read_before_write.task(testing::kCopy, {inter(0), param(0)});
  expect_invalid(read_before_write, "reads intermediate 0 before any task writes it");

  CallableBuilder read_output;
  read_output.param(f32({4}, RRT_DIR_OUT)).param(f32({4}, RRT_DIR_OUT));
  read_output.task(testing::kCopy, {param(0), param(1)});
  expect_invalid(read_output, "reads OUT param 0");

  CallableBuilder write_input;
  write_input.param(f32({4})).param(f32({4}));
  write_input.task(testing::kCopy, {param(0), param(1)});
  expect_invalid(write_input, "writes IN param 1");
}

TEST_F(CallableTest, RejectsStructuralProblems) {
  CallableBuilder no_tasks;
  no_tasks.param(f32({4}));
  expect_invalid(no_tasks, "0 tasks");

  CallableBuilder bind;
  bind.param(f32({4}, RRT_DIR_INOUT)).task(testing::kFill, {param(0), imm(0)});
  rrt_callable_desc_t bad_bind = bind.desc();
  store_raw_enum(&bad_bind.bind, 7);
  EXPECT_EQ(testing::create_callable(bad_bind, kernels_, &callable_).code(),
            RRT_ERR_INVALID_ARGUMENT);

  CallableBuilder kind;
  kind.param(f32({4}, RRT_DIR_INOUT));
  rrt_operand_t odd_kind{RRT_OPERAND_IMMEDIATE, 0};
  store_raw_enum(&odd_kind.kind, 9);
  kind.task(testing::kFill, {param(0), odd_kind});
  expect_invalid(kind, "unknown operand kind");

  CallableBuilder direction;
  rrt_tensor_desc_t odd = f32({4});
  store_raw_enum(&odd.direction, 5);
  direction.param(odd).task(testing::kFill, {param(0), imm(0)});
  expect_invalid(direction, "unknown direction");

  CallableBuilder nulls;
  nulls.param(f32({4}, RRT_DIR_INOUT)).task(testing::kFill, {param(0), imm(0)});
  rrt_callable_desc_t desc = nulls.desc();
  desc.params = nullptr;
  EXPECT_EQ(testing::create_callable(desc, kernels_, &callable_).code(), RRT_ERR_INVALID_ARGUMENT);
}

TEST(DtypeTest, ElementSizes) {
  EXPECT_EQ(dtype_bytes(RRT_DTYPE_F32), 4u);
  EXPECT_EQ(dtype_bytes(RRT_DTYPE_F16), 2u);
  EXPECT_EQ(dtype_bytes(RRT_DTYPE_BF16), 2u);
  EXPECT_EQ(dtype_bytes(RRT_DTYPE_I32), 4u);
  EXPECT_EQ(dtype_bytes(RRT_DTYPE_I64), 8u);
  EXPECT_EQ(dtype_bytes(RRT_DTYPE_U8), 1u);
  EXPECT_EQ(dtype_bytes(99), 0u);
}

}  // namespace
}  // namespace replayrt
