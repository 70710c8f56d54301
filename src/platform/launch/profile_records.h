// The profiling records the device writes: one per task and one per launch.
#pragma once

#include <cstdint>

namespace replayrt {

// One record per task of the most recent profiled launch in an area, indexed by task.
struct TaskTiming {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint32_t task;
  std::uint32_t worker;
};
static_assert(sizeof(TaskTiming) == 24);

// The device-wall record of an area: the most recent profiled launch's phase.
struct LaunchRecord {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint32_t tasks;
  std::uint32_t workers;
  std::uint64_t launches;  // profiled launches completed in this area
};
static_assert(sizeof(LaunchRecord) == 32);

}  // namespace replayrt
