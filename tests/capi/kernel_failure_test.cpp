// Kernel failures through the public shared library: a kernel that returns nonzero or throws
// fails its run with RRT_ERR_KERNEL_FAILED and the process lives on; the detail names the code
// returned, whatever int it is, or says that the kernel threw; a failure still pending
// on a stream is reported by the call that ends the stream's work (rrt_stream_destroy,
// rrt_context_finalize), not dropped.
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"

namespace {

using replayrt::testing::last_message;
using replayrt::testing::run_args;

constexpr std::uint32_t kTasks = 8;
constexpr std::uint64_t kKernelFailureElements = 4;
constexpr std::uint64_t kKernelFailureTensorBytes = kKernelFailureElements * sizeof(float);

int throwing_kernel(const rrt_kernel_args_t * /*args*/, void * /*user*/) {
  throw std::runtime_error("a C++ kernel threw");
}

int failing_kernel(const rrt_kernel_args_t * /*args*/, void * /*user*/) {
  return 7;
}

int returns_int_min(const rrt_kernel_args_t * /*args*/, void * /*user*/) {
  return std::numeric_limits<int>::min();
}

int returns_int_min_plus_one(const rrt_kernel_args_t * /*args*/, void * /*user*/) {
  return std::numeric_limits<int>::min() + 1;
}

int returns_zero(const rrt_kernel_args_t * /*args*/, void * /*user*/) {
  return 0;
}

// kTasks independent tasks of one kernel over one DEVICE tensor, so that with several device
// workers the helpers run some of them.
struct IndependentTasks {
  explicit IndependentTasks(std::int32_t kernel) {
    param.dtype = RRT_DTYPE_F32;
    param.ndim = 1;
    param.shape[0] = kKernelFailureElements;
    param.direction = RRT_DIR_INOUT;
    operand = {RRT_OPERAND_PARAM, 0};
    for (rrt_task_desc_t &task : tasks) {
      task = {kernel, 1, &operand};
    }
    desc.struct_size = sizeof desc;
    desc.bind = RRT_BIND_DEVICE_BUILD;
    desc.num_params = 1;
    desc.params = &param;
    desc.num_tasks = kTasks;
    desc.tasks = tasks;
  }
  IndependentTasks(const IndependentTasks &) = delete;
  IndependentTasks &operator=(const IndependentTasks &) = delete;

  rrt_tensor_desc_t param{};
  rrt_operand_t operand{};
  rrt_task_desc_t tasks[kTasks]{};
  rrt_callable_desc_t desc{};
};

// A sim context with `workers` device workers, the three test kernels registered and one
// caller device buffer. TearDown destroys it, which fails unless every stream and event the
// test created was destroyed.
class KernelFailureTest : public ::testing::TestWithParam<std::uint32_t> {
 protected:
  void SetUp() override {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = RRT_PLATFORM_SIM;
    options.device_workers = GetParam();
    ASSERT_EQ(rrt_context_create(&options, &ctx_), RRT_OK);
    ASSERT_EQ(rrt_kernel_register(ctx_, "throws", throwing_kernel, nullptr, &throws_), RRT_OK);
    ASSERT_EQ(rrt_kernel_register(ctx_, "fails", failing_kernel, nullptr, &fails_), RRT_OK);
    ASSERT_EQ(rrt_kernel_register(ctx_, "succeeds", returns_zero, nullptr, &succeeds_), RRT_OK);
    ASSERT_EQ(rrt_device_alloc(ctx_, kKernelFailureTensorBytes, &buffer_), RRT_OK);
    tensor_ = {buffer_, kKernelFailureTensorBytes, RRT_SPACE_DEVICE};
  }

  void TearDown() override {
    if (ctx_ != nullptr) {
      EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK) << last_message();
    }
  }

  // Latches kernel mode with capacity for every callable in `callables`.
  void kernel_init(std::vector<const rrt_callable_desc_t *> callables) {
    rrt_capacity_plan_t plan{};
    ASSERT_EQ(rrt_capacity_plan_fit_all(callables.data(),
                                        static_cast<std::uint32_t>(callables.size()), &plan),
              RRT_OK);
    rrt_kernel_config_t config{};
    config.struct_size = sizeof config;
    config.context_generation = 0;  // the runtime picks a process-unique one
    config.capacity = plan;
    ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
  }

  std::int32_t prepare(const IndependentTasks &callable) {
    std::int32_t id = -1;
    EXPECT_EQ(rrt_callable_prepare(ctx_, &callable.desc, &id), RRT_OK) << last_message();
    return id;
  }

  rrt_context_t ctx_ = nullptr;
  std::int32_t throws_ = -1;
  std::int32_t fails_ = -1;
  std::int32_t succeeds_ = -1;
  void *buffer_ = nullptr;
  rrt_tensor_arg_t tensor_{};
};

