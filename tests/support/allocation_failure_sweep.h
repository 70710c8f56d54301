// The allocation-failure sweep the memory-object tests share: a scenario of steps runs once
// clean to count its allocations, then once per allocation with that allocation failing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "common/execution_mode.h"
#include "common/status.h"
#include "memory/device_allocator.h"
#include "support/device_rig.h"

namespace replayrt::testing {

// What the sweep needs to know about the object under test. `Snapshot` is everything the
// object publishes and must compare with ==.
template <typename Subject, typename Snapshot>
struct SweepSubject {
  std::function<std::unique_ptr<Subject>(DeviceAllocator)> make;
  std::function<Snapshot(const Subject &)> snapshot;
  // The device addresses in a snapshot that must stay live allocations.
  std::function<std::vector<const void *>(const Snapshot &)> live_addresses;
};

template <typename Subject>
using SweepStep = std::function<Status(Subject &)>;

// For each allocation n that `steps` make on a clean run (at least `min_allocations`), reruns
// them on a fresh rig whose nth allocation returns null or, when `throws`, throws. Expects
// exactly one step to fail, with RRT_ERR_OUT_OF_MEMORY, leaving the snapshot as it was and
// its live addresses allocated; a retry of that step to succeed; and teardown to free every
// allocation.
template <typename Subject, typename Snapshot>
void sweep_allocation_failures(const SweepSubject<Subject, Snapshot> &subject,
                               const std::vector<SweepStep<Subject>> &steps, bool throws,
                               std::uint64_t min_allocations) {
  std::uint64_t allocations = 0;
  {
    DeviceRig rig;
    const std::unique_ptr<Subject> object = subject.make(rig.allocator);
    for (const SweepStep<Subject> &step : steps) {
      ASSERT_TRUE(step(*object).is_ok()) << "clean run";
    }
    allocations = rig.faults.allocation_attempts();
  }
  ASSERT_GE(allocations, min_allocations);
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing allocation " << n << " of " << allocations);
    DeviceRig rig;
    {
      const std::unique_ptr<Subject> object = subject.make(rig.allocator);
      if (throws) {
        rig.faults.throw_on_nth_allocation(n);
      } else {
        rig.faults.fail_nth_allocation(n);
      }
      int failed_steps = 0;
      for (const SweepStep<Subject> &step : steps) {
        const Snapshot before = subject.snapshot(*object);
        const Status status = step(*object);
        if (status.is_ok()) {
          continue;
        }
        ++failed_steps;
        EXPECT_EQ(status.code(), RRT_ERR_OUT_OF_MEMORY) << status.message();
        EXPECT_TRUE(subject.snapshot(*object) == before);
        for (const void *address : subject.live_addresses(before)) {
          EXPECT_TRUE(rig.device.find_allocation(address).has_value());
        }
        ASSERT_TRUE(step(*object).is_ok()) << "retry after the device recovered";
      }
      EXPECT_EQ(failed_steps, 1);
      EXPECT_EQ(rig.faults.injected_failures(), 1u);
    }
    EXPECT_EQ(rig.counters().allocation_calls, rig.counters().free_calls);
    EXPECT_EQ(rig.counters().live_bytes, 0u);
  }
}

// The parameters a sweep test runs under: each execution mode, failing by null and by throw.
using SweepParam = std::tuple<ExecutionMode, bool>;

inline auto sweep_params() {
  return ::testing::Combine(::testing::Values(ExecutionMode::kProgram, ExecutionMode::kKernel),
                            ::testing::Bool());
}

inline std::string sweep_param_name(const ::testing::TestParamInfo<SweepParam> &info) {
  const bool kernel = std::get<0>(info.param) == ExecutionMode::kKernel;
  return std::string(kernel ? "Kernel" : "Program") + (std::get<1>(info.param) ? "Throw" : "Null");
}

}  // namespace replayrt::testing
