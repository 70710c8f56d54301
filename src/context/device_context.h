// DeviceContext: one device context (the upstream "device runner"). It owns every device
// buffer a run or launch can reference, the execution-mode latch, and the statistics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include <replayrt/replayrt.h>

#include "common/growth_point.h"
#include "context/execution_mode_latch.h"
#include "context/host_api.h"
#include "memory/arena_bank.h"
#include "memory/device_allocator.h"
#include "memory/prebuilt_image_cache.h"
#include "memory/retained_buffer.h"
#include "platform/device.h"

namespace replayrt {

// Monotonic counters; every field is updated atomically and read without a lock.
struct ContextCounters {
  std::atomic<std::uint64_t> device_alloc_calls{0};
  std::atomic<std::uint64_t> device_free_calls{0};
  std::atomic<std::uint64_t> live_bytes{0};
  std::atomic<std::uint64_t> peak_bytes{0};
  std::atomic<std::uint64_t> launches{0};
  std::atomic<std::uint64_t> replays{0};
  std::atomic<std::uint64_t> stale_address_refusals{0};
  std::array<std::atomic<std::uint64_t>, kGrowthPointCount> refusals{};
};

struct RegionStats {
  std::uint64_t capacity = 0;      // bytes held now, over every bank or slot
  std::uint64_t used = 0;          // bytes the most recent request asked for
  std::uint64_t base_changes = 0;  // published bases moved or released (teardown excluded)
};

// Owns, per pipeline slot / arena bank (kPipelineDepth of each): an ArenaBank, its
// PrebuiltImageCache and a RetainedBuffer; plus the latch, the counters and, in kernel mode,
// the resident-image store at the front of bank 0's runtime pool.
//
// Every device allocation it makes goes through runtime_allocator(), which counts calls and
// live bytes; caller allocations (the C ABI's rrt_device_alloc) do not.
//
// The growth operations (also reachable through host_api_ops()) take the GrowthContext the
// runtime computed and apply the growth guard before any side effect; a capacity refusal is
// counted against its growth point.
//
// Thread safety: every member may be called from any thread; memory operations serialize on
// an internal mutex. Which run may use which slot and bank is the runtime's business.
class DeviceContext {
 public:
  static constexpr int kPipelineDepth = 2;

  // `device` must outlive the context.
  explicit DeviceContext(Device &device);
  ~DeviceContext();
  DeviceContext(const DeviceContext &) = delete;
  DeviceContext &operator=(const DeviceContext &) = delete;
  DeviceContext(DeviceContext &&) = delete;
  DeviceContext &operator=(DeviceContext &&) = delete;

  Device &device() noexcept { return device_; }
  ExecutionModeLatch &latch() noexcept { return latch_; }
  const ExecutionModeLatch &latch() const noexcept { return latch_; }
  ContextCounters &counters() noexcept { return counters_; }
  const ContextCounters &counters() const noexcept { return counters_; }

  static const HostApiOps &host_api_ops() noexcept;
  HostApi host_api(int slot, int bank, bool in_launch) noexcept {
    return HostApi(&host_api_ops(), this, slot, bank, in_launch);
  }

  Status device_malloc(GrowthContext growth, std::size_t bytes, void **out);
  Status device_free(void *ptr);
  Status retained_begin(GrowthContext growth, int slot, std::uint64_t required);
  void *retained_acquire(int slot, std::uint64_t bytes);
  Status setup_static_arena(GrowthContext growth, int bank, const BankRequest &request);
  BankBases pooled_bases(int bank) const;
  BankRequest pooled_sizes(int bank) const;
  bool lookup_prebuilt_image(int bank, std::uint64_t key, PrebuiltImageCache::Entry *out) const;
  void store_prebuilt_image(const PrebuiltImageCache::Entry &entry);

  // Kernel init: commits `plan` once (bank 0, slot 0's retained staging). Every nonzero entry
  // is a first allocation.
  Status commit_capacity_plan(const rrt_capacity_plan_t &plan);

  // Kernel mode: reserves `bytes` at the end of the resident images in bank 0's runtime pool
  // (growth point runtime_pool; a first commit of an empty pool is allowed outside a launch)
  // while keeping gm_heap and gm_sm at least `gm_heap` and `gm_sm` bytes. Writes the image's
  // device address.
  Status place_resident_image(GrowthContext growth, std::uint64_t gm_heap, std::uint64_t gm_sm,
                              std::uint64_t bytes, void **out);

  RegionStats region_stats(GrowthPoint point) const;
  // Counts a capacity refusal against its growth point; other statuses are ignored.
  void record_refusal(const Status &status) noexcept;

  // Releases every buffer (finalize): banks, retained slots, resident images, caches.
  void release_all() noexcept;

  DeviceAllocator runtime_allocator() noexcept;

 private:
  struct Slot {
    explicit Slot(DeviceAllocator allocator) : bank(allocator), retained(allocator) {}
    ArenaBank bank;
    RetainedBuffer retained;
    PrebuiltImageCache image_cache;
    BankRequest last_request;
    std::uint64_t last_retained_request = 0;
  };

  static void *allocate_counted(void *self, std::size_t bytes);
  static int free_counted(void *self, void *ptr) noexcept;
  Status setup_static_arena_locked(GrowthContext growth, int bank, const BankRequest &request);

  Device &device_;
  ExecutionModeLatch latch_;
  ContextCounters counters_;
  mutable std::mutex mutex_;
  std::array<std::unique_ptr<Slot>, kPipelineDepth> slots_;
  std::uint64_t resident_used_ = 0;
};

}  // namespace replayrt
