// The sim executor reads the task-graph image and the scheduler state from device memory,
// which in the simulator is host memory. An image or state whose indices disagree with its
// counts must end the launch with RRT_ERR_KERNEL_FAILED: never a hang and never a read or
// write outside the image's arrays.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "platform/launch/task_graph_image.h"
#include "platform/sim/executor/device_runtime.h"
#include "platform/sim/executor/device_runtime_fixture.h"
#include "support/callable_builder.h"

namespace replayrt {
namespace {

using sim::DeviceRuntime;
using testing::CallableBuilder;
using testing::f32;
using testing::inter;
using testing::param;

// A hang leaves a thread spinning on the fixture's memory, so the process ends at once instead
// of letting the fixture free what that thread reads.
constexpr auto kDeadline = std::chrono::seconds(20);

class CorruptedImageTest : public testing::DeviceRuntimeTest {
 protected:
  // copy param 0 -> intermediate 0 -> param 1: two tasks, one edge.
  void place_chain(bool host_seed = false) {
    CallableBuilder b;
    b.param(f32({4})).param(f32({4}, RRT_DIR_OUT)).intermediate(f32({4}));
    b.task(testing::kCopy, {param(0), inter(0)});
    b.task(testing::kCopy, {inter(0), param(1)});
    place(b, host_seed);
  }

  TaskGraphHeader *image() const { return static_cast<TaskGraphHeader *>(image_); }
  TaskRecord *task(std::uint32_t t) const {
    auto *base = static_cast<std::byte *>(image_);
    return reinterpret_cast<TaskRecord *>(base + image()->tasks_offset) + t;
  }
  std::uint32_t *successors() const {
    auto *base = static_cast<std::byte *>(image_);
    return reinterpret_cast<std::uint32_t *>(base + image()->successors_offset);
  }
  SchedulerStateHeader *seed() const {
    return reinterpret_cast<SchedulerStateHeader *>(image()->scheduler_seed);
  }
  std::uint32_t *seed_ready() const {
    return reinterpret_cast<std::uint32_t *>(reinterpret_cast<std::byte *>(seed()) +
                                             scheduler_ready_offset(image()->num_tasks));
  }

  // Runs the launch on `workers` workers and fails the test (ending the process) when it
  // does not return within kDeadline.
  Status run_bounded(unsigned workers) {
    DeviceRuntime runtime(kernels_, workers);
    std::packaged_task<Status()> launch([&] {
      return run({{in_.data(), 16, RRT_SPACE_HOST}, {out_.data(), 16, RRT_SPACE_HOST}}, runtime);
    });
    std::future<Status> done = launch.get_future();
    std::thread thread(std::move(launch));
    if (done.wait_for(kDeadline) != std::future_status::ready) {
      std::fprintf(stderr, "the launch did not return within %lld s: the executor hangs\n",
                   static_cast<long long>(kDeadline.count()));
      std::fflush(stderr);
      std::_Exit(EXIT_FAILURE);
    }
    thread.join();
    return done.get();
  }

  void expect_rejected(const char *what, unsigned workers = 1) {
    const Status status = run_bounded(workers);
    EXPECT_EQ(status.code(), RRT_ERR_KERNEL_FAILED) << status.message();
    EXPECT_NE(status.message().find(what), std::string::npos) << status.message();
  }

  std::vector<float> in_ = {1, 2, 3, 4};
  std::vector<float> out_ = std::vector<float>(4, -1.0F);
};

TEST_F(CorruptedImageTest, TheIntactChainRuns) {
  place_chain();
  ASSERT_TRUE(run_bounded(2).is_ok());
  EXPECT_EQ(out_, in_);
}

TEST_F(CorruptedImageTest, ASuccessorIndexPastTheTasksIsRejected) {
  place_chain();
  successors()[0] = image()->num_tasks;  // one past remaining[], into the ready queue
  expect_rejected("successor");
}

TEST_F(CorruptedImageTest, ASuccessorRangePastTheEdgesIsRejected) {
  place_chain();
  task(0)->first_successor = 0x80000000U;
  expect_rejected("successor");
}

TEST_F(CorruptedImageTest, AnOperandRangeThatWrapsAroundIsRejected) {
  place_chain();
  task(0)->first_operand = 0xFFFFFFFFU;  // first + count wraps to 1 in 32 bits
  expect_rejected("operand");
}

TEST_F(CorruptedImageTest, AnOperandRangePastTheOperandsIsRejected) {
  place_chain();
  task(1)->first_operand = image()->num_operands - 1;
  expect_rejected("operand");
}

TEST_F(CorruptedImageTest, PredecessorCountsThatNeverReachZeroAreRejected) {
  place_chain();
  task(1)->num_predecessors = 2;  // only one edge leads to it: it never becomes ready
  expect_rejected("never become ready", 2);
}

TEST_F(CorruptedImageTest, ASeedReadySlotNamingNoTaskIsRejected) {
  place_chain(/*host_seed=*/true);
  seed_ready()[0] = image()->num_tasks + 100;
  expect_rejected("task index");
}

TEST_F(CorruptedImageTest, ASeedWithMoreReadyTasksThanTasksIsRejected) {
  place_chain(/*host_seed=*/true);
  seed()->next_push = image()->num_tasks + 5;
  expect_rejected("scheduler seed");
}

TEST_F(CorruptedImageTest, ASectionOutsideTheImageIsRejected) {
  place_chain();
  image()->successors_offset = image()->image_bytes;
  expect_rejected("outside the image");
}

}  // namespace
}  // namespace replayrt
