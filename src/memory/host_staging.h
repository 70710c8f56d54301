// HostStaging: device copies of the HOST tensors of host-build runs, for one pipeline slot.
#pragma once

#include <cstdint>
#include <vector>

#include "memory/device_allocator.h"
#include "memory/growth_guard.h"

namespace replayrt {

// Per run:  begin(required)  →  stage(bytes) per HOST tensor  →  (run executes)  →  end_run()
// It is growth point GrowthPoint::kHostStaging, with a behaviour per mode:
//   - program mode: every stage() takes a fresh device allocation, held until end_run() frees
//     it (every run gets new addresses, as upstream's host-build staging does); begin() does
//     nothing. A failed allocation returns RRT_ERR_OUT_OF_MEMORY; end_run() still frees what
//     the run staged before it.
//   - kernel mode: one frozen region, committed once (commit() at kernel init, or the first
//     begin() outside a launch takes it as a first allocation), sliced per run at
//     kSliceAlignment. begin() refuses a run that needs more than the region holds before
//     anything is touched; a first allocation while a launch is encoded is refused as
//     launch_allocation. end_run() frees nothing.
//
// Ownership: owns the region and the program-mode blocks. Thread safety: none; a slot is used
// by one run at a time.
class HostStaging {
 public:
  static constexpr std::uint64_t kSliceAlignment = 1024;

  explicit HostStaging(DeviceAllocator allocator) noexcept;
  ~HostStaging();
  HostStaging(const HostStaging &) = delete;
  HostStaging &operator=(const HostStaging &) = delete;
  HostStaging(HostStaging &&) = delete;
  HostStaging &operator=(HostStaging &&) = delete;

  // Kernel init: the region's first allocation, `bytes` long (0: nothing to commit).
  Status commit(std::uint64_t bytes, GrowthContext context);
  Status begin(std::uint64_t required, GrowthContext context);
  Status stage(std::uint64_t bytes, GrowthContext context, void **out);
  void end_run() noexcept;

  static std::uint64_t slice_bytes(std::uint64_t bytes) noexcept;

  void *region() const noexcept { return region_; }
  std::uint64_t capacity() const noexcept { return capacity_; }
  std::uint64_t used() const noexcept { return cursor_; }
  std::uint64_t staged_blocks() const noexcept { return blocks_.size(); }
  std::uint64_t alloc_count() const noexcept { return alloc_count_; }
  std::uint64_t free_count() const noexcept { return free_count_; }

  void release() noexcept;

 private:
  GrowthRequest region_request(std::uint64_t required, GrowthContext context) const noexcept;
  void free_block(void *block) noexcept;

  DeviceAllocator allocator_;
  void *region_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t cursor_ = 0;
  std::vector<void *> blocks_;
  std::uint64_t alloc_count_ = 0;
  std::uint64_t free_count_ = 0;
};

}  // namespace replayrt
