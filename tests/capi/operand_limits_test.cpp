// A task's operand limits through the public shared library: a task takes at most
// RRT_KERNEL_MAX_TENSORS tensor operands and RRT_KERNEL_MAX_SCALARS scalar operands. A task at both
// limits prepares and runs with every operand in place, one past either limit is refused at
// prepare, and a kernel descriptor that declares more than a task can take is refused when it
// is registered.
#include <cstdint>
#include <string>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"
#include "test_platform.h"

namespace {

using replayrt::testing::last_message;
using replayrt::testing::register_host_kernel;
using replayrt::testing::test_platform;
using replayrt::testing::testing_on_cuda;

// The most scalar operands one task takes (rrt_kernel_register_desc's num_scalars limit).
constexpr std::uint32_t kMaxScalarOperands = RRT_KERNEL_MAX_SCALARS;
constexpr std::uint32_t kMaxTensorOperands = RRT_KERNEL_MAX_TENSORS;
constexpr std::uint64_t kOperandLimitsElements = 4;
constexpr std::uint64_t kOperandLimitsTensorBytes = kOperandLimitsElements * sizeof(float);

// What checking_kernel expects: the tensor addresses and the scalar values, in operand order.
struct ExpectedOperands {
  std::vector<void *> tensors;
  std::vector<std::uint64_t> scalars;
};

// Compares every operand with the ExpectedOperands `user` points to and returns 1 for wrong
// counts, 2 + i for a wrong tensor operand i, 1000 + i for a wrong scalar operand i; otherwise
// writes i + 1 into element 0 of tensor operand i and returns 0.
int checking_kernel(const rrt_kernel_args_t *args, void *user) {
  const auto &expected = *static_cast<const ExpectedOperands *>(user);
  if (args->num_tensors != expected.tensors.size() ||
      args->num_scalars != expected.scalars.size()) {
    return 1;
  }
  for (std::uint32_t i = 0; i < args->num_tensors; ++i) {
    if (args->tensors[i] != expected.tensors[i] ||
        args->tensor_bytes[i] != kOperandLimitsTensorBytes) {
      return 2 + static_cast<int>(i);
    }
  }
  for (std::uint32_t i = 0; i < args->num_scalars; ++i) {
    if (args->scalars[i] != expected.scalars[i]) {
      return 1000 + static_cast<int>(i);
    }
  }
  for (std::uint32_t i = 0; i < args->num_tensors; ++i) {
    static_cast<float *>(args->tensors[i])[0] = static_cast<float>(i + 1);
  }
  return 0;
}

rrt_tensor_desc_t operand_limits_f32_vector() {
  rrt_tensor_desc_t tensor{};
  tensor.dtype = RRT_DTYPE_F32;
  tensor.ndim = 1;
  tensor.shape[0] = kOperandLimitsElements;
  tensor.direction = RRT_DIR_INOUT;
  return tensor;
}

// One task of `kernel` over `tensors` PARAM operands (param i as tensor operand i) and then
// `scalars` SCALAR operands (scalar i as scalar operand i).
struct OneTaskCallable {
  OneTaskCallable(std::int32_t kernel, std::uint32_t tensors, std::uint32_t scalars)
      : params(tensors, operand_limits_f32_vector()) {
    for (std::uint32_t i = 0; i < tensors; ++i) {
      operands.push_back({RRT_OPERAND_PARAM, i});
    }
    for (std::uint32_t i = 0; i < scalars; ++i) {
      operands.push_back({RRT_OPERAND_SCALAR, i});
    }
    task = {kernel, static_cast<std::uint32_t>(operands.size()), operands.data()};
    desc.struct_size = sizeof desc;
    desc.bind = RRT_BIND_DEVICE_BUILD;
    desc.num_params = tensors;
    desc.params = params.data();
    desc.num_scalars = scalars;
    desc.num_tasks = 1;
    desc.tasks = &task;
  }
  OneTaskCallable(const OneTaskCallable &) = delete;
  OneTaskCallable &operator=(const OneTaskCallable &) = delete;

  std::vector<rrt_tensor_desc_t> params;
  std::vector<rrt_operand_t> operands;
  rrt_task_desc_t task{};
  rrt_callable_desc_t desc{};
};

class OperandLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = test_platform();
    ASSERT_EQ(rrt_context_create(&options, &ctx_), RRT_OK) << last_message();
  }

  void TearDown() override {
    if (ctx_ != nullptr) {
      EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK) << last_message();
    }
  }

  // Prepares a callable of one `kernel` task at both operand limits, runs it on
  // kMaxTensorOperands zeroed device buffers and kMaxScalarOperands distinct scalars, and
  // checks that the kernel saw each operand in place (checking_kernel, with `expected_`) and
  // wrote every tensor.
  void run_at_the_limits(std::int32_t kernel) {
    ASSERT_EQ(rrt_program_init(ctx_), RRT_OK) << last_message();
    const OneTaskCallable callable(kernel, kMaxTensorOperands, kMaxScalarOperands);
    std::int32_t callable_id = -1;
    ASSERT_EQ(rrt_callable_prepare(ctx_, &callable.desc, &callable_id), RRT_OK) << last_message();
    std::vector<rrt_tensor_arg_t> tensors;
    const std::vector<float> zeros(kOperandLimitsElements, 0.0F);
    for (std::uint32_t i = 0; i < kMaxTensorOperands; ++i) {
      void *buffer = nullptr;
      ASSERT_EQ(rrt_device_alloc(ctx_, kOperandLimitsTensorBytes, &buffer), RRT_OK)
          << last_message();
      ASSERT_EQ(rrt_memcpy_h2d(ctx_, buffer, zeros.data(), kOperandLimitsTensorBytes, nullptr),
                RRT_OK);
      expected_.tensors.push_back(buffer);
      tensors.push_back({buffer, kOperandLimitsTensorBytes, RRT_SPACE_DEVICE});
    }
    for (std::uint32_t i = 0; i < kMaxScalarOperands; ++i) {
      expected_.scalars.push_back(0x5ca1a0000ULL + 7ULL * i);
    }
    rrt_run_args_t args = replayrt::testing::run_args(tensors);
    args.num_scalars = kMaxScalarOperands;
    args.scalars = expected_.scalars.data();
    ASSERT_EQ(rrt_run(ctx_, callable_id, &args), RRT_OK) << last_message();
    for (std::uint32_t i = 0; i < kMaxTensorOperands; ++i) {
      float written[kOperandLimitsElements] = {};
      ASSERT_EQ(
          rrt_memcpy_d2h(ctx_, written, expected_.tensors[i], kOperandLimitsTensorBytes, nullptr),
          RRT_OK);
      EXPECT_EQ(written[0], static_cast<float>(i + 1)) << "tensor operand " << i;
    }
  }

  rrt_context_t ctx_ = nullptr;
  ExpectedOperands expected_;
};

