#include "memory/retained_buffer.h"

#include <gtest/gtest.h>

#include "support/device_rig.h"
#include "support/growth_expectations.h"

namespace replayrt {
namespace {

using testing::kKernel;
using testing::kProgram;

constexpr std::uint64_t kSlice = RetainedBuffer::kSliceAlignment;

struct SlotState {
  void *address = nullptr;
  std::uint64_t capacity = 0;
  std::uint64_t alloc_count = 0;
  std::uint64_t free_count = 0;

  static SlotState of(const RetainedBuffer &buffer) {
    return {buffer.address(), buffer.capacity(), buffer.alloc_count(), buffer.free_count()};
  }
  bool operator==(const SlotState &) const = default;
};

class RetainedBufferTest : public ::testing::Test {
 protected:
  testing::DeviceRig rig;
  RetainedBuffer buffer{rig.allocator};
};

TEST_F(RetainedBufferTest, SlicesAreAlignedAndBoundedByCapacity) {
  ASSERT_TRUE(buffer.begin(2 * kSlice, kProgram).is_ok());
  void *const first = buffer.acquire(64);
  void *const second = buffer.acquire(64);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first, buffer.address());
  EXPECT_EQ(static_cast<std::byte *>(second) - static_cast<std::byte *>(first),
            static_cast<std::ptrdiff_t>(kSlice));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(second) % kSlice, 0u);
  EXPECT_EQ(buffer.acquire(1), nullptr);
  EXPECT_EQ(buffer.used(), 2 * kSlice);
}

TEST_F(RetainedBufferTest, AcquireWithoutABufferReturnsNull) {
  EXPECT_EQ(buffer.acquire(1), nullptr);
}

TEST_F(RetainedBufferTest, BeginResetsTheSliceCursor) {
  ASSERT_TRUE(buffer.begin(kSlice, kProgram).is_ok());
  ASSERT_NE(buffer.acquire(kSlice), nullptr);
  ASSERT_TRUE(buffer.begin(kSlice, kProgram).is_ok());
  EXPECT_EQ(buffer.acquire(kSlice), buffer.address());
}

TEST_F(RetainedBufferTest, ZeroNeedLeavesTheSlotUntouched) {
  ASSERT_TRUE(buffer.begin(0, kKernel).is_ok());
  EXPECT_EQ(SlotState::of(buffer), SlotState{});
  ASSERT_TRUE(buffer.begin(kSlice, kProgram).is_ok());
  const SlotState held = SlotState::of(buffer);
  ASSERT_TRUE(buffer.begin(0, kProgram).is_ok());
  ASSERT_TRUE(buffer.begin(0, kKernel).is_ok());
  EXPECT_EQ(SlotState::of(buffer), held);
}

// ---- kernel mode: the seed's acceptance criteria ------------------------------------------

// The production shape: a kernel context from its very first bind.
TEST_F(RetainedBufferTest, KernelModeAllocatesOnceThenRefusesToGrow) {
  ASSERT_TRUE(buffer.begin(2 * kSlice, kKernel).is_ok());
  EXPECT_EQ(buffer.alloc_count(), 1u);
  const SlotState held = SlotState::of(buffer);
  const MemoryCounters device_before = rig.counters();

  const Status refused = buffer.begin(2 * kSlice + kSlice, kKernel);
  EXPECT_EQ(refused.code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kRetainedStaging);
  EXPECT_EQ(refused.requested_bytes(), 3 * kSlice);
  EXPECT_EQ(refused.capacity_bytes(), 2 * kSlice);
  EXPECT_EQ(SlotState::of(buffer), held);
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);

  ASSERT_TRUE(buffer.begin(2 * kSlice, kKernel).is_ok());
  EXPECT_EQ(buffer.acquire(kSlice), held.address);
  EXPECT_EQ(SlotState::of(buffer), held);
}

TEST_F(RetainedBufferTest, KernelModeHoldsOneAddressAcrossRepeatedRuns) {
  ASSERT_TRUE(buffer.begin(4 * kSlice, kKernel).is_ok());
  const SlotState held = SlotState::of(buffer);
  const MemoryCounters device_before = rig.counters();
  for (const std::uint64_t need : {4 * kSlice, 4 * kSlice, kSlice, 4 * kSlice, kSlice}) {
    ASSERT_TRUE(buffer.begin(need, kKernel).is_ok());
    for (std::uint64_t used = 0; used < need; used += kSlice) {
      EXPECT_NE(buffer.acquire(kSlice), nullptr);
    }
    EXPECT_EQ(SlotState::of(buffer), held);
  }
  EXPECT_EQ(rig.counters().allocation_calls, device_before.allocation_calls);
  EXPECT_EQ(rig.counters().free_calls, device_before.free_calls);
}

TEST_F(RetainedBufferTest, KernelModeRefusesToGrowTheRetainedBuffer) {
  // Warmed up in program mode, then the context's identity reads kernel.
  ASSERT_TRUE(buffer.begin(2 * kSlice, kProgram).is_ok());
  const SlotState held = SlotState::of(buffer);
  const Status refused = buffer.begin(RetainedBuffer::slice_bytes(2 * kSlice + 1), kKernel);
  EXPECT_EQ(refused.code(), RRT_ERR_INTERNAL);
  EXPECT_TRUE(refused.is_capacity_refusal());
  EXPECT_EQ(SlotState::of(buffer), held);
  EXPECT_TRUE(rig.device.find_allocation(held.address).has_value());
}

