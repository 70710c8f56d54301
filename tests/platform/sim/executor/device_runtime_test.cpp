#include "platform/sim/executor/device_runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
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
