#include "platform/sim/executor/device_runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "platform/sim/executor/device_runtime_fixture.h"
#include "support/callable_builder.h"

namespace replayrt {
namespace {

using sim::DeviceRuntime;
using testing::CallableBuilder;
using testing::DeviceRuntimeTest;
using testing::f32;
using testing::imm_f32;
using testing::inter;
using testing::param;

TEST_F(DeviceRuntimeTest, RunsAChainFromDeviceMemory) {
  CallableBuilder b;
  b.param(f32({8})).param(f32({8}, RRT_DIR_OUT)).intermediate(f32({8}));
  b.task(testing::kScale, {param(0), inter(0), imm_f32(3.0F)});
  b.task(testing::kAdd, {inter(0), param(0), param(1)});
  place(b);
  std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> out(8, -1.0F);
  DeviceRuntime runtime(kernels_, 1);
  ASSERT_TRUE(
      run({{in.data(), 32, RRT_SPACE_HOST}, {out.data(), 32, RRT_SPACE_HOST}}, runtime).is_ok());
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_FLOAT_EQ(out[i], 4.0F * in[i]);
  }
}

// An executable another executor prepared (here: a type the simulator does not know).
class ForeignExecutable final : public PreparedExecutable {};

TEST_F(DeviceRuntimeTest, AnExecutableAnotherExecutorPreparedIsRefusedAndNothingIsEnqueued) {
  DeviceRuntime runtime(kernels_, 1);
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(device_.create_stream(&stream).is_ok());
  const ForeignExecutable foreign;
  const std::byte invocation[8]{};
  LaunchBinding binding;
  binding.invocation = invocation;
  const Status refused = runtime.enqueue(*stream, foreign, binding);
  EXPECT_EQ(refused.code(), RRT_ERR_INVALID_ARGUMENT) << refused.message();
  EXPECT_NE(refused.message().find("another executor prepared"), std::string::npos)
      << refused.message();
  const Status drained = stream->synchronize();
  EXPECT_TRUE(drained.is_ok()) << "the refused launch reached the stream: " << drained.message();
}

TEST_F(DeviceRuntimeTest, WorkerCountDoesNotChangeResults) {
  CallableBuilder b;
  b.param(f32({64})).param(f32({64}, RRT_DIR_OUT));
  for (std::uint32_t i = 0; i < 32; ++i) {
    b.intermediate(f32({64}));
    b.task(testing::kScale, {param(0), inter(i), imm_f32(static_cast<float>(i))});
  }
  b.intermediate(f32({64}));
  b.task(testing::kCopy, {inter(0), inter(32)});
  for (std::uint32_t i = 1; i < 32; ++i) {
    b.task(testing::kAdd, {inter(32), inter(i), inter(32)});
  }
  b.task(testing::kCopy, {inter(32), param(1)});
  place(b, /*host_seed=*/true);
  std::vector<float> in(64);
  for (std::size_t i = 0; i < in.size(); ++i) {
    in[i] = static_cast<float>(i);
  }
  for (const unsigned workers : {1u, 2u, 4u}) {
    DeviceRuntime runtime(kernels_, workers);
    EXPECT_EQ(runtime.workers(), workers);
    for (int repeat = 0; repeat < 20; ++repeat) {
      std::vector<float> out(64, -1.0F);
      ASSERT_TRUE(
          run({{in.data(), 256, RRT_SPACE_HOST}, {out.data(), 256, RRT_SPACE_HOST}}, runtime)
              .is_ok());
      for (std::size_t i = 0; i < 64; ++i) {
        ASSERT_FLOAT_EQ(out[i], 496.0F * in[i]) << "workers " << workers << " element " << i;
      }
    }
  }
}

// Counts its task's arrival in `user` (a std::atomic<int>) and returns 0 once `kRendezvous`
// tasks arrived, or 1 when they did not within 10 s: the tasks ran one after another.
constexpr int kRendezvous = 2;
int rendezvous(const rrt_kernel_args_t *, void *user) {
  auto &arrived = *static_cast<std::atomic<int> *>(user);
  arrived.fetch_add(1);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (arrived.load() < kRendezvous) {
    if (std::chrono::steady_clock::now() >= give_up) {
      return 1;
    }
    std::this_thread::yield();
  }
  return 0;
}

TEST_F(DeviceRuntimeTest, IndependentTasksWakeTheHelpersAndRunAtTheSameTime) {
  std::atomic<int> arrived{0};
  std::int32_t meet = -1;
  ASSERT_TRUE(
      kernels_.add(KernelEntry{"rendezvous", &rendezvous, &arrived, 1, 0, 0}, &meet).is_ok());
  CallableBuilder b;
  b.param(f32({4}));
  for (int task = 0; task < kRendezvous; ++task) {
    b.task(meet, {param(0)});
  }
  place(b);
  std::vector<float> in(4, 1.0F);
  DeviceRuntime runtime(kernels_, kRendezvous);
  for (int repeat = 0; repeat < 5; ++repeat) {
    arrived.store(0);
    const Status status = run({{in.data(), 16, RRT_SPACE_HOST}}, runtime);
    ASSERT_TRUE(status.is_ok()) << "repeat " << repeat << ": " << status.message();
  }
}

// A kernel whose task divides into kSharedParts parts. Each part counts itself, notes its
// thread, and waits (up to 10 s) until some part has run on another thread. A part on the
// thread that started the run's first part (the worker that shares the task: it claims right
// after publishing, while a joiner is still waking) then counts itself done at once; a part on
// any other thread lingers first. The sharing worker therefore runs out of parts to claim while
// a joiner still runs one, so a task completed before its last part shows every time. Calling
// the kernel whole counts a whole call instead.
constexpr std::uint64_t kSharedParts = 8;
struct SharedPartsLog {
  std::atomic<int> whole_calls{0};
  std::atomic<int> parts_started{0};
  std::atomic<int> parts_done{0};
  std::atomic<bool> met_another_thread{true};
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::thread::id first_thread;  // guarded by mutex: the thread of the run's first part

