// Kernels registered with a descriptor (rrt_kernel_register_desc), through the public shared
// library: the descriptor's validation, the arity and data-flow checks at prepare, and
// dependencies that follow the declared writes.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"

namespace {

using replayrt::testing::last_message;
using replayrt::testing::run_args;

constexpr std::uint64_t kKernelDescElements = 4;
constexpr std::uint64_t kKernelDescTensorBytes = kKernelDescElements * sizeof(float);

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

rrt_tensor_desc_t kernel_desc_f32_vector(rrt_direction_t direction) {
  rrt_tensor_desc_t tensor{};
  tensor.dtype = RRT_DTYPE_F32;
  tensor.ndim = 1;
  tensor.shape[0] = kKernelDescElements;
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
  const rrt_tensor_desc_t params[] = {kernel_desc_f32_vector(RRT_DIR_IN),
                                      kernel_desc_f32_vector(RRT_DIR_OUT)};
  const rrt_operand_t operands[] = {{RRT_OPERAND_PARAM, 0}, {RRT_OPERAND_PARAM, 1}};
  const rrt_task_desc_t task{id_, 2, operands};
  const rrt_callable_desc_t desc = callable(params, 2, &task, 1);
  std::int32_t callable_id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &desc, &callable_id), RRT_OK) << last_message();
  float in[kKernelDescElements] = {1.0F, 2.0F, 3.0F, 4.0F};
  float out[kKernelDescElements] = {};
  const rrt_tensor_arg_t tensors[] = {{in, kKernelDescTensorBytes, RRT_SPACE_HOST},
                                      {out, kKernelDescTensorBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t args = run_args(tensors);
  ASSERT_EQ(rrt_run(ctx_, callable_id, &args), RRT_OK) << last_message();
  for (std::uint64_t i = 0; i < kKernelDescElements; ++i) {
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
  const rrt_tensor_desc_t params[] = {kernel_desc_f32_vector(RRT_DIR_INOUT)};
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
  const rrt_tensor_desc_t params[] = {kernel_desc_f32_vector(RRT_DIR_INOUT),
                                      kernel_desc_f32_vector(RRT_DIR_IN)};
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
  const rrt_tensor_desc_t params[] = {kernel_desc_f32_vector(RRT_DIR_IN),
                                      kernel_desc_f32_vector(RRT_DIR_OUT),
                                      kernel_desc_f32_vector(RRT_DIR_OUT)};
  const rrt_operand_t first[] = {{RRT_OPERAND_PARAM, 0}, {RRT_OPERAND_PARAM, 1}};
  const rrt_operand_t second[] = {{RRT_OPERAND_PARAM, 0}, {RRT_OPERAND_PARAM, 2}};
  const rrt_task_desc_t tasks[] = {{id_, 2, first}, {id_, 2, second}};
  const rrt_callable_desc_t callable_desc = callable(params, 3, tasks, 2);
  std::int32_t callable_id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &callable_desc, &callable_id), RRT_OK) << last_message();
  float shared[kKernelDescElements] = {};
  float a[kKernelDescElements] = {};
  float b[kKernelDescElements] = {};
  const rrt_tensor_arg_t tensors[] = {{shared, kKernelDescTensorBytes, RRT_SPACE_HOST},
                                      {a, kKernelDescTensorBytes, RRT_SPACE_HOST},
                                      {b, kKernelDescTensorBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t args = run_args(tensors);
  EXPECT_EQ(rrt_run(ctx_, callable_id, &args), RRT_OK) << last_message();
}

}  // namespace

namespace {

// A callable where declared reads leave more dependency edges than undeclared ones: a fill of
// the intermediate x, kReaders tasks that read x (kernel "doubling", declared: reads tensor 0,
// writes tensor 1) into intermediates of their own, then a second fill of x and a copy of x
// to `out`. Declared, every reader follows the first fill and precedes the second: 2 kReaders
// edges. Undeclared, the readers form one chain: about kReaders edges.
class FanOutOverOneTensor {
 public:
  static constexpr std::uint32_t kReaders = 600;

  FanOutOverOneTensor(std::int32_t fill, std::int32_t doubling, std::int32_t copy)
      : intermediates_(kReaders + 1, kernel_desc_f32_vector(RRT_DIR_INOUT)) {
    out_ = kernel_desc_f32_vector(RRT_DIR_OUT);
    fill_ops_ = {rrt_operand_t{RRT_OPERAND_INTERMEDIATE, 0},
                 rrt_operand_t{RRT_OPERAND_IMMEDIATE,
                               static_cast<std::uint32_t>(rrt_scalar_from_f32(1.5F))}};
    reader_ops_.resize(kReaders);
    tasks_.push_back({fill, 2, fill_ops_.data()});
    for (std::uint32_t r = 0; r < kReaders; ++r) {
      reader_ops_[r] = {rrt_operand_t{RRT_OPERAND_INTERMEDIATE, 0},
                        rrt_operand_t{RRT_OPERAND_INTERMEDIATE, r + 1}};
      tasks_.push_back({doubling, 2, reader_ops_[r].data()});
    }
    tasks_.push_back({fill, 2, fill_ops_.data()});
    copy_ops_ = {rrt_operand_t{RRT_OPERAND_INTERMEDIATE, 0}, rrt_operand_t{RRT_OPERAND_PARAM, 0}};
    tasks_.push_back({copy, 2, copy_ops_.data()});
    desc_.struct_size = sizeof desc_;
    desc_.num_params = 1;
    desc_.params = &out_;
    desc_.num_intermediates = static_cast<std::uint32_t>(intermediates_.size());
    desc_.intermediates = intermediates_.data();
    desc_.num_tasks = static_cast<std::uint32_t>(tasks_.size());
    desc_.tasks = tasks_.data();
  }
  const rrt_callable_desc_t *desc() const { return &desc_; }

 private:
  rrt_tensor_desc_t out_{};
  std::vector<rrt_tensor_desc_t> intermediates_;
  std::vector<rrt_operand_t> fill_ops_;
  std::vector<std::vector<rrt_operand_t>> reader_ops_;
  std::vector<rrt_operand_t> copy_ops_;
  std::vector<rrt_task_desc_t> tasks_;
  rrt_callable_desc_t desc_{};
};

// A simulator context with "doubling" registered from its descriptor, and the fan-out callable.
struct DescriptorContext {
  DescriptorContext() {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
    const rrt_kernel_desc_t doubling = doubling_desc("doubling");
    std::int32_t ids[3] = {-1, -1, -1};
    EXPECT_EQ(rrt_kernel_lookup(ctx, "fill", &ids[0]), RRT_OK);
    EXPECT_EQ(rrt_kernel_register_desc(ctx, &doubling, &ids[1]), RRT_OK) << last_message();
    EXPECT_EQ(rrt_kernel_lookup(ctx, "copy", &ids[2]), RRT_OK);
    callable = std::make_unique<FanOutOverOneTensor>(ids[0], ids[1], ids[2]);
  }
  ~DescriptorContext() { EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK); }
  DescriptorContext(const DescriptorContext &) = delete;
  DescriptorContext &operator=(const DescriptorContext &) = delete;
  DescriptorContext(DescriptorContext &&) = delete;
  DescriptorContext &operator=(DescriptorContext &&) = delete;

  rrt_kernel_config_t fitted(bool with_context) const {
    const rrt_callable_desc_t *descs[] = {callable->desc()};
    rrt_kernel_config_t config{};
    config.struct_size = sizeof config;
    EXPECT_EQ(with_context ? rrt_context_kernel_config_fit(ctx, descs, 1, &config)
                           : rrt_kernel_config_fit(descs, 1, &config),
              RRT_OK)
        << last_message();
    config.context_generation = 0;  // the runtime picks a process-unique one
    return config;
  }

  rrt_context_t ctx = nullptr;
  std::unique_ptr<FanOutOverOneTensor> callable;
};

}  // namespace

