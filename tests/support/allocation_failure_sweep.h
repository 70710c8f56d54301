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
#include "memory/guarded_block.h"
#include "support/block_host_rig.h"

namespace replayrt::testing {

// What the sweep needs to know about the object under test. `make` builds it on the host
// the sweep created (the host's growth context is the sweep's mode, outside a launch).
// `Snapshot` is everything the object publishes and must compare with ==.
template <typename Subject, typename Snapshot>
struct SweepSubject {
  std::function<std::unique_ptr<Subject>(BlockHost &)> make;
  std::function<Snapshot(const Subject &)> snapshot;
  // The device addresses in a snapshot that must stay live allocations.
  std::function<std::vector<const void *>(const Snapshot &)> live_addresses;
};

template <typename Subject>
using SweepStep = std::function<Status(Subject &)>;

// For each allocation n that `steps` make on a clean run in `mode` (at least
// `min_allocations`), reruns them on a fresh host whose nth device allocation returns null
// or, when `throws`, throws. Expects exactly one step to fail, with RRT_ERR_OUT_OF_MEMORY,
// leaving the snapshot as it was, its live addresses allocated and the device's live bytes
// unchanged (a backing staged before the failure was freed again); a retry of that step to
// succeed; and teardown to free every allocation.
template <typename Subject, typename Snapshot>
void sweep_allocation_failures(const SweepSubject<Subject, Snapshot> &subject,
                               const std::vector<SweepStep<Subject>> &steps, ExecutionMode mode,
                               bool throws, std::uint64_t min_allocations) {
  const GrowthContext context{mode, false};
  std::uint64_t allocations = 0;
  {
    BlockHostRig host(context);
    const std::unique_ptr<Subject> object = subject.make(host);
    for (const SweepStep<Subject> &step : steps) {
      ASSERT_TRUE(step(*object).is_ok()) << "clean run";
    }
    allocations = host.faults().allocation_attempts();
  }
  ASSERT_GE(allocations, min_allocations);
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing allocation " << n << " of " << allocations);
    BlockHostRig host(context);
    {
      const std::unique_ptr<Subject> object = subject.make(host);
      host.fail_nth_allocation(n, throws);
      int failed_steps = 0;
      for (const SweepStep<Subject> &step : steps) {
        const Snapshot before = subject.snapshot(*object);
        const std::uint64_t live_before = host.counters().live_bytes;
        const Status status = step(*object);
        if (status.is_ok()) {
          continue;
        }
        ++failed_steps;
        EXPECT_EQ(status.code(), RRT_ERR_OUT_OF_MEMORY) << status.message();
        EXPECT_FALSE(status.is_capacity_refusal());
        EXPECT_TRUE(subject.snapshot(*object) == before);
        EXPECT_EQ(host.counters().live_bytes, live_before);
        for (const void *address : subject.live_addresses(before)) {
          EXPECT_TRUE(host.is_live(address));
        }
        ASSERT_TRUE(step(*object).is_ok()) << "retry after the device recovered";
      }
      EXPECT_EQ(failed_steps, 1);
      EXPECT_EQ(host.faults().injected_failures(), 1u);
      EXPECT_EQ(host.total_refusals(), 0u);
    }
    EXPECT_EQ(host.counters().allocation_calls, host.counters().free_calls);
    EXPECT_EQ(host.counters().live_bytes, 0u);
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