TEST_P(KernelFailureTest, AThrowingKernelFailsItsProgramRunAndTheProcessLivesOn) {
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  const IndependentTasks throwing(throws_);
  const IndependentTasks succeeding(succeeds_);
  const std::int32_t throwing_id = prepare(throwing);
  const std::int32_t succeeding_id = prepare(succeeding);
  const rrt_run_args_t args = run_args({&tensor_, 1});
  EXPECT_EQ(rrt_run(ctx_, throwing_id, &args), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(last_message().find("kernel 'throws') threw an exception"), std::string::npos)
      << last_message();
  EXPECT_EQ(rrt_run(ctx_, succeeding_id, &args), RRT_OK) << last_message();
}

TEST_P(KernelFailureTest, AThrowingKernelFailsItsLaunchAsAStickyStreamFailure) {
  const IndependentTasks throwing(throws_);
  const IndependentTasks succeeding(succeeds_);
  kernel_init({&throwing.desc, &succeeding.desc});
  const std::int32_t throwing_id = prepare(throwing);
  const std::int32_t succeeding_id = prepare(succeeding);
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  const rrt_run_args_t args = run_args({&tensor_, 1});
  ASSERT_EQ(rrt_kernel_launch(ctx_, throwing_id, &args, stream), RRT_OK) << last_message();
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(last_message().find("kernel 'throws') threw an exception"), std::string::npos)
      << last_message();
  ASSERT_EQ(rrt_kernel_launch(ctx_, succeeding_id, &args, stream), RRT_OK) << last_message();
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK) << last_message();
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

// No return value is reserved for the runtime's own failure causes (a kernel that threw, a
// view offset out of range): the detail names whatever code the kernel returned.
TEST_P(KernelFailureTest, EveryCodeAKernelReturnsIsReportedAsThatCode) {
  struct Returning {
    const char *name;
    rrt_kernel_fn fn;
    int code;
  };
  const Returning kernels[] = {
      {"returns_int_min", returns_int_min, std::numeric_limits<int>::min()},
      {"returns_int_min_plus_one", returns_int_min_plus_one, std::numeric_limits<int>::min() + 1},
  };
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  const rrt_run_args_t args = run_args({&tensor_, 1});
  for (const Returning &kernel : kernels) {
    SCOPED_TRACE(kernel.name);
    std::int32_t kernel_id = -1;
    ASSERT_EQ(rrt_kernel_register(ctx_, kernel.name, kernel.fn, nullptr, &kernel_id), RRT_OK);
    const IndependentTasks returning(kernel_id);
    const std::int32_t callable_id = prepare(returning);
    EXPECT_EQ(rrt_run(ctx_, callable_id, &args), RRT_ERR_KERNEL_FAILED);
    const std::string message = last_message();
    EXPECT_NE(message.find("(kernel '" + std::string(kernel.name) + "') failed with code " +
                           std::to_string(kernel.code)),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("threw"), std::string::npos) << message;
    EXPECT_EQ(message.find("offset"), std::string::npos) << message;
  }
}

TEST_P(KernelFailureTest, AReturnedCodeReachesTheStickyStreamFailureUnchanged) {
  std::int32_t kernel_id = -1;
  ASSERT_EQ(rrt_kernel_register(ctx_, "returns_int_min", returns_int_min, nullptr, &kernel_id),
            RRT_OK);
  const IndependentTasks returning(kernel_id);
  kernel_init({&returning.desc});
  const std::int32_t callable_id = prepare(returning);
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  const rrt_run_args_t args = run_args({&tensor_, 1});
  ASSERT_EQ(rrt_kernel_launch(ctx_, callable_id, &args, stream), RRT_OK) << last_message();
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_ERR_KERNEL_FAILED);
  const std::string message = last_message();
  EXPECT_NE(message.find("(kernel 'returns_int_min') failed with code " +
                         std::to_string(std::numeric_limits<int>::min())),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("threw"), std::string::npos) << message;
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

TEST_P(KernelFailureTest, StreamDestroyReportsAPendingKernelFailureAndStillDestroys) {
  const IndependentTasks failing(fails_);
  kernel_init({&failing.desc});
  const std::int32_t failing_id = prepare(failing);
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  const rrt_run_args_t args = run_args({&tensor_, 1});
  ASSERT_EQ(rrt_kernel_launch(ctx_, failing_id, &args, stream), RRT_OK) << last_message();
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_ERR_KERNEL_FAILED);
  const std::string message = last_message();
  EXPECT_EQ(message.rfind("rrt_stream_destroy: ", 0), 0u) << message;
  EXPECT_NE(message.find("kernel 'fails'"), std::string::npos) << message;
  EXPECT_NE(message.find("code 7"), std::string::npos) << message;
  // TearDown's rrt_context_destroy succeeds only if the stream is gone.
}