// The context-free fit cannot know "doubling"'s declaration, so the image it plans for is too
// small; the fit with the context's kernel table plans what prepare needs, and the launch runs.
TEST(KernelDescPlanTest, TheContextFitPlansForDescriptorKernelsAndTheContextFreeOneCannot) {
  {
    DescriptorContext d;
    const rrt_kernel_config_t estimate = d.fitted(false);
    ASSERT_EQ(rrt_kernel_init(d.ctx, &estimate), RRT_OK);
    std::int32_t id = -1;
    rrt_error_detail_t detail{};
    EXPECT_EQ(rrt_callable_prepare(d.ctx, d.callable->desc(), &id), RRT_ERR_INTERNAL);
    (void)rrt_last_error(&detail);
    EXPECT_EQ(detail.growth_point, RRT_GROWTH_ARENA_RUNTIME_POOL) << detail.message;
  }
  DescriptorContext d;
  const rrt_kernel_config_t exact = d.fitted(true);
  EXPECT_GT(exact.capacity.runtime_pool_bytes, d.fitted(false).capacity.runtime_pool_bytes);
  ASSERT_EQ(rrt_kernel_init(d.ctx, &exact), RRT_OK);
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(d.ctx, d.callable->desc(), &id), RRT_OK) << last_message();
  float out[kKernelDescElements] = {};
  const rrt_tensor_arg_t tensor = {out, kKernelDescTensorBytes, RRT_SPACE_HOST};
  const rrt_run_args_t args = run_args({&tensor, 1});
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(d.ctx, &stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(d.ctx, id, &args, stream), RRT_OK) << last_message();
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  for (const float value : out) {
    EXPECT_EQ(value, 1.5F);
  }
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

TEST(KernelDescPlanTest, TheContextFitRefusesAKernelTheContextDoesNotKnow) {
  DescriptorContext d;
  rrt_context_t other = nullptr;
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  ASSERT_EQ(rrt_context_create(&options, &other), RRT_OK);
  const rrt_callable_desc_t *descs[] = {d.callable->desc()};
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  EXPECT_EQ(rrt_context_kernel_config_fit(other, descs, 1, &config), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("task 1: kernel id"), std::string::npos) << last_message();
  EXPECT_EQ(config.capacity.runtime_pool_bytes, 0u);
  EXPECT_EQ(rrt_context_kernel_config_fit(nullptr, descs, 1, &config), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_context_destroy(other), RRT_OK);
}
