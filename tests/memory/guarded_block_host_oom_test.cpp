// GuardedBlock when the host runs out of memory while a kernel-mode refusal is built: the plan
// throws std::bad_alloc and counts the refusal nowhere, so the block's count and its host's stay
// equal. Here because the test links the replacement of the global operator new
// (support/host_allocation_faults.cpp), which memory_test does not.
#include <cstdint>
#include <new>

#include <gtest/gtest.h>

#include "memory/guarded_block.h"
#include "support/block_host_rig.h"
#include "support/growth_expectations.h"
#include "support/host_allocation_faults.h"

namespace replayrt {
namespace {

constexpr std::uint64_t kKiB = 1024;

TEST(GuardedBlockHostOomTest, ARefusalWhoseMessageCannotBeAllocatedIsCountedNowhere) {
  testing::BlockHostRig host;
  GuardedBlock block{host, GrowthPoint::kRetainedStaging};
  host.set_context(testing::kKernel);
  ASSERT_TRUE(block.reserve(kKiB).is_ok());
  {
    const testing::HostAllocationFails no_host_memory;
    EXPECT_THROW(static_cast<void>(block.plan(2 * kKiB)), std::bad_alloc);
  }
  EXPECT_EQ(block.refusals(), 0u);
  EXPECT_EQ(host.refusals(GrowthPoint::kRetainedStaging), 0u);

  testing::expect_refusal(block.plan(2 * kKiB), GrowthPoint::kRetainedStaging, 2 * kKiB, kKiB);
  EXPECT_EQ(block.refusals(), 1u);
  EXPECT_EQ(host.refusals(GrowthPoint::kRetainedStaging), 1u);
}

}  // namespace
}  // namespace replayrt
