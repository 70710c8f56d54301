#include "support/fault_injecting_device.h"

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

}  // namespace
}  // namespace replayrt
