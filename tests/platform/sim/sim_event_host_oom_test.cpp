// SimEventState out of host memory: a record that executes ahead of an earlier one has to be
// remembered in a set, and the runner that completes it must not throw. This program links the
// replacement of the global operator new (support/host_allocation_faults.h), so that the test
// thread's allocations fail while it completes a record.
#include <cstdint>

#include <gtest/gtest.h>

#include "platform/sim/sim_event.h"
#include "support/host_allocation_faults.h"

namespace replayrt::sim {
namespace {

using replayrt::testing::HostAllocationFails;

TEST(SimEventHostOomTest, ARecordExecutedAheadWithoutHostMemoryStillCountsAsExecuted) {
  SimEventState event;
  const std::uint64_t earlier = event.begin_record();
  const std::uint64_t later = event.begin_record();
  {
    const HostAllocationFails no_host_memory;
    event.complete_record(later, nullptr, 0);
  }
  // A wait bound to the later record must end; the earlier one now counts as executed too
  // (the rule before records were tracked one by one), which may release its waits early but
  // never holds one forever.
  EXPECT_TRUE(event.is_complete(later));
  EXPECT_TRUE(event.is_complete(earlier));
  event.complete_record(earlier, nullptr, 0);
  EXPECT_TRUE(event.is_complete(later));
}

TEST(SimEventHostOomTest, WithHostMemoryARecordExecutedAheadLeavesTheEarlierOneOutstanding) {
  SimEventState event;
  const std::uint64_t earlier = event.begin_record();
  const std::uint64_t later = event.begin_record();
  event.complete_record(later, nullptr, 0);
  EXPECT_TRUE(event.is_complete(later));
  EXPECT_FALSE(event.is_complete(earlier));
}

}  // namespace
}  // namespace replayrt::sim
