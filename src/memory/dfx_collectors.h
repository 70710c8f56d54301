// DfxCollectors: the profiling buffers the device writes while it runs (upstream's DFX):
// per-task timing collector pools with a latched shape, and a device-wall buffer of
// per-launch phase records.
#pragma once

#include <cstdint>

#include "memory/device_allocator.h"
#include "memory/growth_guard.h"
#include "platform/launch/profile_records.h"

namespace replayrt {

// `areas` areas (one per pipeline slot), each with room for shape() task records, in one
// collector pool; plus one device-wall buffer with a LaunchRecord per area.
//
// ensure(tasks) is growth point GrowthPoint::kDfxCollectors, decided before any side effect:
//   - a shape that already holds `tasks` records is kept;
//   - empty collectors take their first allocation (pool and wall), in kernel mode too, but
//     not while a launch is encoded;
//   - a larger shape in program mode rebuilds the pool at the new shape (the new pool first,
//     the old one freed after; a failed allocation keeps the old pool) and latches it;
//   - a larger shape in kernel mode is refused: the shape is fixed once published.
// The device-wall buffer is allocated once, with the first pool, and never grown or moved.
//
// Ownership: owns both buffers. Thread safety: none; the context serializes access.
class DfxCollectors {
 public:
  DfxCollectors(DeviceAllocator allocator, int areas) noexcept;
  ~DfxCollectors();
  DfxCollectors(const DfxCollectors &) = delete;
  DfxCollectors &operator=(const DfxCollectors &) = delete;
  DfxCollectors(DfxCollectors &&) = delete;
  DfxCollectors &operator=(DfxCollectors &&) = delete;

  Status ensure(std::uint32_t tasks, GrowthContext context);
  // The refusal ensure() would return, or OK; touches nothing.
  Status preflight(std::uint32_t tasks, GrowthContext context) const;
  // True when ensure(tasks) would replace the published pool (program mode rebuild).
  bool would_rebuild(std::uint32_t tasks) const noexcept;

  std::uint32_t shape() const noexcept { return shape_; }
  // Null until the first ensure().
  TaskTiming *timings(int area) const noexcept;
  LaunchRecord *wall(int area) const noexcept;
  std::uint64_t pool_bytes() const noexcept;
  std::uint64_t base_changes() const noexcept { return base_changes_; }
  std::uint64_t alloc_count() const noexcept { return alloc_count_; }
  std::uint64_t free_count() const noexcept { return free_count_; }

  void release() noexcept;

 private:
  void free_buffer(void *buffer) noexcept;
  GrowthRequest shape_request(std::uint32_t tasks, GrowthContext context) const noexcept;

  DeviceAllocator allocator_;
  int areas_;
  void *pool_ = nullptr;
  void *wall_ = nullptr;
  std::uint32_t shape_ = 0;
  std::uint64_t base_changes_ = 0;
  std::uint64_t alloc_count_ = 0;
  std::uint64_t free_count_ = 0;
};

}  // namespace replayrt
