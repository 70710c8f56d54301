// Capture once, replay many times, through the public C ABI only.
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"
#include "test_platform.h"

namespace {

using replayrt::testing::lookup_kernel;
using replayrt::testing::run_args;
using replayrt::testing::stats_of;

rrt_context_t make_context(unsigned workers = 1) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = replayrt::testing::test_platform();
  options.device_workers = workers;
  rrt_context_t ctx = nullptr;
  EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  return ctx;
}

// out = (in * factor) + in, over `n` floats: two tasks through one intermediate.
class AxpyCallable {
 public:
  AxpyCallable(rrt_context_t ctx, std::uint64_t n, float factor) {
    for (int i = 0; i < 2; ++i) {
      tensors_[i] = rrt_tensor_desc_t{};
      tensors_[i].dtype = RRT_DTYPE_F32;
      tensors_[i].ndim = 1;
      tensors_[i].shape[0] = n;
      tensors_[i].direction = i == 0 ? RRT_DIR_IN : RRT_DIR_OUT;
    }
    intermediate_ = tensors_[0];
    scale_ops_[0] = {RRT_OPERAND_PARAM, 0};
    scale_ops_[1] = {RRT_OPERAND_INTERMEDIATE, 0};
    scale_ops_[2] = {RRT_OPERAND_IMMEDIATE,
                     static_cast<std::uint32_t>(rrt_scalar_from_f32(factor))};
    add_ops_[0] = {RRT_OPERAND_INTERMEDIATE, 0};
    add_ops_[1] = {RRT_OPERAND_PARAM, 0};
    add_ops_[2] = {RRT_OPERAND_PARAM, 1};
    tasks_[0] = {lookup_kernel(ctx, "scale"), 3, scale_ops_};
    tasks_[1] = {lookup_kernel(ctx, "add"), 3, add_ops_};
    desc_.struct_size = sizeof desc_;
    desc_.bind = RRT_BIND_DEVICE_BUILD;
    desc_.num_params = 2;
    desc_.params = tensors_;
    desc_.num_intermediates = 1;
    desc_.intermediates = &intermediate_;
    desc_.num_tasks = 2;
    desc_.tasks = tasks_;
  }
  const rrt_callable_desc_t *desc() const { return &desc_; }

 private:
  rrt_tensor_desc_t tensors_[2];
  rrt_tensor_desc_t intermediate_;
  rrt_operand_t scale_ops_[3];
  rrt_operand_t add_ops_[3];
  rrt_task_desc_t tasks_[2];
  rrt_callable_desc_t desc_{};
};

// A kernel-mode context with a device input and output buffer of `n` floats each.
class KernelModeTest : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kN = 1024;

  void SetUp() override {
    ctx_ = make_context();
    AxpyCallable axpy(ctx_, kN, 2.0F);
    rrt_kernel_config_t config{};
    config.struct_size = sizeof config;
    config.context_generation = 0;
    ASSERT_EQ(rrt_capacity_plan_fit(axpy.desc(), &config.capacity), RRT_OK);
    // Room for a second resident callable.
    config.capacity.runtime_pool_bytes *= 2;
    ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK);
    ASSERT_EQ(rrt_callable_prepare(ctx_, axpy.desc(), &callable_), RRT_OK);
    ASSERT_EQ(rrt_stream_create(ctx_, &stream_), RRT_OK);
    in_ = device_buffer();
    out_ = device_buffer();
  }

  void TearDown() override {
    for (rrt_graph_t graph : graphs_) {
      EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
    }
    EXPECT_EQ(rrt_stream_destroy(stream_), RRT_OK);
    for (void *buffer : buffers_) {
      EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
    }
    EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK);
  }

  void *device_buffer() {
    void *buffer = nullptr;
    EXPECT_EQ(rrt_device_alloc(ctx_, kN * sizeof(float), &buffer), RRT_OK);
    buffers_.push_back(buffer);
    return buffer;
  }

  rrt_graph_t capture(std::int32_t callable, void *in, void *out) {
    const rrt_tensor_arg_t tensors[2] = {{in, kN * 4, RRT_SPACE_DEVICE},
                                         {out, kN * 4, RRT_SPACE_DEVICE}};
    const rrt_run_args_t args = run_args(tensors);
    EXPECT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
    EXPECT_EQ(rrt_kernel_launch(ctx_, callable, &args, stream_), RRT_OK);
    rrt_graph_t graph = nullptr;
    EXPECT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK);
    graphs_.push_back(graph);
    return graph;
  }

  void write(void *device, float base) {
    std::vector<float> host(kN);
    for (std::uint64_t i = 0; i < kN; ++i) {
      host[i] = base + static_cast<float>(i);
    }
    ASSERT_EQ(rrt_memcpy_h2d(ctx_, device, host.data(), kN * 4, nullptr), RRT_OK);
  }

  std::vector<float> read(const void *device) {
    std::vector<float> host(kN);
    EXPECT_EQ(rrt_memcpy_d2h(ctx_, host.data(), device, kN * 4, nullptr), RRT_OK);
    return host;
  }

  // out must equal in * (factor + 1) for in = base + i.
  static void expect_result(const std::vector<float> &out, float base, float factor) {
    for (std::uint64_t i = 0; i < kN; i += 97) {
      ASSERT_FLOAT_EQ(out[i], (base + static_cast<float>(i)) * (factor + 1.0F)) << "element " << i;
    }
  }

  rrt_context_t ctx_ = nullptr;
  rrt_stream_t stream_ = nullptr;
  std::int32_t callable_ = -1;
  void *in_ = nullptr;
  void *out_ = nullptr;
  std::vector<void *> buffers_;
  std::vector<rrt_graph_t> graphs_;
};

