// RetainedBuffer: one pipeline slot's device buffer for staging HOST tensors, kept across
// runs so a steady state allocates nothing.
#pragma once

#include <cstdint>

#include "memory/device_allocator.h"
#include "memory/growth_guard.h"

namespace replayrt {

// Per run:  begin(required)  →  acquire(bytes) per staged tensor  →  (run executes)
// begin() sizes the buffer for `required` bytes (the sum of the run's slices, each rounded
// up to kSliceAlignment) and resets the slice cursor. It is growth point
// GrowthPoint::kRetainedStaging:
//   - a buffer that already holds `required` bytes is kept (no allocator call);
//   - an empty buffer takes its first allocation (in kernel mode too: an empty slot holds no
//     address a captured graph could reference);
//   - a larger need in program mode allocates the new buffer first and frees the old one only
//     after that succeeded, so a failed growth keeps the old buffer and returns
//     RRT_ERR_OUT_OF_MEMORY;
//   - a larger need for a published buffer in kernel mode is refused before anything is
//     touched (RRT_ERR_INTERNAL naming retained_staging); the buffer stays exactly as the
//     previous run left it and remains usable;
//   - a zero need leaves the buffer untouched.
// acquire() hands out the next kSliceAlignment-aligned slice; null if there is no buffer or
// the slice would pass the capacity (a sizing mismatch is the caller's bug).
//
// Ownership: owns its buffer; release() (and the destructor) frees it.
// Thread safety: none; a slot is used by one run at a time.
class RetainedBuffer {
 public:
  static constexpr std::uint64_t kSliceAlignment = 1024;

  explicit RetainedBuffer(DeviceAllocator allocator) noexcept;
  ~RetainedBuffer();
  RetainedBuffer(const RetainedBuffer &) = delete;
  RetainedBuffer &operator=(const RetainedBuffer &) = delete;
  RetainedBuffer(RetainedBuffer &&) = delete;
  RetainedBuffer &operator=(RetainedBuffer &&) = delete;

  Status begin(std::uint64_t required, GrowthContext context);
  void *acquire(std::uint64_t bytes) noexcept;

  // `bytes` rounded up to kSliceAlignment; what one tensor of that size adds to `required`.
  static std::uint64_t slice_bytes(std::uint64_t bytes) noexcept;

  void *address() const noexcept { return address_; }
  std::uint64_t capacity() const noexcept { return capacity_; }
  std::uint64_t used() const noexcept { return cursor_; }
  // How often a growth replaced the published buffer.
  std::uint64_t base_changes() const noexcept { return base_changes_; }
  std::uint64_t alloc_count() const noexcept { return alloc_count_; }
  std::uint64_t free_count() const noexcept { return free_count_; }

  void release() noexcept;
  void abandon_after_device_failure() noexcept;

 private:
  DeviceAllocator allocator_;
  void *address_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t cursor_ = 0;
  std::uint64_t base_changes_ = 0;
  std::uint64_t alloc_count_ = 0;
  std::uint64_t free_count_ = 0;
};

}  // namespace replayrt
