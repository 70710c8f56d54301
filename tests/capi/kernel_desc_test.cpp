// Kernels registered with a descriptor (rrt_kernel_register_desc), through the public shared
// library: the descriptor's validation, the arity and data-flow checks at prepare, and
// dependencies that follow the declared writes.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"

namespace {

using replayrt::testing::run_args;

constexpr std::uint64_t kElements = 4;
constexpr std::uint64_t kTensorBytes = kElements * sizeof(float);

std::string last_message() {
  rrt_error_detail_t detail{};
  (void)rrt_last_error(&detail);
  return detail.message;
}

// out = 2 * in: reads tensor 0, writes tensor 1.
int doubling_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  const auto *in = static_cast<const float *>(args->tensors[0]);
  auto *out = static_cast<float *>(args->tensors[1]);
  for (std::uint64_t i = 0; i < args->tensor_bytes[1] / sizeof(float); ++i) {
    out[i] = 2.0F * in[i];
  }
  return 0;
}

int native_kernel(const rrt_kernel_args_t * /*args*/, void * /*stream*/, void * /*user*/) {
  return 0;
}

// Two tasks meet here: each arrives and waits for the other, so the pair completes only when
// both run at once. A partner that never comes (the tasks were ordered) fails the kernel after
// a deadlock-breaking wait instead of hanging the test.
struct Rendezvous {
  std::atomic<int> arrived{0};
};

int rendezvous_kernel(const rrt_kernel_args_t * /*args*/, void *user) {
  auto &meeting = *static_cast<Rendezvous *>(user);
  meeting.arrived.fetch_add(1);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (meeting.arrived.load() < 2) {
    if (std::chrono::steady_clock::now() > give_up) {
      return 9;
    }
    std::this_thread::yield();
  }
  return 0;
}

rrt_kernel_desc_t doubling_desc(const char *name) {
  rrt_kernel_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.name = name;
  desc.fn = doubling_kernel;
  desc.num_tensors = 2;
  desc.num_scalars = 0;
  desc.writes = 0b10;
  return desc;
}

rrt_tensor_desc_t f32_vector(rrt_direction_t direction) {
  rrt_tensor_desc_t tensor{};
  tensor.dtype = RRT_DTYPE_F32;
  tensor.ndim = 1;
  tensor.shape[0] = kElements;
  tensor.direction = direction;
  return tensor;
}

class KernelDescTest : public ::testing::Test {
 protected:
  void SetUp() override { create(1); }

  void TearDown() override {
    if (ctx_ != nullptr) {
      EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK) << last_message();
    }
  }

  void create(std::uint32_t workers) {
    if (ctx_ != nullptr) {
      ASSERT_EQ(rrt_context_destroy(ctx_), RRT_OK);
    }
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = RRT_PLATFORM_SIM;
    options.device_workers = workers;
    ASSERT_EQ(rrt_context_create(&options, &ctx_), RRT_OK);
  }

  // A callable over `params` whose tasks are `tasks`.
  rrt_callable_desc_t callable(const rrt_tensor_desc_t *params, std::uint32_t num_params,
                               const rrt_task_desc_t *tasks, std::uint32_t num_tasks) const {
    rrt_callable_desc_t desc{};
    desc.struct_size = sizeof desc;
    desc.bind = RRT_BIND_DEVICE_BUILD;
    desc.num_params = num_params;
    desc.params = params;
    desc.num_tasks = num_tasks;
    desc.tasks = tasks;
    return desc;
  }

  rrt_status_t register_desc(const rrt_kernel_desc_t &desc) {
    return rrt_kernel_register_desc(ctx_, &desc, &id_);
  }

  rrt_context_t ctx_ = nullptr;
  std::int32_t id_ = -1;
};