TEST_F(KernelModeTest, ReplaysWithNewInputsMatchTheReferenceEveryTime) {
  rrt_graph_t graph = capture(callable_, in_, out_);
  for (int i = 0; i < 200; ++i) {
    write(in_, static_cast<float>(i));
    ASSERT_EQ(rrt_graph_replay(graph, stream_), RRT_OK);
    ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
    expect_result(read(out_), static_cast<float>(i), 2.0F);
  }
  const rrt_stats_t stats = stats_of(ctx_);
  EXPECT_EQ(stats.replays, 200u);
  EXPECT_EQ(stats.regions[RRT_GROWTH_ARENA_GM_HEAP].base_changes, 0u);
}

TEST_F(KernelModeTest, TwoGraphsOfTwoCallablesInterleave) {
  AxpyCallable triple(ctx_, kN, 3.0F);
  std::int32_t second = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, triple.desc(), &second), RRT_OK);
  void *in2 = device_buffer();
  void *out2 = device_buffer();
  rrt_graph_t a = capture(callable_, in_, out_);
  rrt_graph_t b = capture(second, in2, out2);
  for (int i = 0; i < 50; ++i) {
    write(in_, static_cast<float>(i));
    write(in2, static_cast<float>(-i));
    ASSERT_EQ(rrt_graph_replay(i % 2 == 0 ? a : b, stream_), RRT_OK);
    ASSERT_EQ(rrt_graph_replay(i % 2 == 0 ? b : a, stream_), RRT_OK);
    ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
    expect_result(read(out_), static_cast<float>(i), 2.0F);
    expect_result(read(out2), static_cast<float>(-i), 3.0F);
  }
}

TEST_F(KernelModeTest, AReplayAfterARefusedGrowthIsStillCorrect) {
  rrt_graph_t graph = capture(callable_, in_, out_);
  AxpyCallable larger(ctx_, 64 * kN, 2.0F);
  std::int32_t refused_id = -7;
  const rrt_stats_t before = stats_of(ctx_);
  ASSERT_EQ(rrt_callable_prepare(ctx_, larger.desc(), &refused_id), RRT_ERR_INTERNAL);
  EXPECT_EQ(refused_id, -7);
  rrt_error_detail_t detail;
  ASSERT_EQ(rrt_last_error(&detail), RRT_ERR_INTERNAL);
  EXPECT_EQ(detail.growth_point, RRT_GROWTH_ARENA_GM_HEAP);
  EXPECT_EQ(detail.requested_bytes, 64 * kN * 4);
  EXPECT_LT(detail.capacity_bytes, detail.requested_bytes);
  const rrt_stats_t after = stats_of(ctx_);
  EXPECT_EQ(after.device_alloc_calls, before.device_alloc_calls);
  EXPECT_EQ(after.device_free_calls, before.device_free_calls);
  EXPECT_EQ(after.refusals[RRT_GROWTH_ARENA_GM_HEAP],
            before.refusals[RRT_GROWTH_ARENA_GM_HEAP] + 1);
  for (int i = 0; i < 20; ++i) {
    write(in_, static_cast<float>(i) * 0.5F);
    ASSERT_EQ(rrt_graph_replay(graph, stream_), RRT_OK);
    ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
    expect_result(read(out_), static_cast<float>(i) * 0.5F, 2.0F);
  }
}

