// rrt_device_free against the calls that put work on a buffer: a launch, run or replay
// admitted before the free is waited for, and one admitted after it is refused. The buffers are
// larger than the simulator's quarantine, so a free gives the memory back to the host and work
// that ran on it afterwards would fault (or be reported by AddressSanitizer).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"
#include "test_platform.h"

namespace {

using replayrt::testing::run_args;

// 68 MiB of floats: more than the simulator's 64 MiB quarantine holds.
constexpr std::uint64_t kFloats = std::uint64_t{17} << 20;
constexpr std::uint64_t kBytes = kFloats * sizeof(float);

// out = 2 * in over kFloats floats, in one task.
class ScaleCallable {
 public:
  explicit ScaleCallable(rrt_context_t ctx) {
    for (int i = 0; i < 2; ++i) {
      tensors_[i] = rrt_tensor_desc_t{};
      tensors_[i].dtype = RRT_DTYPE_F32;
      tensors_[i].ndim = 1;
      tensors_[i].shape[0] = kFloats;
      tensors_[i].direction = i == 0 ? RRT_DIR_IN : RRT_DIR_OUT;
      tensors_[i].space = RRT_PARAM_SPACE_DEVICE;
    }
    std::int32_t scale = -1;
    EXPECT_EQ(rrt_kernel_lookup(ctx, "scale", &scale), RRT_OK);
    operands_[0] = {RRT_OPERAND_PARAM, 0};
    operands_[1] = {RRT_OPERAND_PARAM, 1};
    operands_[2] = {RRT_OPERAND_IMMEDIATE, static_cast<std::uint32_t>(rrt_scalar_from_f32(2.0F))};
    task_ = {scale, 3, operands_};
    desc_.struct_size = sizeof desc_;
    desc_.num_params = 2;
    desc_.params = tensors_;
    desc_.num_tasks = 1;
    desc_.tasks = &task_;
  }
  const rrt_callable_desc_t *desc() const { return &desc_; }

 private:
  rrt_tensor_desc_t tensors_[2];
  rrt_operand_t operands_[3];
  rrt_task_desc_t task_{};
  rrt_callable_desc_t desc_{};
};

class DeviceFreeOrderingTest : public ::testing::Test {
 protected:
  void init(rrt_mode_t mode) {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = replayrt::testing::test_platform();
    ASSERT_EQ(rrt_context_create(&options, &ctx_), RRT_OK);
    const ScaleCallable scale(ctx_);
    if (mode == RRT_MODE_KERNEL) {
      rrt_kernel_config_t config{};
      config.struct_size = sizeof config;
      config.context_generation = 0;
      ASSERT_EQ(rrt_capacity_plan_fit(scale.desc(), &config.capacity), RRT_OK);
      ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK);
    } else {
      ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
    }
    ASSERT_EQ(rrt_callable_prepare(ctx_, scale.desc(), &callable_), RRT_OK);
    ASSERT_EQ(rrt_stream_create(ctx_, &stream_), RRT_OK);
    ASSERT_EQ(rrt_device_alloc(ctx_, kBytes, &in_), RRT_OK);
    ASSERT_EQ(rrt_device_alloc(ctx_, kBytes, &out_), RRT_OK);
    tensors_[0] = {in_, kBytes, RRT_SPACE_DEVICE};
    tensors_[1] = {out_, kBytes, RRT_SPACE_DEVICE};
    args_ = run_args(tensors_);
  }

