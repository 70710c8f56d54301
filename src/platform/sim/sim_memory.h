// SimMemory: the simulator's device memory, held in host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>

#include "platform/allocation_table.h"
#include "platform/device.h"
#include "platform/sim/sim_properties.h"

namespace replayrt::sim {

struct SimMemoryOptions {
  // Freed blocks stay poisoned and out of circulation while the quarantine, oldest first,
  // holds at most this many bytes: a free evicts the oldest blocks until the total fits again
  // (a block larger than the limit leaves at once), so a stale address is not silently valid
  // again soon. 0 disables the quarantine (blocks go back to the host allocator at once).
  std::size_t quarantine_bytes = std::size_t{64} << 20;
};

// Device memory for the simulator. Every allocation:
//   - has a base aligned to kSimDeviceProperties.base_alignment;
//   - is recorded in the shared AllocationTable (platform/allocation_table.h): a generation
//     number, unique and never reused, and the free epoch.
// A freed block is filled with kPoisonByte and parked in a bounded quarantine before its
// memory is returned to the host allocator. Freeing an unknown pointer, an interior pointer
// or freeing twice returns RRT_ERR_INVALID_ARGUMENT and changes nothing.
// allocate returns null when the host cannot provide the block or its table entry.
// Thread safety: every member is thread-safe. A copy or memset holds the table lock from its
// range check to its last byte, so a concurrent free of the block waits for it and the copy
// never touches memory returned to the host allocator.
class SimMemory {
 public:
  static constexpr std::size_t kAlignment = kSimDeviceProperties.base_alignment;
  static constexpr unsigned char kPoisonByte = 0xDB;

  explicit SimMemory(SimMemoryOptions options = {});
  ~SimMemory();
  SimMemory(const SimMemory &) = delete;
  SimMemory &operator=(const SimMemory &) = delete;
  SimMemory(SimMemory &&) = delete;
  SimMemory &operator=(SimMemory &&) = delete;

  void *allocate(std::size_t bytes);
  Status free(void *ptr);
  Status copy_host_to_device(void *dst, const void *src, std::size_t bytes);
  Status copy_device_to_host(void *dst, const void *src, std::size_t bytes);
  Status copy_device_to_device(void *dst, const void *src, std::size_t bytes);
  Status memset(void *dst, int value, std::size_t bytes);

  std::optional<AllocationInfo> find_allocation(const void *address) const;
  // True when `address` lies in a live allocation whose generation is `generation`.
  bool is_live(const void *address, std::uint64_t generation) const;
  // The index of the first captured address that no longer lies in the allocation (base and
  // generation) it was captured in, or captured.size() when all of them still do. One lock
  // for the whole check.
  std::size_t first_stale(std::span<const CapturedAddress> captured) const;
  // The index of the first range not inside one live allocation, or ranges.size(); one lock.
  std::size_t first_range_outside_allocations(std::span<const AddressRange> ranges) const;
  MemoryCounters counters() const;
  std::size_t quarantined_bytes() const;
  // Increments with every free; readable without the table lock.
  std::uint64_t free_epoch() const noexcept { return table_.free_epoch(); }

 private:
  // Requires mutex_. Returns the memory of entries pushed out of the quarantine to the host.
  void release_evicted_locked();

  mutable std::mutex mutex_;
  AllocationTable table_;  // guarded by mutex_ (free_epoch() excepted)
};

}  // namespace replayrt::sim