TEST_F(KernelModeTest, SeveralThreadsLaunchOnOneContext) {
  constexpr int kThreads = 4;
  constexpr int kLaunches = 40;
  std::vector<rrt_stream_t> streams(kThreads);
  std::vector<void *> ins(kThreads);
  std::vector<void *> outs(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(rrt_stream_create(ctx_, &streams[t]), RRT_OK);
    ins[t] = device_buffer();
    outs[t] = device_buffer();
    write(ins[t], static_cast<float>(100 * t));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // HOST staging through the one retained buffer would race if launches overlapped; the
      // context orders them, so every thread sees its own result.
      std::vector<float> host_in(kN);
      std::vector<float> host_out(kN);
      for (int i = 0; i < kLaunches; ++i) {
        const bool host = i % 2 == 1;
        for (std::uint64_t k = 0; k < kN; ++k) {
          host_in[k] = static_cast<float>(100 * t + i) + static_cast<float>(k);
        }
        const rrt_tensor_arg_t tensors[2] = {
            host ? rrt_tensor_arg_t{host_in.data(), kN * 4, RRT_SPACE_HOST}
                 : rrt_tensor_arg_t{ins[t], kN * 4, RRT_SPACE_DEVICE},
            host ? rrt_tensor_arg_t{host_out.data(), kN * 4, RRT_SPACE_HOST}
                 : rrt_tensor_arg_t{outs[t], kN * 4, RRT_SPACE_DEVICE}};
        const rrt_run_args_t args = run_args(tensors);
        if (rrt_kernel_launch(ctx_, callable_, &args, streams[t]) != RRT_OK ||
            rrt_stream_synchronize(streams[t]) != RRT_OK) {
          ++failures;
          continue;
        }
        if (host) {
          for (std::uint64_t k = 0; k < kN; k += 31) {
            if (host_out[k] != host_in[k] * 3.0F) {
              ++failures;
              break;
            }
          }
        }
      }
    });
  }
  for (std::thread &thread : threads) {
    thread.join();
  }
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    expect_result(read(outs[t]), static_cast<float>(100 * t), 2.0F);
    EXPECT_EQ(rrt_stream_destroy(streams[t]), RRT_OK);
  }
  EXPECT_EQ(stats_of(ctx_).launches, static_cast<std::uint64_t>(kThreads * kLaunches));
}

