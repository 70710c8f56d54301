// Host waiting through the public shared library: rrt_stream_query and rrt_event_query never
// wait and never report or clear a failure, and every rrt_wait_policy_t completes waits
// correctly.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"

namespace {

using replayrt::testing::last_message;
using replayrt::testing::run_args;

constexpr std::uint64_t kWaitingElements = 4;
constexpr std::uint64_t kWaitingTensorBytes = kWaitingElements * sizeof(float);

// A kernel that holds its task until the test opens the gate, then returns `result`.
struct Gate {
  std::atomic<bool> open{false};
  int result = 0;
};

int gated_kernel(const rrt_kernel_args_t * /*args*/, void *user) {
  auto &gate = *static_cast<Gate *>(user);
  while (!gate.open.load()) {
    std::this_thread::yield();
  }
  return gate.result;
}

rrt_context_options_t options_with(rrt_wait_policy_t policy, std::uint32_t spin_us = 0) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_SIM;
  options.wait_policy = policy;
  options.wait_spin_us = spin_us;
  return options;
}

// A program-mode context whose one callable runs the gated kernel once over a DEVICE tensor,
// and a stream to launch it on.
class WaitingTest : public ::testing::TestWithParam<rrt_wait_policy_t> {
 protected:
  void SetUp() override {
    const rrt_context_options_t options = options_with(GetParam(), 20);
    ASSERT_EQ(rrt_context_create(&options, &ctx_), RRT_OK) << last_message();
    ASSERT_EQ(rrt_kernel_register(ctx_, "gated", gated_kernel, &gate_, &kernel_), RRT_OK);
    ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
    param_.dtype = RRT_DTYPE_F32;
    param_.ndim = 1;
    param_.shape[0] = kWaitingElements;
    param_.direction = RRT_DIR_INOUT;
    operand_ = {RRT_OPERAND_PARAM, 0};
    task_ = {kernel_, 1, &operand_};
    rrt_callable_desc_t desc{};
    desc.struct_size = sizeof desc;
    desc.bind = RRT_BIND_DEVICE_BUILD;
    desc.num_params = 1;
    desc.params = &param_;
    desc.num_tasks = 1;
    desc.tasks = &task_;
    ASSERT_EQ(rrt_callable_prepare(ctx_, &desc, &callable_), RRT_OK) << last_message();
    ASSERT_EQ(rrt_device_alloc(ctx_, kWaitingTensorBytes, &buffer_), RRT_OK);
    tensor_ = {buffer_, kWaitingTensorBytes, RRT_SPACE_DEVICE};
    ASSERT_EQ(rrt_stream_create(ctx_, &stream_), RRT_OK);
    ASSERT_EQ(rrt_event_create(ctx_, &event_), RRT_OK);
  }

  void TearDown() override {
    gate_.open.store(true);
    if (run_ != nullptr) {
      (void)rrt_run_finalize(run_);
    }
    if (event_ != nullptr) {
      EXPECT_EQ(rrt_event_destroy(event_), RRT_OK);
    }
    if (stream_ != nullptr) {
      (void)rrt_stream_destroy(stream_);
    }
    if (ctx_ != nullptr) {
      EXPECT_EQ(rrt_device_free(ctx_, buffer_), RRT_OK);
      EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK) << last_message();
    }
  }

  // Launches the gated run on stream_ and records event_ after it.
  void launch() {
    const rrt_run_args_t args = run_args({&tensor_, 1});
    ASSERT_EQ(rrt_run_prepare(ctx_, callable_, &args, &run_), RRT_OK) << last_message();
    ASSERT_EQ(rrt_run_launch(run_, stream_), RRT_OK) << last_message();
    ASSERT_EQ(rrt_event_record(event_, stream_), RRT_OK);
  }

  int stream_done() {
    int done = -1;
    EXPECT_EQ(rrt_stream_query(stream_, &done), RRT_OK);
    return done;
  }

  int event_done() {
    int done = -1;
    EXPECT_EQ(rrt_event_query(event_, &done), RRT_OK);
    return done;
  }

  Gate gate_;
  rrt_context_t ctx_ = nullptr;
  std::int32_t kernel_ = -1;
  std::int32_t callable_ = -1;
  rrt_tensor_desc_t param_{};
  rrt_operand_t operand_{};
  rrt_task_desc_t task_{};
  void *buffer_ = nullptr;
  rrt_tensor_arg_t tensor_{};
  rrt_stream_t stream_ = nullptr;
  rrt_event_t event_ = nullptr;
  rrt_run_t run_ = nullptr;
};

TEST_P(WaitingTest, QueriesSayNotDoneWhileWorkIsQueuedAndDoneAfterItExecuted) {
  EXPECT_EQ(stream_done(), 1);  // nothing queued yet
  EXPECT_EQ(event_done(), 1);   // never recorded
  launch();
  EXPECT_EQ(stream_done(), 0);
  EXPECT_EQ(event_done(), 0);
  gate_.open.store(true);
  EXPECT_EQ(rrt_event_synchronize(event_), RRT_OK) << last_message();
  EXPECT_EQ(event_done(), 1);
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK) << last_message();
  EXPECT_EQ(stream_done(), 1);
  EXPECT_EQ(rrt_run_wait(run_), RRT_OK) << last_message();
}

