#include "support/fault_injecting_device.h"

#include <memory>
#include <new>

#include <gtest/gtest.h>

#include "platform/sim/sim_device.h"

namespace replayrt {
namespace {

class FaultInjectingDeviceTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (void *ptr : live_) {
      EXPECT_TRUE(faults_.free(ptr).is_ok());
    }
  }
  void *allocate(std::size_t bytes) {
    void *ptr = faults_.allocate(bytes);
    if (ptr != nullptr) {
      live_.push_back(ptr);
    }
    return ptr;
  }

  sim::SimDevice device_;
  FaultInjectingDevice faults_{device_};
  std::vector<void *> live_;
};

TEST_F(FaultInjectingDeviceTest, ForwardsWhenUnarmed) {
  EXPECT_NE(allocate(1024), nullptr);
  EXPECT_EQ(faults_.allocation_attempts(), 1u);
  EXPECT_EQ(faults_.injected_failures(), 0u);
  EXPECT_EQ(device_.memory_counters().allocation_calls, 1u);
}

TEST_F(FaultInjectingDeviceTest, FailsTheNthAllocationFromNowOnce) {
  EXPECT_NE(allocate(1024), nullptr);
  faults_.fail_nth_allocation(2);
  EXPECT_NE(allocate(1024), nullptr);
  EXPECT_EQ(allocate(1024), nullptr);
  EXPECT_NE(allocate(1024), nullptr);
  EXPECT_EQ(faults_.injected_failures(), 1u);
  EXPECT_EQ(device_.memory_counters().allocation_calls, 3u);
}

TEST_F(FaultInjectingDeviceTest, ThrowsOnTheNthAllocation) {
  faults_.throw_on_nth_allocation(1);
  EXPECT_THROW(faults_.allocate(1024), std::bad_alloc);
  EXPECT_NE(allocate(1024), nullptr);
  EXPECT_EQ(device_.memory_counters().allocation_calls, 1u);
}

TEST_F(FaultInjectingDeviceTest, FailsEveryAllocationBeyondALiveByteBudget) {
  faults_.fail_beyond_live_bytes(4096);
  EXPECT_NE(allocate(2048), nullptr);
  EXPECT_NE(allocate(2048), nullptr);
  EXPECT_EQ(allocate(1), nullptr);
  EXPECT_EQ(allocate(1), nullptr);
  ASSERT_TRUE(faults_.free(live_.back()).is_ok());
  live_.pop_back();
  EXPECT_NE(allocate(1024), nullptr);
  faults_.clear_faults();
  EXPECT_NE(allocate(1 << 20), nullptr);
}

TEST_F(FaultInjectingDeviceTest, ForwardsMemoryOperations) {
  void *const ptr = allocate(1024);
  const int value = 7;
  ASSERT_TRUE(faults_.copy_host_to_device(ptr, &value, sizeof value).is_ok());
  int back = 0;
  ASSERT_TRUE(faults_.copy_device_to_host(&back, ptr, sizeof back).is_ok());
  EXPECT_EQ(back, 7);
  EXPECT_TRUE(faults_.find_allocation(ptr).has_value());
  EXPECT_EQ(faults_.memory_counters().allocation_calls, 1u);
}

// The Nth enqueue from arming, counted over every stream the device created, fails without
// reaching its stream; the others run.
TEST_F(FaultInjectingDeviceTest, FailsTheNthEnqueueOverAllItsStreamsOnce) {
  void *const ptr = allocate(1024);
  std::unique_ptr<Stream> first;
  std::unique_ptr<Stream> second;
  ASSERT_TRUE(faults_.create_stream(&first).is_ok());
  ASSERT_TRUE(faults_.create_stream(&second).is_ok());
  const int one = 1;
  const int two = 2;
  faults_.fail_nth_enqueue(2);
  EXPECT_TRUE(first->enqueue_copy_host_to_device(ptr, &one, sizeof one).is_ok());
  const Status failed = second->enqueue_copy_host_to_device(ptr, &two, sizeof two);
  EXPECT_EQ(failed.code(), RRT_ERR_INTERNAL);
  EXPECT_TRUE(first->synchronize().is_ok());
  EXPECT_TRUE(second->synchronize().is_ok()) << "an injected enqueue failure is not sticky";
  int back = 0;
  ASSERT_TRUE(faults_.copy_device_to_host(&back, ptr, sizeof back).is_ok());
  EXPECT_EQ(back, 1) << "the failed copy reached the device";
  EXPECT_TRUE(second->enqueue_copy_host_to_device(ptr, &two, sizeof two).is_ok());
  EXPECT_TRUE(second->synchronize().is_ok());
  EXPECT_EQ(faults_.enqueue_attempts(), 3u);
  EXPECT_EQ(faults_.injected_failures(), 1u);
}

// An injected enqueue failure during a capture fails the capture, as a backend's own does.
TEST_F(FaultInjectingDeviceTest, AnEnqueueFailedDuringACaptureFailsTheCapture) {
  void *const ptr = allocate(1024);
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(faults_.create_stream(&stream).is_ok());
  ASSERT_TRUE(stream->begin_capture().is_ok());
  faults_.fail_nth_enqueue(1);
  EXPECT_EQ(stream->enqueue_memset(ptr, 0, 1024).code(), RRT_ERR_INTERNAL);
  std::unique_ptr<Graph> graph;
  EXPECT_EQ(stream->end_capture(&graph).code(), RRT_ERR_INVALID_STATE);
  EXPECT_EQ(graph, nullptr);
}

}  // namespace
}  // namespace replayrt