TEST_F(KernelModeTest, ConcurrentReplaysAndLaunchesOnDifferentStreamsStayCorrect) {
  rrt_graph_t graph = capture(callable_, in_, out_);
  rrt_stream_t other = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &other), RRT_OK);
  void *in2 = device_buffer();
  void *out2 = device_buffer();
  write(in_, 1.0F);
  write(in2, 7.0F);
  std::atomic<int> failures{0};
  std::thread replayer([&] {
    for (int i = 0; i < 100; ++i) {
      if (rrt_graph_replay(graph, stream_) != RRT_OK) {
        ++failures;
      }
    }
  });
  const rrt_tensor_arg_t tensors[2] = {{in2, kN * 4, RRT_SPACE_DEVICE},
                                       {out2, kN * 4, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = run_args(tensors);
  for (int i = 0; i < 100; ++i) {
    if (rrt_kernel_launch(ctx_, callable_, &args, other) != RRT_OK) {
      ++failures;
    }
  }
  replayer.join();
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  EXPECT_EQ(rrt_stream_synchronize(other), RRT_OK);
  EXPECT_EQ(failures.load(), 0);
  expect_result(read(out_), 1.0F, 2.0F);
  expect_result(read(out2), 7.0F, 2.0F);
  EXPECT_EQ(rrt_stream_destroy(other), RRT_OK);
}

// ---- the hazard: a program-mode context re-bases a buffer a graph captured ---------------

TEST(ProgramModeHazardTest, AReplayAfterARebaseIsRefusedAsStaleAndEnqueuesNothing) {
  rrt_context_t ctx = make_context();
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  constexpr std::uint64_t kSmall = 256;
  AxpyCallable small(ctx, kSmall, 2.0F);
  AxpyCallable large(ctx, 64 * kSmall, 2.0F);
  std::int32_t small_id = -1;
  std::int32_t large_id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, small.desc(), &small_id), RRT_OK);
  ASSERT_EQ(rrt_callable_prepare(ctx, large.desc(), &large_id), RRT_OK);
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
  void *in = nullptr;
  void *out = nullptr;
  ASSERT_EQ(rrt_device_alloc(ctx, kSmall * 4, &in), RRT_OK);
  ASSERT_EQ(rrt_device_alloc(ctx, kSmall * 4, &out), RRT_OK);
  std::vector<float> host(kSmall, 1.0F);
  ASSERT_EQ(rrt_memcpy_h2d(ctx, in, host.data(), kSmall * 4, nullptr), RRT_OK);

  // Capture a program-mode run of the small callable in pipeline slot 0.
  const rrt_tensor_arg_t tensors[2] = {{in, kSmall * 4, RRT_SPACE_DEVICE},
                                       {out, kSmall * 4, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = run_args(tensors);
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx, small_id, &args, &run), RRT_OK);
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_run_launch(run, stream), RRT_OK);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  ASSERT_EQ(rrt_run_finalize(run), RRT_OK);
  ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  std::vector<float> result(kSmall);
  ASSERT_EQ(rrt_memcpy_d2h(ctx, result.data(), out, kSmall * 4, nullptr), RRT_OK);
  EXPECT_FLOAT_EQ(result[0], 3.0F);

  // A larger run grows slot 0's gm_heap (and runtime pool): program mode re-bases them.
  std::vector<float> big_in(64 * kSmall, 1.0F);
  std::vector<float> big_out(64 * kSmall, 0.0F);
  const rrt_tensor_arg_t big[2] = {{big_in.data(), 64 * kSmall * 4, RRT_SPACE_HOST},
                                   {big_out.data(), 64 * kSmall * 4, RRT_SPACE_HOST}};
  const rrt_run_args_t big_args = run_args(big);
  ASSERT_EQ(rrt_run(ctx, large_id, &big_args), RRT_OK);
  const rrt_stats_t grown = stats_of(ctx);
  EXPECT_GT(grown.regions[RRT_GROWTH_ARENA_GM_HEAP].base_changes, 0u);

  // The graph still names the old addresses: the replay is refused and nothing runs.
  std::fill(result.begin(), result.end(), -5.0F);
  ASSERT_EQ(rrt_memcpy_h2d(ctx, out, result.data(), kSmall * 4, nullptr), RRT_OK);
  ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_ERR_STALE_ADDRESS);
  rrt_error_detail_t detail;
  ASSERT_EQ(rrt_last_error(&detail), RRT_ERR_STALE_ADDRESS);
  EXPECT_NE(std::strstr(detail.message, "rrt_graph_replay"), nullptr) << detail.message;
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  ASSERT_EQ(rrt_memcpy_d2h(ctx, result.data(), out, kSmall * 4, nullptr), RRT_OK);
  EXPECT_FLOAT_EQ(result[0], -5.0F);
  const rrt_stats_t after = stats_of(ctx);
  EXPECT_EQ(after.stale_address_refusals, 1u);
  EXPECT_EQ(after.replays, grown.replays);

  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
  EXPECT_EQ(rrt_device_free(ctx, in), RRT_OK);
  EXPECT_EQ(rrt_device_free(ctx, out), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(ProgramModePipelineTest, TwoThreadsPrepareAndRunInBothSlotsAtOnce) {
  rrt_context_t ctx = make_context(2);
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  constexpr std::uint64_t kN = 4096;
  AxpyCallable axpy(ctx, kN, 2.0F);
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, axpy.desc(), &id), RRT_OK);
  std::atomic<int> failures{0};
  std::atomic<int> busy{0};
  auto worker = [&](float base) {
    rrt_stream_t stream = nullptr;
    if (rrt_stream_create(ctx, &stream) != RRT_OK) {
      ++failures;
      return;
    }
    std::vector<float> in(kN);
    std::vector<float> out(kN);
    for (int i = 0; i < 50; ++i) {
      for (std::uint64_t k = 0; k < kN; ++k) {
        in[k] = base + static_cast<float>(i + k);
      }
      const rrt_tensor_arg_t tensors[2] = {{in.data(), kN * 4, RRT_SPACE_HOST},
                                           {out.data(), kN * 4, RRT_SPACE_HOST}};
      const rrt_run_args_t args = run_args(tensors);
      rrt_run_t run = nullptr;
      const rrt_status_t prepared = rrt_run_prepare(ctx, id, &args, &run);
      if (prepared == RRT_ERR_INVALID_STATE) {
        ++busy;  // both slots held by the other thread's runs: retry
        --i;
        std::this_thread::yield();
        continue;
      }
      if (prepared != RRT_OK || rrt_run_launch(run, stream) != RRT_OK ||
          rrt_run_wait(run) != RRT_OK || rrt_run_finalize(run) != RRT_OK) {
        ++failures;
        continue;
      }
      for (std::uint64_t k = 0; k < kN; k += 101) {
        if (out[k] != in[k] * 3.0F) {
          ++failures;
          break;
        }
      }
    }
    (void)rrt_stream_destroy(stream);
  };
  std::thread a(worker, 0.0F);
  std::thread b(worker, 5000.0F);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

}  // namespace