  std::size_t thread_count() {
    const std::lock_guard<std::mutex> lock(mutex);
    return threads.size();
  }
};
SharedPartsLog g_shared_parts;

int whole_call(const rrt_kernel_args_t *, void *) {
  g_shared_parts.whole_calls.fetch_add(1);
  return 0;
}

std::uint64_t shared_part_count(const rrt_kernel_args_t *) {
  return kSharedParts;
}

void run_shared_parts(const rrt_kernel_args_t *, std::uint64_t first, std::uint64_t end,
                      std::uint64_t count) {
  EXPECT_EQ(count, kSharedParts);
  for (std::uint64_t part = first; part < end; ++part) {
    g_shared_parts.parts_started.fetch_add(1);
    bool on_first_thread = false;
    {
      const std::lock_guard<std::mutex> lock(g_shared_parts.mutex);
      g_shared_parts.threads.insert(std::this_thread::get_id());
      if (g_shared_parts.first_thread == std::thread::id()) {
        g_shared_parts.first_thread = std::this_thread::get_id();
      }
      on_first_thread = g_shared_parts.first_thread == std::this_thread::get_id();
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (g_shared_parts.thread_count() < 2) {
      if (std::chrono::steady_clock::now() >= give_up) {
        g_shared_parts.met_another_thread.store(false);
        break;
      }
      std::this_thread::yield();
    }
    if (!on_first_thread) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    g_shared_parts.parts_done.fetch_add(1);
  }
}

// Returns 0 when every part of the divided task before it was done, 1 otherwise.
int every_part_done(const rrt_kernel_args_t *, void *) {
  return g_shared_parts.parts_done.load() % static_cast<int>(kSharedParts) == 0 ? 0 : 1;
}

class DividedTaskTest : public DeviceRuntimeTest {
 protected:
  void SetUp() override {
    g_shared_parts.whole_calls.store(0);
    g_shared_parts.parts_started.store(0);
    g_shared_parts.parts_done.store(0);
    g_shared_parts.met_another_thread.store(true);
    g_shared_parts.threads.clear();
    KernelEntry divided{"divided", &whole_call, nullptr, 1, 0, 1};
    divided.host_parts = HostKernelParts{&shared_part_count, &run_shared_parts};
    std::int32_t divided_id = -1;
    std::int32_t check_id = -1;
    ASSERT_TRUE(kernels_.add(divided, &divided_id).is_ok());
    ASSERT_TRUE(
        kernels_.add(KernelEntry{"every_part_done", &every_part_done, nullptr, 1, 0, 0}, &check_id)
            .is_ok());
    // The check reads what the divided task writes, so it runs after that task completed.
    CallableBuilder b;
    b.param(f32({4}, RRT_DIR_INOUT));
    b.task(divided_id, {param(0)});
    b.task(check_id, {param(0)});
    place(b);
  }

  Status run_once(DeviceRuntime &runtime) {
    {
      const std::lock_guard<std::mutex> lock(g_shared_parts.mutex);
      g_shared_parts.first_thread = std::thread::id();
    }
    return run({{in_.data(), 16, RRT_SPACE_HOST}}, runtime);
  }

  std::vector<float> in_ = std::vector<float>(4, 1.0F);
};

TEST_F(DividedTaskTest, ADividedTaskRunsItsPartsOnSeveralWorkersAndCompletesAfterTheLast) {
  DeviceRuntime runtime(kernels_, 2);
  constexpr int kRepeats = 3;
  for (int repeat = 0; repeat < kRepeats; ++repeat) {
    const Status status = run_once(runtime);
    ASSERT_TRUE(status.is_ok()) << "repeat " << repeat << ": " << status.message();
  }
  EXPECT_EQ(g_shared_parts.whole_calls.load(), 0);
  EXPECT_EQ(g_shared_parts.parts_started.load(), kRepeats * static_cast<int>(kSharedParts))
      << "every part runs exactly once";
  EXPECT_TRUE(g_shared_parts.met_another_thread.load())
      << "the parts ran one after another on one worker";
  EXPECT_GE(g_shared_parts.thread_count(), 2u);
}

TEST_F(DividedTaskTest, OneWorkerRunsTheKernelWhole) {
  DeviceRuntime runtime(kernels_, 1);
  ASSERT_TRUE(run_once(runtime).is_ok());
  EXPECT_EQ(g_shared_parts.whole_calls.load(), 1);
  EXPECT_EQ(g_shared_parts.parts_started.load(), 0);
}

int fail_with_seven(const rrt_kernel_args_t *, void *) {
  return 7;
}

TEST_F(DeviceRuntimeTest, AKernelFailureNamesTheTaskAndSkipsItsDependents) {
  std::int32_t failing = -1;
  ASSERT_TRUE(
      kernels_.add(KernelEntry{"explode", &fail_with_seven, nullptr, 1, 0, 1}, &failing).is_ok());
  CallableBuilder b;
  b.param(f32({4})).param(f32({4}, RRT_DIR_OUT)).intermediate(f32({4}));
  b.task(testing::kCopy, {param(0), inter(0)});
  b.task(failing, {inter(0)});
  b.task(testing::kCopy, {inter(0), param(1)});
  place(b);
  std::vector<float> in = {1, 2, 3, 4};
  std::vector<float> out(4, -1.0F);
  DeviceRuntime runtime(kernels_, 1);
  const Status status =
      run({{in.data(), 16, RRT_SPACE_HOST}, {out.data(), 16, RRT_SPACE_HOST}}, runtime);
  EXPECT_EQ(status.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(status.message().find("task 1 (kernel 'explode') failed with code 7"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(out[0], -1.0F);
}

TEST_F(DeviceRuntimeTest, AFreedImageIsDetectedInsteadOfExecuted) {
  CallableBuilder b;
  b.param(f32({4})).param(f32({4}, RRT_DIR_OUT));
  b.task(testing::kCopy, {param(0), param(1)});
  place(b);
  ASSERT_TRUE(device_.free(image_).is_ok());
  allocations_.erase(std::find(allocations_.begin(), allocations_.end(), image_));
  std::vector<float> in(4, 1.0F);
  std::vector<float> out(4, -1.0F);
  DeviceRuntime runtime(kernels_, 1);
  const Status status =
      run({{in.data(), 16, RRT_SPACE_HOST}, {out.data(), 16, RRT_SPACE_HOST}}, runtime);
  EXPECT_EQ(status.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(status.message().find("no task-graph image"), std::string::npos) << status.message();
  EXPECT_EQ(out[0], -1.0F);
}

TEST_F(DeviceRuntimeTest, AReplacedImageIsDetectedInsteadOfExecuted) {
  CallableBuilder b;
  b.param(f32({4})).param(f32({4}, RRT_DIR_OUT));
  b.task(testing::kCopy, {param(0), param(1)});
  place(b);
  std::vector<float> in(4, 1.0F);
  std::vector<float> out(4, -1.0F);
  DeviceRuntime runtime(kernels_, 1);
  const Status status = run({{in.data(), 16, RRT_SPACE_HOST}, {out.data(), 16, RRT_SPACE_HOST}},
                            runtime, /*generation=*/12);
  EXPECT_EQ(status.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(status.message().find("was replaced"), std::string::npos) << status.message();
}

TEST_F(DeviceRuntimeTest, MisalignedInvocationBytesAreAccepted) {
  CallableBuilder b;
  b.param(f32({4})).param(f32({4}, RRT_DIR_OUT));
  b.task(testing::kCopy, {param(0), param(1)});
  place(b);
  std::vector<float> in = {5, 6, 7, 8};
  std::vector<float> out(4, 0.0F);
  const std::vector<TensorArg> tensors = {{in.data(), 16, RRT_SPACE_HOST},
                                          {out.data(), 16, RRT_SPACE_HOST}};
  BindRequest request;
  request.callable = callable_.get();
  request.callable_id = 3;
  request.generation = 11;
  request.args = RunArgsView{tensors, {}};
  std::vector<void *> addresses = {in.data(), out.data()};
  BoundRun bound;
  encode_invocation(request, ExecutionMode::kProgram, image_, addresses, &bound);
  std::vector<std::byte> shifted(bound.invocation_bytes + 1);
  std::memcpy(shifted.data() + 1, bound.invocation.data(), bound.invocation_bytes);
  DeviceRuntime runtime(kernels_, 1);
  ASSERT_TRUE(DeviceRuntime::entry(&runtime, shifted.data() + 1, bound.invocation_bytes).is_ok());
  EXPECT_EQ(out, in);
}

}  // namespace
}  // namespace replayrt