TEST_F(KernelDescTest, ADeclaredKernelRunsWithTheOperandsItDeclares) {
  ASSERT_EQ(register_desc(doubling_desc("double")), RRT_OK) << last_message();
  std::int32_t looked_up = -1;
  ASSERT_EQ(rrt_kernel_lookup(ctx_, "double", &looked_up), RRT_OK);
  EXPECT_EQ(looked_up, id_);
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  const rrt_tensor_desc_t params[] = {f32_vector(RRT_DIR_IN), f32_vector(RRT_DIR_OUT)};
  const rrt_operand_t operands[] = {{RRT_OPERAND_PARAM, 0}, {RRT_OPERAND_PARAM, 1}};
  const rrt_task_desc_t task{id_, 2, operands};
  const rrt_callable_desc_t desc = callable(params, 2, &task, 1);
  std::int32_t callable_id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &desc, &callable_id), RRT_OK) << last_message();
  float in[kElements] = {1.0F, 2.0F, 3.0F, 4.0F};
  float out[kElements] = {};
  const rrt_tensor_arg_t tensors[] = {{in, kTensorBytes, RRT_SPACE_HOST},
                                      {out, kTensorBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t args = run_args(tensors);
  ASSERT_EQ(rrt_run(ctx_, callable_id, &args), RRT_OK) << last_message();
  for (std::uint64_t i = 0; i < kElements; ++i) {
    EXPECT_EQ(out[i], 2.0F * in[i]);
  }
}

TEST_F(KernelDescTest, MalformedDescriptorsAreRefusedAndRegisterNothing) {
  EXPECT_EQ(rrt_kernel_register_desc(ctx_, nullptr, &id_), RRT_ERR_INVALID_ARGUMENT);
  rrt_kernel_desc_t desc = doubling_desc("double");
  EXPECT_EQ(rrt_kernel_register_desc(nullptr, &desc, &id_), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_kernel_register_desc(ctx_, &desc, nullptr), RRT_ERR_INVALID_ARGUMENT);

  desc.struct_size = sizeof desc - 1;
  EXPECT_EQ(register_desc(desc), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("struct_size"), std::string::npos) << last_message();

  desc = doubling_desc(nullptr);
  EXPECT_EQ(register_desc(desc), RRT_ERR_INVALID_ARGUMENT);
  desc = doubling_desc("");
  EXPECT_EQ(register_desc(desc), RRT_ERR_INVALID_ARGUMENT);

  desc = doubling_desc("double");
  desc.fn = nullptr;
  EXPECT_EQ(register_desc(desc), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("neither"), std::string::npos) << last_message();
  desc.native_fn = native_kernel;
  EXPECT_EQ(register_desc(desc), RRT_ERR_UNSUPPORTED);  // the simulator runs host functions
  desc.fn = doubling_kernel;
  EXPECT_EQ(register_desc(desc), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("both"), std::string::npos) << last_message();

  desc = doubling_desc("double");
  desc.num_tensors = RRT_KERNEL_MAX_TENSORS + 1;
  EXPECT_EQ(register_desc(desc), RRT_ERR_INVALID_ARGUMENT);
  desc = doubling_desc("double");
  desc.writes = 0b100;
  EXPECT_EQ(register_desc(desc), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("writes 0x4"), std::string::npos) << last_message();

  std::int32_t id = -1;
  EXPECT_EQ(rrt_kernel_lookup(ctx_, "double", &id), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(register_desc(doubling_desc("double")), RRT_OK) << last_message();
  EXPECT_EQ(register_desc(doubling_desc("double")), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("already registered"), std::string::npos) << last_message();
}

TEST_F(KernelDescTest, AWrongArityIsRefusedAtPrepareNamingTaskAndKernel) {
  ASSERT_EQ(register_desc(doubling_desc("double")), RRT_OK);
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  const rrt_tensor_desc_t params[] = {f32_vector(RRT_DIR_INOUT)};
  const rrt_operand_t operands[] = {{RRT_OPERAND_PARAM, 0}};
  const rrt_task_desc_t task{id_, 1, operands};
  const rrt_callable_desc_t desc = callable(params, 1, &task, 1);
  std::int32_t callable_id = -1;
  EXPECT_EQ(rrt_callable_prepare(ctx_, &desc, &callable_id), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("task 0: kernel 'double' takes 2 tensors and 0 scalars, the "
                                "task gives 1 and 0"),
            std::string::npos)
      << last_message();
}

TEST_F(KernelDescTest, ADeclaredWriteToAnInParamIsRefusedAtPrepare) {
  ASSERT_EQ(register_desc(doubling_desc("double")), RRT_OK);
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  const rrt_tensor_desc_t params[] = {f32_vector(RRT_DIR_INOUT), f32_vector(RRT_DIR_IN)};
  const rrt_operand_t operands[] = {{RRT_OPERAND_PARAM, 0}, {RRT_OPERAND_PARAM, 1}};
  const rrt_task_desc_t task{id_, 2, operands};
  const rrt_callable_desc_t desc = callable(params, 2, &task, 1);
  std::int32_t callable_id = -1;
  EXPECT_EQ(rrt_callable_prepare(ctx_, &desc, &callable_id), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("task 0 operand 1: kernel 'double' writes IN param 1"),
            std::string::npos)
      << last_message();
}

TEST_F(KernelDescTest, TasksThatOnlyReadASharedTensorRunAtTheSameTime) {
  create(2);
  Rendezvous meeting;
  rrt_kernel_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.name = "meet";
  desc.fn = rendezvous_kernel;
  desc.user = &meeting;
  desc.num_tensors = 2;
  desc.writes = 0b10;  // reads the shared tensor 0, writes its own tensor 1
  ASSERT_EQ(register_desc(desc), RRT_OK) << last_message();
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  const rrt_tensor_desc_t params[] = {f32_vector(RRT_DIR_IN), f32_vector(RRT_DIR_OUT),
                                      f32_vector(RRT_DIR_OUT)};
  const rrt_operand_t first[] = {{RRT_OPERAND_PARAM, 0}, {RRT_OPERAND_PARAM, 1}};
  const rrt_operand_t second[] = {{RRT_OPERAND_PARAM, 0}, {RRT_OPERAND_PARAM, 2}};
  const rrt_task_desc_t tasks[] = {{id_, 2, first}, {id_, 2, second}};
  const rrt_callable_desc_t callable_desc = callable(params, 3, tasks, 2);
  std::int32_t callable_id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &callable_desc, &callable_id), RRT_OK) << last_message();
  float shared[kElements] = {};
  float a[kElements] = {};
  float b[kElements] = {};
  const rrt_tensor_arg_t tensors[] = {{shared, kTensorBytes, RRT_SPACE_HOST},
                                      {a, kTensorBytes, RRT_SPACE_HOST},
                                      {b, kTensorBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t args = run_args(tensors);
  EXPECT_EQ(rrt_run(ctx_, callable_id, &args), RRT_OK) << last_message();
}

}  // namespace
