// The profiling records a launch writes into device memory: one TaskTiming per executed task
// and one LaunchRecord per launch. Every backend's executor writes these layouts; the runtime
// reads them back through the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace replayrt {

// One record per task of the most recent profiled launch in an area, indexed by task.
struct TaskTiming {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint32_t task;
  std::uint32_t worker;
};

// The device-wall record of an area: the most recent profiled launch's phase.
struct LaunchRecord {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint32_t tasks;
  std::uint32_t workers;
  std::uint64_t launches;  // profiled launches completed in this area
};

static_assert(std::is_trivially_copyable_v<TaskTiming>);
static_assert(std::is_standard_layout_v<TaskTiming>);
static_assert(sizeof(TaskTiming) == 24);
static_assert(offsetof(TaskTiming, start_ns) == 0);
static_assert(offsetof(TaskTiming, end_ns) == 8);
static_assert(offsetof(TaskTiming, task) == 16);
static_assert(offsetof(TaskTiming, worker) == 20);

static_assert(std::is_trivially_copyable_v<LaunchRecord>);
static_assert(std::is_standard_layout_v<LaunchRecord>);
static_assert(sizeof(LaunchRecord) == 32);
static_assert(offsetof(LaunchRecord, start_ns) == 0);
static_assert(offsetof(LaunchRecord, end_ns) == 8);
static_assert(offsetof(LaunchRecord, tasks) == 16);
static_assert(offsetof(LaunchRecord, workers) == 20);
static_assert(offsetof(LaunchRecord, launches) == 24);

}  // namespace replayrt
