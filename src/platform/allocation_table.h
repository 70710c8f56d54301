// AllocationTable: the live-allocation bookkeeping every backend shares. It answers "which
// allocation contains this address, and is it still the one with generation G?" and keeps the
// free epoch that lets a replay skip its full check while nothing was freed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>

#include "common/status.h"
#include "platform/device.h"

namespace replayrt {

// Every entry has a base, a size and a generation. Generations start at 1, are unique for the
// life of the table and never reused, so (base, generation) tells an allocation from a later
// one at the same base (ABA). Erasing an entry increments the free epoch; an entry never
// changes otherwise, so while the epoch is unchanged every entry seen earlier is still live.
//
// Erased entries may be parked in a bounded quarantine (by bytes): their memory is not handed
// back to the backend's allocator until newer frees push them out, so a stale address is not
// valid again soon. The table does not own memory: eviction reports the bases to release.
// Erasing, quarantining and evicting allocate nothing (an entry's node moves from one map to
// the next), so a free succeeds when the host is out of memory.
//
// Foreign entries (memory the backend did not allocate, admitted for a while) live in the same
// table but are erased only by erase_foreign and never quarantined.
//
// Thread safety: none of its own, except free_epoch(), which may be read without the owner's
// lock. The owning backend serializes every other member under one lock.
class AllocationTable {
 public:
  struct Evicted {
    std::uintptr_t base = 0;
    std::size_t size = 0;
  };

  explicit AllocationTable(std::size_t quarantine_bytes) : quarantine_limit_(quarantine_bytes) {}

  // Records [base, base + size) with a fresh generation and returns it. RRT_ERR_INVALID_ARGUMENT
  // when the range is empty or overlaps a live entry; std::bad_alloc propagates (the table is
  // unchanged then).
  Status insert(std::uintptr_t base, std::size_t size, bool foreign, std::uint64_t *generation);

  // Erases the allocation at `base` (a non-foreign entry): the generation retires, the free
  // epoch advances and the entry moves to the quarantine (or, with a zero limit, is reported
  // for release at once through `released`). RRT_ERR_INVALID_ARGUMENT and no change for a base
  // that is quarantined ("already freed"), interior to a live entry, foreign, or unknown. On
  // success `*erased` is the entry.
  Status erase(std::uintptr_t base, AllocationInfo *erased);
  // Erases a foreign entry registered at exactly `base`; INVALID_ARGUMENT otherwise.
  Status erase_foreign(std::uintptr_t base);

  // Takes the oldest entry pushed out of the quarantine (or erased with a zero limit) whose
  // memory the caller has not yet returned to its allocator; false when there is none.
  bool pop_evicted(Evicted *out);
  // How many entries pop_evicted() has yet to hand out.
  std::size_t evicted_count() const noexcept { return evicted_.size(); }

  std::optional<AllocationInfo> find(std::uintptr_t address) const;
  bool is_foreign(std::uintptr_t base) const;
  // OK when [address, address + bytes) lies inside one live entry; otherwise
  // RRT_ERR_INVALID_ARGUMENT naming `role` and the range.
  Status check_range(const void *address, std::size_t bytes, const char *role) const;
  // The index of the first range not inside one live entry, or ranges.size().
  std::size_t first_range_outside(std::span<const AddressRange> ranges) const;
  // The index of the first captured address whose allocation (base and generation) is no
  // longer live, or captured.size().
  std::size_t first_stale(std::span<const CapturedAddress> captured) const;

  // Increments with every erase (foreign ones included).
  std::uint64_t free_epoch() const noexcept { return free_epoch_.load(std::memory_order_acquire); }

  MemoryCounters counters() const noexcept { return counters_; }
  std::size_t quarantined_bytes() const noexcept { return quarantine_size_; }
  std::size_t live_count() const noexcept { return live_.size(); }

  // Every live non-foreign base and every quarantined one (for a backend's destructor).
  template <typename Fn>
  void for_each_owned(Fn fn) const {
    for (const auto &[base, entry] : live_) {
      if (!entry.foreign) {
        fn(base, entry.size);
      }
    }
    for (const auto &[order, block] : quarantine_) {
      fn(block.base, block.size);
    }
    for (const auto &[order, block] : evicted_) {
      fn(block.base, block.size);
    }
  }

 private:
  struct Entry {
    std::uintptr_t base = 0;
    std::size_t size = 0;
    std::uint64_t generation = 0;
    bool foreign = false;
  };
  // live_ is keyed by base; quarantine_ and evicted_ by the order of the frees (oldest first),
  // so one entry's node moves through the three without an allocation.
  using Entries = std::map<std::uintptr_t, Entry>;

  void evict_over_limit() noexcept;

  const std::size_t quarantine_limit_;
  Entries live_;
  Entries quarantine_;
  Entries evicted_;
  std::uintptr_t next_free_order_ = 0;
  std::size_t quarantine_size_ = 0;
  std::uint64_t next_generation_ = 1;
  std::atomic<std::uint64_t> free_epoch_{0};
  MemoryCounters counters_;
};

}  // namespace replayrt
