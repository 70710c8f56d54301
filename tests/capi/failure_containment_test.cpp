// Failures stay where they happen, and shutdown never frees memory queued work still uses:
// each test is one scenario through the C ABI that broke a header contract before.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"
#include "test_platform.h"

namespace {

using replayrt::testing::run_args;

constexpr std::uint64_t kContainmentFloats = 16;
constexpr std::uint64_t kContainmentBytes = kContainmentFloats * 4;
// How long a call that must wait is given before the test calls it blocked: a liveness
// bound, not a timing expectation.
constexpr auto kBlockedFor = std::chrono::milliseconds(100);

// Kernels over one INOUT tensor of kContainmentFloats floats.
int containment_gated_kernel(const rrt_kernel_args_t *, void *user) {
  const auto *gate = static_cast<std::atomic<bool> *>(user);
  while (!gate->load(std::memory_order_acquire)) {
    std::this_thread::yield();
  }
  return 0;
}

int counting_kernel(const rrt_kernel_args_t *args, void *user) {
  static_cast<std::atomic<int> *>(user)->fetch_add(1, std::memory_order_acq_rel);
  auto *values = static_cast<float *>(args->tensors[0]);
  for (std::uint64_t i = 0; i < kContainmentFloats; ++i) {
    values[i] += 1.0F;
  }
  return 0;
}

int failing_kernel(const rrt_kernel_args_t *, void *) {
  return 7;
}

// A context with the three kernels above registered and one single-task callable for each.
class Containment {
 public:
  explicit Containment(rrt_mode_t mode, bool profiling = false) {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = replayrt::testing::test_platform();
    options.device_workers = 1;
    options.profiling = profiling ? 1 : 0;
    EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
    EXPECT_EQ(replayrt::testing::register_host_kernel(ctx, "gated", &containment_gated_kernel,
                                                      &gate, &kernels[0]),
              RRT_OK);
    EXPECT_EQ(replayrt::testing::register_host_kernel(ctx, "counting", &counting_kernel, &count,
                                                      &kernels[1]),
              RRT_OK);
    EXPECT_EQ(replayrt::testing::register_host_kernel(ctx, "failing", &failing_kernel, nullptr,
                                                      &kernels[2]),
              RRT_OK);
    buffer.dtype = RRT_DTYPE_F32;
    buffer.ndim = 1;
    buffer.shape[0] = kContainmentFloats;
    buffer.direction = RRT_DIR_INOUT;
    for (int i = 0; i < 3; ++i) {
      tasks[i] = {kernels[i], 1, &operand};
      descs[i].struct_size = sizeof descs[i];
      descs[i].num_params = 1;
      descs[i].params = &buffer;
      descs[i].num_tasks = 1;
      descs[i].tasks = &tasks[i];
      all[i] = &descs[i];
    }
    if (mode == RRT_MODE_KERNEL) {
      rrt_kernel_config_t config{};
      config.struct_size = sizeof config;
      config.context_generation = 0;
      EXPECT_EQ(rrt_capacity_plan_fit_all(all, 3, &config.capacity), RRT_OK);
      EXPECT_EQ(rrt_kernel_init(ctx, &config), RRT_OK);
    } else {
      EXPECT_EQ(rrt_program_init(ctx), RRT_OK);
    }
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(rrt_callable_prepare(ctx, &descs[i], &ids[i]), RRT_OK);
    }
    EXPECT_EQ(rrt_device_alloc(ctx, kContainmentBytes, &device), RRT_OK);
    tensor = {device, kContainmentBytes, RRT_SPACE_DEVICE};
    args = run_args({&tensor, 1});
  }
  ~Containment() {
    gate.store(true);
    for (rrt_stream_t stream : streams) {
      (void)rrt_stream_destroy(stream);
    }
    if (device != nullptr) {
      (void)rrt_device_free(ctx, device);
    }
    EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
  }
  Containment(const Containment &) = delete;
  Containment &operator=(const Containment &) = delete;

  rrt_stream_t stream() {
    rrt_stream_t stream = nullptr;
    EXPECT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
    streams.push_back(stream);
    return stream;
  }
  std::int32_t gated() const { return ids[0]; }
  std::int32_t counting() const { return ids[1]; }
  std::int32_t failing() const { return ids[2]; }
  std::vector<float> values() const {
    std::vector<float> host(kContainmentFloats);
    EXPECT_EQ(rrt_memcpy_d2h(ctx, host.data(), device, kContainmentBytes, nullptr), RRT_OK);
    return host;
  }