TEST_F(OperandLimitsTest, AUserKernelTaskAtBothLimitsRunsWithEveryOperandInPlace) {
  std::int32_t kernel = -1;
  ASSERT_EQ(register_host_kernel(ctx_, "check_operands", checking_kernel, &expected_, &kernel),
            RRT_OK)
      << last_message();
  run_at_the_limits(kernel);
}

TEST_F(OperandLimitsTest, AKernelDeclaringBothLimitsRegistersAndItsTaskRuns) {
  if (testing_on_cuda()) {
    GTEST_SKIP() << "a declared host-function kernel is a simulator kernel";
  }
  rrt_kernel_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.name = "check_operands";
  desc.fn = checking_kernel;
  desc.user = &expected_;
  desc.num_tensors = kMaxTensorOperands;
  desc.num_scalars = kMaxScalarOperands;
  desc.writes = ~std::uint64_t{0};
  std::int32_t kernel = -1;
  ASSERT_EQ(rrt_kernel_register_desc(ctx_, &desc, &kernel), RRT_OK) << last_message();
  run_at_the_limits(kernel);
}

TEST_F(OperandLimitsTest, ATaskPastEitherLimitIsRefusedAtPrepareAndByThePlan) {
  std::int32_t kernel = -1;
  ASSERT_EQ(register_host_kernel(ctx_, "check_operands", checking_kernel, &expected_, &kernel),
            RRT_OK)
      << last_message();
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK) << last_message();
  struct Case {
    std::uint32_t tensors;
    std::uint32_t scalars;
    std::string detail;
  };
  const Case cases[] = {
      {kMaxTensorOperands + 1, 0,
       "task 0: " + std::to_string(kMaxTensorOperands + 1) + " tensor operands (at most " +
           std::to_string(kMaxTensorOperands) + ")"},
      {0, kMaxScalarOperands + 1,
       "task 0: " + std::to_string(kMaxScalarOperands + 1) + " scalar operands (at most " +
           std::to_string(kMaxScalarOperands) + ")"},
      {kMaxTensorOperands + 1, kMaxScalarOperands - 1,
       "task 0: " + std::to_string(kMaxTensorOperands + 1) + " tensor operands (at most " +
           std::to_string(kMaxTensorOperands) + ")"},
  };
  for (const Case &refused : cases) {
    SCOPED_TRACE(refused.detail);
    const OneTaskCallable callable(kernel, refused.tensors, refused.scalars);
    std::int32_t callable_id = -1;
    EXPECT_EQ(rrt_callable_prepare(ctx_, &callable.desc, &callable_id), RRT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_message().find(refused.detail), std::string::npos) << last_message();
    EXPECT_EQ(callable_id, -1);
    rrt_capacity_plan_t plan{};
    EXPECT_EQ(rrt_capacity_plan_fit(&callable.desc, &plan), RRT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_message().find(refused.detail), std::string::npos) << last_message();
  }
}

TEST_F(OperandLimitsTest, AKernelDescDeclaringMoreThanATaskTakesIsRefusedAtRegistration) {
  if (testing_on_cuda()) {
    GTEST_SKIP() << "a declared host-function kernel is a simulator kernel";
  }
  rrt_kernel_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.name = "too_many";
  desc.fn = checking_kernel;
  desc.user = &expected_;
  desc.num_tensors = kMaxTensorOperands;
  desc.num_scalars = kMaxScalarOperands + 1;
  std::int32_t kernel = -1;
  EXPECT_EQ(rrt_kernel_register_desc(ctx_, &desc, &kernel), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("kernel 'too_many': num_scalars is " +
                                std::to_string(kMaxScalarOperands + 1) + " (at most " +
                                std::to_string(kMaxScalarOperands) + ")"),
            std::string::npos)
      << last_message();
  desc.num_scalars = 1024;
  EXPECT_EQ(rrt_kernel_register_desc(ctx_, &desc, &kernel), RRT_ERR_INVALID_ARGUMENT);
  desc.num_scalars = kMaxScalarOperands;
  desc.num_tensors = kMaxTensorOperands + 1;
  EXPECT_EQ(rrt_kernel_register_desc(ctx_, &desc, &kernel), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("kernel 'too_many': num_tensors is " +
                                std::to_string(kMaxTensorOperands + 1) + " (at most " +
                                std::to_string(kMaxTensorOperands) + ")"),
            std::string::npos)
      << last_message();
  EXPECT_EQ(kernel, -1);
  std::int32_t found = -1;
  EXPECT_EQ(rrt_kernel_lookup(ctx_, "too_many", &found), RRT_ERR_INVALID_ARGUMENT);
}

}  // namespace