TEST_F(RetainedBufferTest, KernelModeRefusalLeavesTheRetainedBufferUsable) {
  ASSERT_TRUE(buffer.begin(2 * kSlice, kProgram).is_ok());
  const SlotState held = SlotState::of(buffer);
  ASSERT_FALSE(buffer.begin(3 * kSlice, kKernel).is_ok());
  ASSERT_TRUE(buffer.begin(2 * kSlice, kKernel).is_ok());
  EXPECT_EQ(buffer.acquire(kSlice), held.address);
  EXPECT_NE(buffer.acquire(kSlice), nullptr);
  EXPECT_EQ(SlotState::of(buffer), held);
}

TEST_F(RetainedBufferTest, KernelModeFirstAllocationWhileALaunchIsEncodedIsRefused) {
  const Status refused = buffer.begin(kSlice, testing::kLaunch);
  EXPECT_EQ(refused.code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kLaunchAllocation);
  EXPECT_EQ(SlotState::of(buffer), SlotState{});
  EXPECT_EQ(rig.counters().allocation_calls, 0u);
}

// ---- program mode ------------------------------------------------------------------------

TEST_F(RetainedBufferTest, ProgramModeStillGrowsTheRetainedBuffer) {
  ASSERT_TRUE(buffer.begin(kSlice, kProgram).is_ok());
  void *const first = buffer.address();
  ASSERT_TRUE(buffer.begin(3 * kSlice, kProgram).is_ok());
  EXPECT_EQ(buffer.alloc_count(), 2u);
  EXPECT_EQ(buffer.free_count(), 1u);
  EXPECT_EQ(buffer.capacity(), 3 * kSlice);
  EXPECT_FALSE(rig.device.find_allocation(first).has_value());
  // A smaller run keeps the larger buffer.
  ASSERT_TRUE(buffer.begin(kSlice, kProgram).is_ok());
  EXPECT_EQ(buffer.capacity(), 3 * kSlice);
  EXPECT_EQ(buffer.alloc_count(), 2u);
}

TEST_F(RetainedBufferTest, ProgramModeGrowthAllocatesBeforeItFrees) {
  ASSERT_TRUE(buffer.begin(kSlice, kProgram).is_ok());
  ASSERT_TRUE(buffer.begin(4 * kSlice, kProgram).is_ok());
  EXPECT_GE(rig.counters().peak_live_bytes, 5 * kSlice);
}

class RetainedBufferFailureTest : public ::testing::TestWithParam<bool> {};

TEST_P(RetainedBufferFailureTest, FailedGrowthKeepsTheOldBuffer) {
  const bool throws = GetParam();
  testing::DeviceRig rig;
  {
    RetainedBuffer buffer(rig.allocator);
    ASSERT_TRUE(buffer.begin(kSlice, kProgram).is_ok());
    const SlotState held = SlotState::of(buffer);
    if (throws) {
      rig.faults.throw_on_nth_allocation(1);
    } else {
      rig.faults.fail_nth_allocation(1);
    }
    const Status failed = buffer.begin(4 * kSlice, kProgram);
    EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_FALSE(failed.is_capacity_refusal());
    EXPECT_EQ(SlotState::of(buffer), held);
    EXPECT_TRUE(rig.device.find_allocation(held.address).has_value());
    ASSERT_TRUE(buffer.begin(kSlice, kProgram).is_ok());
    EXPECT_EQ(buffer.acquire(kSlice), held.address);
  }
  EXPECT_EQ(rig.counters().allocation_calls, rig.counters().free_calls);
}

INSTANTIATE_TEST_SUITE_P(NullAndThrow, RetainedBufferFailureTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "Throw" : "Null");
                         });

TEST_F(RetainedBufferTest, FailedFirstAllocationLeavesTheSlotEmpty) {
  rig.faults.fail_nth_allocation(1);
  EXPECT_EQ(buffer.begin(kSlice, kKernel).code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(SlotState::of(buffer), SlotState{});
  ASSERT_TRUE(buffer.begin(kSlice, kKernel).is_ok());
  EXPECT_NE(buffer.address(), nullptr);
}

TEST_F(RetainedBufferTest, ReleaseFreesTheBuffer) {
  ASSERT_TRUE(buffer.begin(kSlice, kProgram).is_ok());
  buffer.release();
  EXPECT_EQ(buffer.address(), nullptr);
  EXPECT_EQ(buffer.capacity(), 0u);
  EXPECT_EQ(rig.counters().live_bytes, 0u);
}

TEST(RetainedBufferSliceTest, SliceBytesRoundsUpToTheAlignment) {
  EXPECT_EQ(RetainedBuffer::slice_bytes(0), 0u);
  EXPECT_EQ(RetainedBuffer::slice_bytes(1), kSlice);
  EXPECT_EQ(RetainedBuffer::slice_bytes(kSlice), kSlice);
  EXPECT_EQ(RetainedBuffer::slice_bytes(kSlice + 1), 2 * kSlice);
}

}  // namespace
}  // namespace replayrt