  rrt_context_t ctx = nullptr;
  std::atomic<bool> gate{false};
  std::atomic<int> count{0};
  std::int32_t kernels[3] = {-1, -1, -1};
  rrt_tensor_desc_t buffer{};
  rrt_operand_t operand{RRT_OPERAND_PARAM, 0};
  rrt_task_desc_t tasks[3]{};
  rrt_callable_desc_t descs[3]{};
  const rrt_callable_desc_t *all[3] = {};
  std::int32_t ids[3] = {-1, -1, -1};
  void *device = nullptr;
  rrt_tensor_arg_t tensor{};
  rrt_run_args_t args{};
  std::vector<rrt_stream_t> streams;
};

// Runs `call` on another thread and reports whether it was still blocked after kBlockedFor;
// then opens the gate and returns the call's status.
template <typename Call>
rrt_status_t blocked_until_gate_opens(Containment &c, Call call, bool *was_blocked) {
  std::future<rrt_status_t> result = std::async(std::launch::async, call);
  *was_blocked = result.wait_for(kBlockedFor) == std::future_status::timeout;
  c.gate.store(true, std::memory_order_release);
  return result.get();
}

TEST(FailureContainmentTest, FinalizeWaitsForWorkQueuedBeforeACaptureBegan) {
  Containment c(RRT_MODE_KERNEL);
  rrt_stream_t stream = c.stream();
  ASSERT_EQ(rrt_kernel_launch(c.ctx, c.gated(), &c.args, stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(c.ctx, c.counting(), &c.args, stream), RRT_OK);
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  bool blocked = false;
  EXPECT_EQ(blocked_until_gate_opens(
                c, [&] { return rrt_context_finalize(c.ctx); }, &blocked),
            RRT_OK);
  EXPECT_TRUE(blocked) << "finalize returned while a launch it frees was still queued";
  EXPECT_EQ(c.count.load(), 1);
  rrt_graph_t graph = nullptr;
  EXPECT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
}

// Finalize closes the lifecycle gate, drains the context's streams, then releases the slots.
// A run launched while it drains is refused: it would land on a slot finalize then releases
// (on CUDA, a device use-after-free). The gated run holds finalize in its drain;
// rrt_context_profile refused as finalized shows that finalize has closed the gate.
TEST(FailureContainmentTest, ARunLaunchedWhileFinalizeDrainsIsRefused) {
  Containment c(RRT_MODE_PROGRAM);
  rrt_stream_t caller = c.stream();
  rrt_run_t held = nullptr;
  rrt_run_t late = nullptr;
  ASSERT_EQ(rrt_run_prepare(c.ctx, c.gated(), &c.args, &held), RRT_OK);
  ASSERT_EQ(rrt_run_prepare(c.ctx, c.counting(), &c.args, &late), RRT_OK);
  ASSERT_EQ(rrt_run_launch(held, nullptr), RRT_OK);
  std::future<rrt_status_t> finalized =
      std::async(std::launch::async, [&] { return rrt_context_finalize(c.ctx); });
  for (;;) {
    std::uint32_t records = 0;
    EXPECT_NE(rrt_context_profile(c.ctx, nullptr, 0, &records), RRT_OK);
    rrt_error_detail_t detail{};
    (void)rrt_last_error(&detail);
    if (std::string(detail.message).find("finalized") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(rrt_run_launch(late, caller), RRT_ERR_INVALID_STATE)
      << "a run was launched onto a slot that finalize is about to release";
  c.gate.store(true, std::memory_order_release);
  EXPECT_EQ(finalized.get(), RRT_OK);
  EXPECT_EQ(rrt_stream_synchronize(caller), RRT_OK);
  EXPECT_EQ(c.count.load(), 0);
  EXPECT_EQ(rrt_run_finalize(held), RRT_OK);
  EXPECT_EQ(rrt_run_finalize(late), RRT_OK);
}

// A program-mode prepare binds into a slot whose blocks the last replay of a graph captured
// from that slot may still use (its bind may upload there), so it waits for that replay: it
// does not return while the gated replay runs.
TEST(FailureContainmentTest, AProgramPrepareWaitsForTheLastReplayOfItsSlot) {
  Containment c(RRT_MODE_PROGRAM);
  rrt_stream_t stream = c.stream();
  rrt_run_t captured = nullptr;
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_run_prepare(c.ctx, c.gated(), &c.args, &captured), RRT_OK);
  ASSERT_EQ(rrt_run_launch(captured, stream), RRT_OK);
  ASSERT_EQ(rrt_run_finalize(captured), RRT_OK);
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_OK);
  rrt_run_t run = nullptr;
  bool blocked = false;
  EXPECT_EQ(blocked_until_gate_opens(
                c, [&] { return rrt_run_prepare(c.ctx, c.counting(), &c.args, &run); }, &blocked),
            RRT_OK);
  EXPECT_TRUE(blocked) << "the prepare bound into a slot that a replay was still using";
  ASSERT_EQ(rrt_run_launch(run, stream), RRT_OK);
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK);
  EXPECT_EQ(c.count.load(), 1);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
}

