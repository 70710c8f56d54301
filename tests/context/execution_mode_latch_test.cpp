#include "context/execution_mode_latch.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace replayrt {
namespace {

TEST(ExecutionModeLatchTest, ModeValuesArePinned) {
  static_assert(static_cast<std::uint32_t>(ExecutionMode::kProgram) == 0);
  static_assert(static_cast<std::uint32_t>(ExecutionMode::kKernel) == 1);
  EXPECT_EQ(static_cast<int>(ExecutionMode::kProgram), RRT_MODE_PROGRAM);
  EXPECT_EQ(static_cast<int>(ExecutionMode::kKernel), RRT_MODE_KERNEL);
}

TEST(ExecutionModeLatchTest, StartsUnlatched) {
  const ExecutionModeLatch latch;
  EXPECT_FALSE(latch.is_latched());
  EXPECT_FALSE(latch.is_kernel());
}

TEST(ExecutionModeLatchTest, LatchingIsIdempotentForTheHeldMode) {
  for (const ExecutionMode mode : {ExecutionMode::kProgram, ExecutionMode::kKernel}) {
    ExecutionModeLatch latch;
    ASSERT_TRUE(latch.latch(mode).is_ok());
    ASSERT_TRUE(latch.latch(mode).is_ok());
    EXPECT_TRUE(latch.is_latched());
    EXPECT_EQ(latch.latched_mode(), mode);
    EXPECT_EQ(latch.is_kernel(), mode == ExecutionMode::kKernel);
  }
}

TEST(ExecutionModeLatchTest, ModesAreMutuallyExclusiveInBothDirections) {
  ExecutionModeLatch program;
  ASSERT_TRUE(program.latch(ExecutionMode::kProgram).is_ok());
  const Status to_kernel = program.latch(ExecutionMode::kKernel);
  EXPECT_EQ(to_kernel.code(), RRT_ERR_INVALID_STATE);
  EXPECT_NE(to_kernel.message().find("PROGRAM"), std::string::npos) << to_kernel.message();
  EXPECT_EQ(program.latched_mode(), ExecutionMode::kProgram);

  ExecutionModeLatch kernel;
  ASSERT_TRUE(kernel.latch(ExecutionMode::kKernel).is_ok());
  EXPECT_EQ(kernel.latch(ExecutionMode::kProgram).code(), RRT_ERR_INVALID_STATE);
  EXPECT_TRUE(kernel.is_kernel());
}

TEST(ExecutionModeLatchTest, ConcurrentConflictingLatchesHaveExactlyOneWinner) {
  for (int round = 0; round < 50; ++round) {
    ExecutionModeLatch latch;
    std::atomic<int> kernel_wins{0};
    std::atomic<int> program_wins{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        const ExecutionMode mode = t % 2 == 0 ? ExecutionMode::kKernel : ExecutionMode::kProgram;
        if (latch.latch(mode).is_ok()) {
          (mode == ExecutionMode::kKernel ? kernel_wins : program_wins).fetch_add(1);
        }
      });
    }
    for (std::thread &thread : threads) {
      thread.join();
    }
    // Both threads of the winning mode succeed (idempotent), none of the other.
    EXPECT_TRUE((kernel_wins == 2 && program_wins == 0) || (kernel_wins == 0 && program_wins == 2));
    EXPECT_EQ(latch.is_kernel(), kernel_wins == 2);
  }
}

}  // namespace
}  // namespace replayrt
