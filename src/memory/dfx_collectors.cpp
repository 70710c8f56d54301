#include "memory/dfx_collectors.h"

#include <cstring>

#include "common/format.h"

namespace replayrt {

DfxCollectors::DfxCollectors(DeviceAllocator allocator, int areas) noexcept
    : allocator_(allocator), areas_(areas) {}

DfxCollectors::~DfxCollectors() {
  release();
}

std::uint64_t DfxCollectors::pool_bytes() const noexcept {
  return static_cast<std::uint64_t>(shape_) * static_cast<std::uint64_t>(areas_) *
         sizeof(TaskTiming);
}

bool DfxCollectors::would_rebuild(std::uint32_t tasks) const noexcept {
  return pool_ != nullptr && tasks > shape_;
}

GrowthRequest DfxCollectors::shape_request(std::uint32_t tasks,
                                           GrowthContext context) const noexcept {
  const std::uint64_t per_task = static_cast<std::uint64_t>(areas_) * sizeof(TaskTiming);
  return GrowthRequest{.point = GrowthPoint::kDfxCollectors,
                       .context = context,
                       .published = pool_ != nullptr,
                       .capacity = pool_bytes(),
                       .required = tasks * per_task,
                       .zero = ZeroRequest::kKeeps};
}

Status DfxCollectors::preflight(std::uint32_t tasks, GrowthContext context) const {
  const GrowthRequest growth = shape_request(tasks, context);
  return decide_growth(growth) == GrowthDecision::kRefuse ? refuse_growth(growth) : Status::ok();
}

Status DfxCollectors::ensure(std::uint32_t tasks, GrowthContext context) {
  const GrowthRequest growth = shape_request(tasks, context);
  switch (decide_growth(growth)) {
    case GrowthDecision::kRefuse:
      return refuse_growth(growth);
    case GrowthDecision::kKeep:
    case GrowthDecision::kRelease:
      return Status::ok();
    case GrowthDecision::kFirstAllocate:
    case GrowthDecision::kGrow:
      break;
  }
  void *wall = wall_;
  if (wall == nullptr) {
    const std::uint64_t wall_bytes = static_cast<std::uint64_t>(areas_) * sizeof(LaunchRecord);
    wall = allocate_or_null(allocator_, wall_bytes);
    if (wall == nullptr) {
      return Status::error(RRT_ERR_OUT_OF_MEMORY,
                           "device allocation of the profiling device-wall buffer failed");
    }
    ++alloc_count_;
    std::memset(wall, 0, wall_bytes);
  }
  void *pool = allocate_or_null(allocator_, growth.required);
  if (pool == nullptr) {
    if (wall != wall_) {
      free_buffer(wall);
    }
    return Status::error(RRT_ERR_OUT_OF_MEMORY,
                         format("device allocation of %llu bytes for profiling collectors "
                                "failed; the collectors are unchanged",
                                static_cast<unsigned long long>(growth.required)));
  }
  ++alloc_count_;
  std::memset(pool, 0, growth.required);
  if (pool_ != nullptr) {
    ++base_changes_;
    free_buffer(pool_);
  }
  pool_ = pool;
  wall_ = wall;
  shape_ = tasks;
  return Status::ok();
}

TaskTiming *DfxCollectors::timings(int area) const noexcept {
  if (pool_ == nullptr || area < 0 || area >= areas_) {
    return nullptr;
  }
  return static_cast<TaskTiming *>(pool_) + static_cast<std::size_t>(area) * shape_;
}

LaunchRecord *DfxCollectors::wall(int area) const noexcept {
  if (wall_ == nullptr || area < 0 || area >= areas_) {
    return nullptr;
  }
  return static_cast<LaunchRecord *>(wall_) + area;
}

void DfxCollectors::free_buffer(void *buffer) noexcept {
  if (allocator_.deallocate(allocator_.context, buffer) == 0) {
    ++free_count_;
  }
}

void DfxCollectors::release() noexcept {
  if (pool_ != nullptr) {
    free_buffer(pool_);
  }
  if (wall_ != nullptr) {
    free_buffer(wall_);
  }
  pool_ = nullptr;
  wall_ = nullptr;
  shape_ = 0;
}

}  // namespace replayrt