TEST_P(KernelFailureTest, EventDestroyLeavesTheFailureItsRecordCarriedWithTheStream) {
  const IndependentTasks failing(fails_);
  kernel_init({&failing.desc});
  const std::int32_t failing_id = prepare(failing);
  rrt_stream_t stream = nullptr;
  rrt_event_t event = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  ASSERT_EQ(rrt_event_create(ctx_, &event), RRT_OK);
  const rrt_run_args_t args = run_args({&tensor_, 1});
  ASSERT_EQ(rrt_kernel_launch(ctx_, failing_id, &args, stream), RRT_OK) << last_message();
  ASSERT_EQ(rrt_event_record(event, stream), RRT_OK);
  EXPECT_EQ(rrt_event_destroy(event), RRT_OK) << last_message();
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_ERR_KERNEL_FAILED);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK) << last_message();
}

TEST_P(KernelFailureTest, ContextFinalizeReportsAPendingKernelFailureAndStillFinalizes) {
  const IndependentTasks failing(fails_);
  kernel_init({&failing.desc});
  const std::int32_t failing_id = prepare(failing);
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  const rrt_run_args_t args = run_args({&tensor_, 1});
  ASSERT_EQ(rrt_kernel_launch(ctx_, failing_id, &args, stream), RRT_OK) << last_message();
  EXPECT_EQ(rrt_context_finalize(ctx_), RRT_ERR_KERNEL_FAILED);
  const std::string message = last_message();
  EXPECT_EQ(message.rfind("rrt_context_finalize: ", 0), 0u) << message;
  EXPECT_NE(message.find("kernel 'fails'"), std::string::npos) << message;
  // Reported once: the stream no longer holds it, and the context is finalized.
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK) << last_message();
  EXPECT_EQ(rrt_kernel_launch(ctx_, failing_id, &args, stream), RRT_ERR_INVALID_STATE);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK) << last_message();
}

// A context finalize waits for a launched run and reports its failure. The next session's
// runs record the same slot events again, so the old run's wait must not wait for a new run,
// and so take the failure that run has to report.
TEST_P(KernelFailureTest, ARunFromBeforeAFinalizeDoesNotTakeTheNextSessionsFailure) {
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  const IndependentTasks succeeding(succeeds_);
  const IndependentTasks failing(fails_);
  const std::int32_t succeeding_id = prepare(succeeding);
  const rrt_run_args_t args = run_args({&tensor_, 1});
  rrt_run_t old = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, succeeding_id, &args, &old), RRT_OK) << last_message();
  ASSERT_EQ(rrt_run_launch(old, nullptr), RRT_OK) << last_message();
  ASSERT_EQ(rrt_context_finalize(ctx_), RRT_OK) << last_message();
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  const std::int32_t failing_id = prepare(failing);
  rrt_run_t next = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, failing_id, &args, &next), RRT_OK) << last_message();
  ASSERT_EQ(rrt_run_launch(next, nullptr), RRT_OK) << last_message();
  EXPECT_EQ(rrt_run_wait(old), RRT_ERR_INVALID_STATE);
  EXPECT_NE(last_message().find("finalized"), std::string::npos) << last_message();
  EXPECT_EQ(rrt_run_finalize(old), RRT_OK) << last_message();
  EXPECT_EQ(rrt_run_wait(next), RRT_ERR_KERNEL_FAILED);
  EXPECT_EQ(rrt_run_finalize(next), RRT_OK) << last_message();
}

// The same before the context is initialized again: the finalize reported the run's failure,
// and its wait is refused rather than answering for work the finalize already waited for.
TEST_P(KernelFailureTest, ARunWaitAfterAFinalizeIsRefused) {
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  const IndependentTasks failing(fails_);
  const std::int32_t failing_id = prepare(failing);
  const rrt_run_args_t args = run_args({&tensor_, 1});
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, failing_id, &args, &run), RRT_OK) << last_message();
  ASSERT_EQ(rrt_run_launch(run, nullptr), RRT_OK) << last_message();
  EXPECT_EQ(rrt_context_finalize(ctx_), RRT_ERR_KERNEL_FAILED);
  EXPECT_EQ(rrt_run_wait(run), RRT_ERR_INVALID_STATE);
  EXPECT_NE(last_message().find("finalized"), std::string::npos) << last_message();
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK) << last_message();
}

INSTANTIATE_TEST_SUITE_P(DeviceWorkers, KernelFailureTest, ::testing::Values(1U, 2U),
                         [](const ::testing::TestParamInfo<std::uint32_t> &info) {
                           return std::to_string(info.param) + "Workers";
                         });

}  // namespace
