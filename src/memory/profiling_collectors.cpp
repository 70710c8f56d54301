#include "memory/profiling_collectors.h"

#include <utility>

#include "common/format.h"

namespace replayrt {

namespace {
// Names the setting that fixes the shape in a refusal of a larger one.
Status name_task_capacity(Status refused, std::uint32_t tasks, std::uint32_t shape) {
  if (!refused.is_capacity_refusal()) {
    return refused;
  }
  return std::move(refused).with_context(
      format("%u task records exceed the %u of profiling_task_capacity (one launch's tasks, or "
             "those of every launch one capture holds)",
             tasks, shape));
}
}  // namespace

ProfilingCollectors::ProfilingCollectors(BlockHost &host, int areas) noexcept
    : areas_(areas),
      timings_(host, GrowthPoint::kDfxCollectors),
      wall_(host, GrowthPoint::kDfxCollectors),
      host_(host) {}

std::uint64_t ProfilingCollectors::timing_bytes(std::uint32_t tasks) const noexcept {
  return std::uint64_t{tasks} * static_cast<std::uint64_t>(areas_) * sizeof(TaskTiming);
}

std::uint64_t ProfilingCollectors::wall_bytes() const noexcept {
  return static_cast<std::uint64_t>(areas_) * sizeof(LaunchRecord);
}

Status ProfilingCollectors::plan(BlockTransaction &txn, std::uint32_t tasks) {
  if (tasks == 0) {
    return Status::ok();
  }
  RRT_RETURN_IF_ERROR(name_task_capacity(txn.add(timings_, timing_bytes(tasks)), tasks, shape_));
  return txn.add(wall_, wall_bytes());
}

Status ProfilingCollectors::zero_staged() {
  if (timings_.base_after_publish() != zeroed_timings_) {
    RRT_RETURN_IF_ERROR(
        host_.zero(timings_.base_after_publish(), timings_.capacity_after_publish()));
  }
  if (wall_.base_after_publish() != zeroed_wall_) {
    RRT_RETURN_IF_ERROR(host_.zero(wall_.base_after_publish(), wall_.capacity_after_publish()));
  }
  return Status::ok();
}

void ProfilingCollectors::latch_shape() noexcept {
  if (timings_.base() != zeroed_timings_) {
    zeroed_timings_ = timings_.base();
    shape_ = static_cast<std::uint32_t>(timings_.capacity() /
                                        (static_cast<std::uint64_t>(areas_) * sizeof(TaskTiming)));
  }
  zeroed_wall_ = wall_.base();
}

Status ProfilingCollectors::preflight(std::uint32_t tasks) const {
  if (tasks == 0) {
    return Status::ok();
  }
  RRT_RETURN_IF_ERROR(name_task_capacity(timings_.preflight(timing_bytes(tasks)), tasks, shape_));
  return wall_.preflight(wall_bytes());
}

bool ProfilingCollectors::would_rebuild(std::uint32_t tasks) const noexcept {
  return timings_.is_published() && timing_bytes(tasks) > timings_.capacity();
}

TaskTiming *ProfilingCollectors::timings(int area) const noexcept {
  if (shape_ == 0 || area < 0 || area >= areas_) {
    return nullptr;
  }
  return static_cast<TaskTiming *>(timings_.base()) + static_cast<std::size_t>(area) * shape_;
}

LaunchRecord *ProfilingCollectors::wall(int area) const noexcept {
  if (zeroed_wall_ == nullptr || area < 0 || area >= areas_) {
    return nullptr;
  }
  return static_cast<LaunchRecord *>(wall_.base()) + area;
}

TaskTiming *ProfilingCollectors::timings_after_publish(int area) const noexcept {
  const std::uint64_t area_records =
      timings_.capacity_after_publish() / (static_cast<std::uint64_t>(areas_) * sizeof(TaskTiming));
  if (area_records == 0 || area < 0 || area >= areas_) {
    return nullptr;
  }
  return static_cast<TaskTiming *>(timings_.base_after_publish()) +
         static_cast<std::size_t>(area) * area_records;
}

LaunchRecord *ProfilingCollectors::wall_after_publish(int area) const noexcept {
  if (wall_.base_after_publish() == nullptr || area < 0 || area >= areas_) {
    return nullptr;
  }
  return static_cast<LaunchRecord *>(wall_.base_after_publish()) + area;
}

void ProfilingCollectors::release() noexcept {
  timings_.release();
  wall_.release();
  shape_ = 0;
  zeroed_timings_ = nullptr;
  zeroed_wall_ = nullptr;
}

}  // namespace replayrt