  void TearDown() override {
    if (graph_ != nullptr) {
      EXPECT_EQ(rrt_graph_destroy(graph_), RRT_OK);
    }
    if (stream_ != nullptr) {
      EXPECT_EQ(rrt_stream_destroy(stream_), RRT_OK);
    }
    for (void *buffer : {in_, out_}) {
      if (buffer != nullptr) {
        EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
      }
    }
    if (ctx_ != nullptr) {
      EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK);
    }
  }

  // Calls `enqueue` on another thread until it returns something other than RRT_OK, frees
  // `in_` on this thread once the first call succeeded, and returns the refusal. The enqueuing
  // thread pauses a millisecond between calls, so the free is admitted soon whichever way it is
  // ordered while work keeps arriving during its wait, and it waits for the stream every
  // kQueued calls, so the queue stays short.
  template <typename Enqueue>
  rrt_status_t free_input_while(Enqueue enqueue) {
    constexpr unsigned kQueued = 16;
    std::atomic<bool> started{false};
    rrt_status_t refused = RRT_OK;
    std::thread enqueuing([&] {
      for (unsigned calls = 1;; ++calls) {
        const rrt_status_t status = enqueue();
        if (status != RRT_OK) {
          refused = status;
          return;
        }
        started.store(true, std::memory_order_release);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (calls % kQueued == 0) {
          EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
        }
      }
    });
    while (!started.load(std::memory_order_acquire)) {
      std::this_thread::yield();
    }
    EXPECT_EQ(rrt_device_free(ctx_, in_), RRT_OK);
    in_ = nullptr;
    enqueuing.join();
    EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
    return refused;
  }

  rrt_context_t ctx_ = nullptr;
  std::int32_t callable_ = -1;
  rrt_stream_t stream_ = nullptr;
  rrt_graph_t graph_ = nullptr;
  void *in_ = nullptr;
  void *out_ = nullptr;
  rrt_tensor_arg_t tensors_[2]{};
  rrt_run_args_t args_{};
};

TEST_F(DeviceFreeOrderingTest, AReplayRacingTheFreeRunsBeforeItOrIsRefusedAsStale) {
  init(RRT_MODE_KERNEL);
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, callable_, &args_, stream_), RRT_OK);
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph_), RRT_OK);

  EXPECT_EQ(free_input_while([&] { return rrt_graph_replay(graph_, stream_); }),
            RRT_ERR_STALE_ADDRESS);
}

TEST_F(DeviceFreeOrderingTest, AKernelLaunchRacingTheFreeRunsBeforeItOrIsRefused) {
  init(RRT_MODE_KERNEL);
  EXPECT_EQ(free_input_while([&] { return rrt_kernel_launch(ctx_, callable_, &args_, stream_); }),
            RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(DeviceFreeOrderingTest,
       AKernelLaunchWithTheArgumentsOfAnAcceptedOneIsRefusedOnceATensorIsFreed) {
  init(RRT_MODE_KERNEL);
  ASSERT_EQ(rrt_kernel_launch(ctx_, callable_, &args_, stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, callable_, &args_, stream_), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  ASSERT_EQ(rrt_device_free(ctx_, in_), RRT_OK);
  in_ = nullptr;

  EXPECT_EQ(rrt_kernel_launch(ctx_, callable_, &args_, stream_), RRT_ERR_INVALID_ARGUMENT);
  const std::string message = replayrt::testing::last_error().message;
  EXPECT_NE(message.find("not inside a live device allocation"), std::string::npos) << message;
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK) << "the refused launch enqueued nothing";
}

TEST_F(DeviceFreeOrderingTest, ARunLaunchRacingTheFreeRunsBeforeItOrIsRefused) {
  init(RRT_MODE_PROGRAM);
  // Each run is prepared (its arguments checked) while the previous one executes and launched
  // once that one finished, so the free, which waits for the previous one, lands between the
  // next run's prepare and its launch.
  rrt_run_t launched = nullptr;
  EXPECT_EQ(free_input_while([&] {
              rrt_run_t next = nullptr;
              rrt_status_t status = rrt_run_prepare(ctx_, callable_, &args_, &next);
              if (launched != nullptr) {
                EXPECT_EQ(rrt_run_finalize(launched), RRT_OK);
                launched = nullptr;
              }
              if (status == RRT_OK) {
                status = rrt_run_launch(next, stream_);
                if (status == RRT_OK) {
                  launched = next;
                } else {
                  EXPECT_EQ(rrt_run_finalize(next), RRT_OK);
                }
              }
              return status;
            }),
            RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(DeviceFreeOrderingTest, ARunWhoseDeviceTensorWasFreedIsRefusedAtLaunchAndStaysPrepared) {
  init(RRT_MODE_PROGRAM);
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_, &args_, &run), RRT_OK);
  ASSERT_EQ(rrt_device_free(ctx_, in_), RRT_OK);
  in_ = nullptr;

  EXPECT_EQ(rrt_run_launch(run, stream_), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_run_wait(run), RRT_ERR_INVALID_STATE) << "a refused launch launched nothing";
  EXPECT_EQ(rrt_run_launch(run, nullptr), RRT_ERR_INVALID_ARGUMENT)
      << "a refused launch leaves the run prepared, to be refused again";
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK);
}

}  // namespace