// A graph captured from a program-mode slot and an eager run prepared into the same slot share
// its scheduler state: the run waits for the replay instead of running on top of it.
TEST(FailureContainmentTest, ProgramReplaysAndEagerRunsOfOneSlotTakeTurns) {
  Containment c(RRT_MODE_PROGRAM);
  rrt_stream_t replay_stream = c.stream();
  const auto capture = [&](std::int32_t id) {
    rrt_run_t run = nullptr;
    rrt_graph_t graph = nullptr;
    EXPECT_EQ(rrt_stream_begin_capture(replay_stream), RRT_OK);
    EXPECT_EQ(rrt_run_prepare(c.ctx, id, &c.args, &run), RRT_OK);
    EXPECT_EQ(rrt_run_launch(run, replay_stream), RRT_OK);
    EXPECT_EQ(rrt_run_finalize(run), RRT_OK);
    EXPECT_EQ(rrt_stream_end_capture(replay_stream, &graph), RRT_OK);
    return graph;
  };
  rrt_graph_t held = capture(c.gated());
  ASSERT_EQ(rrt_graph_replay(held, replay_stream), RRT_OK);
  bool blocked = false;
  EXPECT_EQ(blocked_until_gate_opens(
                c, [&] { return rrt_run(c.ctx, c.counting(), &c.args); }, &blocked),
            RRT_OK);
  EXPECT_TRUE(blocked) << "the eager run ran while a replay of its slot was held";

  rrt_graph_t counting = capture(c.counting());
  ASSERT_EQ(rrt_memcpy_h2d(c.ctx, c.device, std::vector<float>(kContainmentFloats, 0.0F).data(),
                           kContainmentBytes, nullptr),
            RRT_OK);
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(rrt_graph_replay(counting, replay_stream), RRT_OK);
    ASSERT_EQ(rrt_run(c.ctx, c.counting(), &c.args), RRT_OK);
  }
  ASSERT_EQ(rrt_stream_synchronize(replay_stream), RRT_OK);
  EXPECT_EQ(c.count.load(), 101);
  EXPECT_EQ(c.values(), std::vector<float>(kContainmentFloats, 100.0F));
  EXPECT_EQ(rrt_graph_destroy(held), RRT_OK);
  EXPECT_EQ(rrt_graph_destroy(counting), RRT_OK);
}

// A failing kernel stays on its stream on the simulator. On CUDA a kernel cannot fail its task
// alone: a fault is sticky for the whole device context (cuda_fake: the device-fault test of
// capi/cuda_fake_test.cpp), so these three scenarios are the simulator's.
#if !defined(REPLAYRT_TEST_ON_FAKE_CUDA)
TEST(FailureContainmentTest, AnEventSynchronizeReportsAFailureOnceAndClearsIt) {
  Containment c(RRT_MODE_KERNEL);
  rrt_stream_t stream = c.stream();
  rrt_event_t event = nullptr;
  ASSERT_EQ(rrt_event_create(c.ctx, &event), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(c.ctx, c.failing(), &c.args, stream), RRT_OK);
  ASSERT_EQ(rrt_event_record(event, stream), RRT_OK);
  EXPECT_EQ(rrt_event_synchronize(event), RRT_ERR_KERNEL_FAILED);
  EXPECT_EQ(rrt_event_synchronize(event), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(c.ctx, c.counting(), &c.args, stream), RRT_OK);
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_EQ(c.count.load(), 1) << "the good launch after the reported failure was skipped";
  EXPECT_EQ(rrt_event_destroy(event), RRT_OK);
}

