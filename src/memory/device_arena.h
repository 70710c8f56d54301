// DeviceArena: a bump layout of regions over exactly one backing device allocation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "memory/device_allocator.h"

namespace replayrt {

// Lays out up to kMaxRegions regions in one backing allocation and hands back their
// addresses. The region offset doubles as its id.
//
// Call order:
//   reserve(size, align) ...  →  commit()  →  region_ptr(offset) ...  →  release()
//   attach(buffer) wraps caller-owned memory instead of committing; release() then frees
//   nothing.
// release() returns the arena to its freshly constructed state; the next reserve + commit
// gets whatever address the allocator returns next. That is what "re-base" means at the
// bottom of the stack.
//
// Staged replacement (for all-or-nothing transactions over several arenas):
//   stage_replacement(size)  allocates a new single-region backing; the published backing,
//                            its region table and base are untouched.
//   publish_replacement()    makes the staged backing the published one (region 0 at offset
//                            0); the previous backing is kept as "superseded" ...
//   free_superseded()        ... until the transaction frees it, last.
//   abort_replacement()      frees the staged backing; the arena is as before staging.
//
// Allocation failure: the injected allocator may return null or throw; both count as a
// failed allocation, leave the arena exactly as it was, and are reported by the return value.
// Nothing here throws.
//
// Ownership: the arena owns a committed or staged backing and frees it through the injected
// allocator; an attached buffer stays the caller's.
// Counters: alloc_count and free_count count successful allocator calls made by this arena.
// Thread safety: none; the owner serializes access.
// Not copyable or movable: banks and images keep region addresses derived from it, and two
// owners of one backing would free it twice.
class DeviceArena {
 public:
  static constexpr std::size_t kMaxRegions = 128;
  // The hardware DMA granularity every device base is aligned to; not a tuning knob.
  static constexpr std::size_t kDefaultBaseAlignment = 1024;
  static constexpr std::size_t kInvalidOffset = static_cast<std::size_t>(-1);

  explicit DeviceArena(DeviceAllocator allocator) noexcept;
  ~DeviceArena();
  DeviceArena(const DeviceArena &) = delete;
  DeviceArena &operator=(const DeviceArena &) = delete;
  DeviceArena(DeviceArena &&) = delete;
  DeviceArena &operator=(DeviceArena &&) = delete;

  // Records a region of `size` bytes at the next `align`-aligned offset and returns that
  // offset. kInvalidOffset if the arena is committed, the table is full, `align` is not a
  // power of two, or the layout would overflow. A zero-size region does not advance the
  // cursor past its alignment.
  std::size_t reserve(std::size_t size, std::size_t align);

  // Allocates the backing for the reserved layout and returns its base, aligned to
  // `base_align` (a power of two). Idempotent: an already committed arena returns its base
  // and allocates nothing. Returns null on allocation failure and stays uncommitted (the
  // reservations remain), or for an invalid `base_align`.
  void *commit(std::size_t base_align = kDefaultBaseAlignment);

  // Wraps a caller-owned buffer. Aborts the process for a null base, a non-power-of-two
  // alignment, a misaligned base, or an arena committed by commit(): silently misaligned or
  // replaced memory would corrupt every offset derived from it. Re-attaching is allowed.
  // The region table is cleared (region_size then reports 0).
  void attach(void *external_base, std::size_t base_align = kDefaultBaseAlignment);

  // base() + offset; null if not committed.
  void *region_ptr(std::size_t offset) const noexcept;
  // Size of the region reserved at `offset`; 0 if unknown or attached.
  std::size_t region_size(std::size_t offset) const noexcept;

  // Frees every backing this arena owns (published, staged, superseded) and returns to the
  // freshly constructed state. Idempotent.
  void release() noexcept;
  // The same reset without calling the allocator: after a device failure every allocation is
  // already gone.
  void abandon_after_device_failure() noexcept;

  bool stage_replacement(std::size_t size, std::size_t base_align = kDefaultBaseAlignment);
  bool has_staged_replacement() const noexcept { return staged_.raw != nullptr; }
  void publish_replacement() noexcept;
  void abort_replacement() noexcept;
  void free_superseded() noexcept;

  bool is_committed() const noexcept { return committed_; }
  bool is_attached() const noexcept { return attached_; }
  void *base() const noexcept { return committed_ ? current_.base : nullptr; }
  // The reserved layout's extent (the cursor).
  std::size_t total_size() const noexcept { return cursor_; }
  std::uint64_t alloc_count() const noexcept { return alloc_count_; }
  std::uint64_t free_count() const noexcept { return free_count_; }

 private:
  struct Region {
    std::size_t offset = 0;
    std::size_t size = 0;
  };
  struct Backing {
    void *raw = nullptr;   // what the allocator returned
    void *base = nullptr;  // raw, forward-aligned
  };

  bool allocate_backing(std::size_t bytes, std::size_t base_align, Backing *out) noexcept;
  void free_backing(Backing *backing) noexcept;
  void reset_layout() noexcept;

  DeviceAllocator allocator_;
  std::array<Region, kMaxRegions> regions_{};
  std::size_t region_count_ = 0;
  std::size_t cursor_ = 0;
  Backing current_;
  Backing staged_;
  std::size_t staged_size_ = 0;
  Backing superseded_;
  bool committed_ = false;
  bool attached_ = false;
  std::uint64_t alloc_count_ = 0;
  std::uint64_t free_count_ = 0;
};

}  // namespace replayrt