namespace {

// A user kernel that holds its worker until the test opens the gate.
int gated_kernel(const rrt_kernel_args_t *, void *user) {
  auto *gate = static_cast<std::atomic<bool> *>(user);
  while (!gate->load(std::memory_order_acquire)) {
    std::this_thread::yield();
  }
  return 0;
}

TEST(KernelLaunchTest, ALaunchReturnsWithoutWaitingForTheDevice) {
  rrt_context_t ctx = make_context();
  std::atomic<bool> gate{false};
  std::int32_t gated = -1;
  ASSERT_EQ(replayrt::testing::register_host_kernel(ctx, "gated", &gated_kernel, &gate, &gated),
            RRT_OK);
  rrt_tensor_desc_t buffer{};
  buffer.dtype = RRT_DTYPE_F32;
  buffer.ndim = 1;
  buffer.shape[0] = 16;
  buffer.direction = RRT_DIR_INOUT;
  const rrt_operand_t operand{RRT_OPERAND_PARAM, 0};
  const rrt_task_desc_t task{gated, 1, &operand};
  rrt_callable_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.num_params = 1;
  desc.params = &buffer;
  desc.num_tasks = 1;
  desc.tasks = &task;
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = 0;
  ASSERT_EQ(rrt_capacity_plan_fit(&desc, &config.capacity), RRT_OK);
  ASSERT_EQ(rrt_kernel_init(ctx, &config), RRT_OK);
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, &desc, &id), RRT_OK);
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
  void *device = nullptr;
  ASSERT_EQ(rrt_device_alloc(ctx, 64, &device), RRT_OK);
  const rrt_tensor_arg_t tensor{device, 64, RRT_SPACE_DEVICE};
  const rrt_run_args_t args = run_args({&tensor, 1});

  // Both launches return while the first is still held on the device: a launch enqueues and
  // never synchronizes. A launch that waited would be released only by the watchdog, which
  // opens the gate if the launches have not returned after a generous delay (a liveness
  // bound, not a timing expectation), and the check below would then fail.
  std::atomic<bool> returned{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 500 && !returned.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    gate.store(true, std::memory_order_release);
  });
  ASSERT_EQ(rrt_kernel_launch(ctx, id, &args, stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx, id, &args, stream), RRT_OK);
  const bool held_on_device = !gate.load(std::memory_order_acquire);
  returned.store(true);
  watchdog.join();
  EXPECT_TRUE(held_on_device) << "rrt_kernel_launch waited for the device";
  EXPECT_EQ(stats_of(ctx).launches, 2u);
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);

  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
  EXPECT_EQ(rrt_device_free(ctx, device), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

// A user kernel that records that it ran.
int marking_kernel(const rrt_kernel_args_t *, void *user) {
  static_cast<std::atomic<bool> *>(user)->store(true, std::memory_order_release);
  return 0;
}

// Kernel-mode launches on different streams share gm_heap, gm_sm and staging, so the second
// must not start while the first is held on the device.
TEST(KernelLaunchTest, ALaunchOnAnotherStreamWaitsForThePreviousLaunch) {
  rrt_context_t ctx = make_context();
  std::atomic<bool> gate{false};
  std::atomic<bool> marked{false};
  std::int32_t gated = -1;
  std::int32_t marking = -1;
  ASSERT_EQ(replayrt::testing::register_host_kernel(ctx, "gated", &gated_kernel, &gate, &gated),
            RRT_OK);
  ASSERT_EQ(
      replayrt::testing::register_host_kernel(ctx, "marking", &marking_kernel, &marked, &marking),
      RRT_OK);
  rrt_tensor_desc_t buffer{};
  buffer.dtype = RRT_DTYPE_F32;
  buffer.ndim = 1;
  buffer.shape[0] = 16;
  buffer.direction = RRT_DIR_INOUT;
  const rrt_operand_t operand{RRT_OPERAND_PARAM, 0};
  const rrt_task_desc_t tasks[2] = {{gated, 1, &operand}, {marking, 1, &operand}};
  rrt_callable_desc_t descs[2]{};
  for (int i = 0; i < 2; ++i) {
    descs[i].struct_size = sizeof descs[i];
    descs[i].num_params = 1;
    descs[i].params = &buffer;
    descs[i].num_tasks = 1;
    descs[i].tasks = &tasks[i];
  }
  const rrt_callable_desc_t *both[2] = {&descs[0], &descs[1]};
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = 0;
  ASSERT_EQ(rrt_capacity_plan_fit_all(both, 2, &config.capacity), RRT_OK);
  ASSERT_EQ(rrt_kernel_init(ctx, &config), RRT_OK);
  std::int32_t ids[2] = {-1, -1};
  ASSERT_EQ(rrt_callable_prepare(ctx, &descs[0], &ids[0]), RRT_OK);
  ASSERT_EQ(rrt_callable_prepare(ctx, &descs[1], &ids[1]), RRT_OK);
  rrt_stream_t streams[2] = {nullptr, nullptr};
  ASSERT_EQ(rrt_stream_create(ctx, &streams[0]), RRT_OK);
  ASSERT_EQ(rrt_stream_create(ctx, &streams[1]), RRT_OK);
  void *device = nullptr;
  ASSERT_EQ(rrt_device_alloc(ctx, 64, &device), RRT_OK);
  const rrt_tensor_arg_t tensor{device, 64, RRT_SPACE_DEVICE};
  const rrt_run_args_t args = run_args({&tensor, 1});

  ASSERT_EQ(rrt_kernel_launch(ctx, ids[0], &args, streams[0]), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx, ids[1], &args, streams[1]), RRT_OK);
  // An unordered second launch runs at once on its own stream's executor.
  for (int i = 0; i < 20 && !marked.load(std::memory_order_acquire); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(marked.load(std::memory_order_acquire))
      << "the launch on the second stream ran while the first was held";
  gate.store(true, std::memory_order_release);
  ASSERT_EQ(rrt_stream_synchronize(streams[1]), RRT_OK);
  EXPECT_TRUE(marked.load(std::memory_order_acquire));
  ASSERT_EQ(rrt_stream_synchronize(streams[0]), RRT_OK);

  EXPECT_EQ(rrt_stream_destroy(streams[0]), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(streams[1]), RRT_OK);
  EXPECT_EQ(rrt_device_free(ctx, device), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

}  // namespace