TEST(FailureContainmentTest, ARunWaitReportsItsFailureAndTheNextRunOnTheStreamRuns) {
  Containment c(RRT_MODE_PROGRAM);
  rrt_stream_t stream = c.stream();
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(c.ctx, c.failing(), &c.args, &run), RRT_OK);
  ASSERT_EQ(rrt_run_launch(run, stream), RRT_OK);
  EXPECT_EQ(rrt_run_wait(run), RRT_ERR_KERNEL_FAILED);
  ASSERT_EQ(rrt_run_finalize(run), RRT_OK);
  ASSERT_EQ(rrt_run_prepare(c.ctx, c.counting(), &c.args, &run), RRT_OK);
  ASSERT_EQ(rrt_run_launch(run, stream), RRT_OK);
  EXPECT_EQ(rrt_run_wait(run), RRT_OK);
  ASSERT_EQ(rrt_run_finalize(run), RRT_OK);
  EXPECT_EQ(c.count.load(), 1);
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK);
}

TEST(FailureContainmentTest, AKernelModeFailureNeverReachesAnotherStream) {
  Containment c(RRT_MODE_KERNEL);
  rrt_stream_t failed = c.stream();
  ASSERT_EQ(rrt_kernel_launch(c.ctx, c.failing(), &c.args, failed), RRT_OK);
  constexpr int kLaunches = 200;
  for (int i = 0; i < kLaunches; ++i) {
    rrt_stream_t fresh = c.stream();
    ASSERT_EQ(rrt_kernel_launch(c.ctx, c.counting(), &c.args, fresh), RRT_OK);
    ASSERT_EQ(rrt_stream_synchronize(fresh), RRT_OK) << "launch " << i;
  }
  EXPECT_EQ(c.count.load(), kLaunches);
  rrt_error_detail_t detail{};
  EXPECT_EQ(rrt_stream_synchronize(failed), RRT_ERR_KERNEL_FAILED);
  ASSERT_EQ(rrt_last_error(&detail), RRT_ERR_KERNEL_FAILED);
  EXPECT_EQ(std::string(detail.message).find("waited"), std::string::npos) << detail.message;
}
#endif

TEST(FailureContainmentTest, AStaleReplayEnqueuesNothingOnAnyStream) {
  Containment c(RRT_MODE_KERNEL);
  rrt_stream_t held = c.stream();
  rrt_stream_t other = c.stream();
  void *doomed = nullptr;
  ASSERT_EQ(rrt_device_alloc(c.ctx, kContainmentBytes, &doomed), RRT_OK);
  const rrt_tensor_arg_t tensor{doomed, kContainmentBytes, RRT_SPACE_DEVICE};
  const rrt_run_args_t args = run_args({&tensor, 1});
  ASSERT_EQ(rrt_stream_begin_capture(other), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(c.ctx, c.counting(), &args, other), RRT_OK);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(other, &graph), RRT_OK);
  ASSERT_EQ(rrt_device_free(c.ctx, doomed), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(c.ctx, c.gated(), &c.args, held), RRT_OK);
  EXPECT_EQ(rrt_graph_replay(graph, other), RRT_ERR_STALE_ADDRESS);
  // Had the replay queued its wait for `held`, this synchronize would block on the gate.
  bool blocked = false;
  EXPECT_EQ(blocked_until_gate_opens(
                c, [&] { return rrt_stream_synchronize(other); }, &blocked),
            RRT_OK);
  EXPECT_FALSE(blocked) << "the refused replay left work queued on its stream";
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
}