TEST_P(WaitingTest, EveryPolicyCompletesAWaitThatStartsBeforeTheWorkFinishes) {
  launch();
  // The gate opens a little after the wait has begun, so a blocking wait parks first and is
  // woken; the wait completing at all is what the test checks, not when.
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    gate_.open.store(true);
  });
  EXPECT_EQ(rrt_run_wait(run_), RRT_OK) << last_message();
  opener.join();
  EXPECT_EQ(rrt_event_synchronize(event_), RRT_OK) << last_message();
  EXPECT_EQ(event_done(), 1);
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK) << last_message();
  EXPECT_EQ(stream_done(), 1);
  // A second round through rrt_run, which waits on its own.
  EXPECT_EQ(rrt_run_finalize(run_), RRT_OK);
  run_ = nullptr;
  const rrt_run_args_t args = run_args({&tensor_, 1});
  EXPECT_EQ(rrt_run(ctx_, callable_, &args), RRT_OK) << last_message();
}

TEST_P(WaitingTest, QueriesNeitherReportNorClearAFailure) {
  gate_.result = 5;
  launch();
  gate_.open.store(true);
  while (stream_done() == 0 || event_done() == 0) {
    std::this_thread::yield();
  }
  EXPECT_EQ(stream_done(), 1);  // failed work counts as executed; asking twice changes nothing
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_ERR_KERNEL_FAILED);
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  EXPECT_EQ(rrt_run_wait(run_), RRT_OK);  // the stream reported it already
}

TEST_P(WaitingTest, ACapturingStreamAnswersForTheWorkQueuedBeforeTheCapture) {
  launch();
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  EXPECT_EQ(stream_done(), 0);
  gate_.open.store(true);
  while (stream_done() == 0) {
    std::this_thread::yield();
  }
  ASSERT_EQ(rrt_memcpy_h2d(ctx_, buffer_, &tensor_, sizeof(float), stream_), RRT_OK);
  EXPECT_EQ(stream_done(), 1);  // the captured copy is recorded, not queued
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK) << last_message();
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_run_wait(run_), RRT_OK) << last_message();
}

INSTANTIATE_TEST_SUITE_P(Policies, WaitingTest,
                         ::testing::Values(RRT_WAIT_SPIN_THEN_BLOCK, RRT_WAIT_SPIN, RRT_WAIT_YIELD,
                                           RRT_WAIT_BLOCK),
                         [](const ::testing::TestParamInfo<rrt_wait_policy_t> &info) {
                           switch (info.param) {
                             case RRT_WAIT_SPIN_THEN_BLOCK:
                               return std::string("SpinThenBlock");
                             case RRT_WAIT_SPIN:
                               return std::string("Spin");
                             case RRT_WAIT_YIELD:
                               return std::string("Yield");
                             case RRT_WAIT_BLOCK:
                               return std::string("Block");
                           }
                           return std::string("Unknown");
                         });

TEST(WaitPolicyOptionsTest, AnUnknownPolicyIsRefusedAtContextCreate) {
  rrt_context_options_t options = options_with(RRT_WAIT_SPIN);
  const std::int32_t unknown = 4;
  std::memcpy(&options.wait_policy, &unknown, sizeof unknown);
  rrt_context_t ctx = nullptr;
  EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(last_message().find("unknown wait_policy 4"), std::string::npos) << last_message();
  const std::int32_t negative = -1;
  std::memcpy(&options.wait_policy, &negative, sizeof negative);
  EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_ERR_INVALID_ARGUMENT);
}

TEST(WaitPolicyOptionsTest, AnOlderOptionsStructIgnoresTheBytesWhereThePolicyWouldBe) {
  rrt_context_options_t options = options_with(RRT_WAIT_SPIN);
  const std::int32_t garbage = 77;
  std::memcpy(&options.wait_policy, &garbage, sizeof garbage);
  options.struct_size = offsetof(rrt_context_options_t, wait_policy);
  rrt_context_t ctx = nullptr;
  ASSERT_EQ(rrt_context_create(&options, &ctx), RRT_OK) << last_message();
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(QueryArgumentsTest, NullArgumentsAreRefused) {
  int done = 0;
  EXPECT_EQ(rrt_stream_query(nullptr, &done), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_event_query(nullptr, &done), RRT_ERR_INVALID_ARGUMENT);
  rrt_context_options_t options = options_with(RRT_WAIT_SPIN_THEN_BLOCK);
  rrt_context_t ctx = nullptr;
  ASSERT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  rrt_stream_t stream = nullptr;
  rrt_event_t event = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
  ASSERT_EQ(rrt_event_create(ctx, &event), RRT_OK);
  EXPECT_EQ(rrt_stream_query(stream, nullptr), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_event_query(event, nullptr), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_event_destroy(event), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

}  // namespace