// A program-mode run with a HOST input whose DEVICE output was freed after prepare is refused
// at launch before any of its work reaches the capturing stream: the run stays prepared, the
// capture goes on and ends in a graph of the launch that succeeded after it.
TEST(FailureContainmentTest,
     ARefusedCapturedLaunchLeavesTheCaptureGoingWithTheLaunchesThatSucceed) {
  Containment c(RRT_MODE_PROGRAM);
  std::int32_t copy = -1;
  ASSERT_EQ(rrt_kernel_lookup(c.ctx, "copy", &copy), RRT_OK);
  rrt_tensor_desc_t params[2] = {c.buffer, c.buffer};
  params[0].direction = RRT_DIR_IN;
  params[1].direction = RRT_DIR_OUT;
  const rrt_operand_t operands[2] = {{RRT_OPERAND_PARAM, 0}, {RRT_OPERAND_PARAM, 1}};
  const rrt_task_desc_t task{copy, 2, operands};
  rrt_callable_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.num_params = 2;
  desc.params = params;
  desc.num_tasks = 1;
  desc.tasks = &task;
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(c.ctx, &desc, &id), RRT_OK);
  std::vector<float> host(kContainmentFloats, 3.0F);
  void *out = nullptr;
  ASSERT_EQ(rrt_device_alloc(c.ctx, kContainmentBytes, &out), RRT_OK);
  const rrt_tensor_arg_t tensors[2] = {{host.data(), kContainmentBytes, RRT_SPACE_HOST},
                                       {out, kContainmentBytes, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = run_args(tensors);
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(c.ctx, id, &args, &run), RRT_OK);
  ASSERT_EQ(rrt_device_free(c.ctx, out), RRT_OK);

  rrt_stream_t stream = c.stream();
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  EXPECT_EQ(rrt_run_launch(run, stream), RRT_ERR_INVALID_ARGUMENT);
  // The run stays prepared: it was not launched, and a launch again meets the same check.
  EXPECT_EQ(rrt_run_wait(run), RRT_ERR_INVALID_STATE);
  EXPECT_EQ(rrt_run_launch(run, stream), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK);

  // The same capture goes on, and the callable runs with a live output.
  ASSERT_EQ(rrt_device_alloc(c.ctx, kContainmentBytes, &out), RRT_OK);
  const rrt_tensor_arg_t live[2] = {{host.data(), kContainmentBytes, RRT_SPACE_HOST},
                                    {out, kContainmentBytes, RRT_SPACE_DEVICE}};
  const rrt_run_args_t live_args = run_args(live);
  ASSERT_EQ(rrt_run_prepare(c.ctx, id, &live_args, &run), RRT_OK);
  ASSERT_EQ(rrt_run_launch(run, stream), RRT_OK);
  ASSERT_EQ(rrt_run_finalize(run), RRT_OK);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  std::vector<float> result(kContainmentFloats);
  ASSERT_EQ(rrt_memcpy_d2h(c.ctx, result.data(), out, kContainmentBytes, nullptr), RRT_OK);
  EXPECT_EQ(result, host);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_device_free(c.ctx, out), RRT_OK);
}

TEST(FailureContainmentTest, DeviceFreeWaitsForQueuedWorkThatUsesTheBuffer) {
  Containment c(RRT_MODE_KERNEL);
  rrt_stream_t stream = c.stream();
  ASSERT_EQ(rrt_kernel_launch(c.ctx, c.gated(), &c.args, stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(c.ctx, c.counting(), &c.args, stream), RRT_OK);
  bool blocked = false;
  void *device = c.device;
  c.device = nullptr;
  EXPECT_EQ(blocked_until_gate_opens(
                c, [&] { return rrt_device_free(c.ctx, device); }, &blocked),
            RRT_OK);
  EXPECT_TRUE(blocked) << "the free returned while a queued launch still used the buffer";
  EXPECT_EQ(c.count.load(), 1);
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK);
}

TEST(FailureContainmentTest, AContextProfileWaitsForTheLaunchStillWritingIt) {
  Containment c(RRT_MODE_KERNEL, true);
  rrt_stream_t stream = c.stream();
  ASSERT_EQ(rrt_kernel_launch(c.ctx, c.gated(), &c.args, stream), RRT_OK);
  std::vector<rrt_task_timing_t> timings(4);
  std::uint32_t count = 0;
  bool blocked = false;
  EXPECT_EQ(blocked_until_gate_opens(
                c, [&] { return rrt_context_profile(c.ctx, timings.data(), 4, &count); }, &blocked),
            RRT_OK);
  EXPECT_TRUE(blocked) << "the profile was read while the launch was writing it";
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK);
}

TEST(FailureContainmentTest, AContextFinalizedBeforeAnyInitAcceptsEitherInit) {
  for (const bool kernel : {false, true}) {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = replayrt::testing::test_platform();
    rrt_context_t ctx = nullptr;
    ASSERT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
    ASSERT_EQ(rrt_context_finalize(ctx), RRT_OK);
    if (kernel) {
      rrt_kernel_config_t config{};
      config.struct_size = sizeof config;
      config.context_generation = 0;
      EXPECT_EQ(rrt_kernel_init(ctx, &config), RRT_OK);
    } else {
      EXPECT_EQ(rrt_program_init(ctx), RRT_OK);
    }
    EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
  }
}

TEST(FailureContainmentTest, AFullKernelRegistryIsTheDocumentedInvalidState) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = replayrt::testing::test_platform();
  rrt_context_t ctx = nullptr;
  ASSERT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  rrt_status_t status = RRT_OK;
  for (int i = 0; i < 300 && status == RRT_OK; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "k%d", i);
    std::int32_t id = -1;
    status = replayrt::testing::register_host_kernel(ctx, name, &failing_kernel, nullptr, &id);
  }
  EXPECT_EQ(status, RRT_ERR_INVALID_STATE);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

}  // namespace
