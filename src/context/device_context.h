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
#include "memory/dfx_collectors.h"
#include "memory/graph_definition_store.h"
#include "memory/host_staging.h"
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
// PrebuiltImageCache, a RetainedBuffer, a GraphDefinitionStore and a HostStaging; once for
// the context: the DFX collectors (when profiling is on), the latch, the counters and, in
// kernel mode, the resident-image store at the front of bank 0's runtime pool.
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
  // Resident images and scheduler seeds start at multiples of this in the runtime pool.
  static constexpr std::uint64_t kResidentAlignment = 1024;

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
    return {&host_api_ops(), this, slot, bank, in_launch};
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
  Status acquire_graph_definition(GrowthContext growth, int slot, std::uint64_t key,
                                  std::uint64_t bytes, GraphDefinitionStore::Placement *out);
  Status host_staging_begin(GrowthContext growth, int slot, std::uint64_t required);
  Status host_staging_stage(GrowthContext growth, int slot, std::uint64_t bytes, void **out);
  // Ends a run's host staging in `slot`: program mode frees what it staged.
  void end_host_staging(int slot) noexcept;
  // Profiling: sizes the collectors for `tasks` and writes the slot's areas; both null when
  // profiling is off.
  Status profile_area(GrowthContext growth, int slot, std::uint32_t tasks, TaskTiming **timings,
                      LaunchRecord **wall);
  // True when profiling is on and preparing a run of `tasks` tasks would rebuild the
  // collectors another run may be writing to.
  bool profile_would_rebuild(std::uint32_t tasks) const;
  // The refusal profile_area() would return for `tasks` (counted as a refusal), or OK;
  // touches no buffer.
  Status profile_preflight(GrowthContext growth, std::uint32_t tasks);
  // Copies the slot's most recent launch record and its task timings (at most `capacity`).
  Status read_profile(int slot, LaunchRecord *record, TaskTiming *timings,
                      std::uint32_t capacity) const;

  // Profiling is chosen once, before init.
  void enable_profiling() noexcept { profiling_.store(true, std::memory_order_release); }
  bool profiling() const noexcept { return profiling_.load(std::memory_order_acquire); }

  // Kernel init: commits `plan` once (bank 0; slot 0's retained staging, graph-definition
  // store and host staging; the collectors for `profile_tasks` tasks when profiling is on).
  // Every nonzero entry is a first allocation.
  Status commit_capacity_plan(const rrt_capacity_plan_t &plan, std::uint32_t profile_tasks);

  // Kernel mode: reserves `bytes` at the end of the resident images in bank 0's runtime pool
  // (growth point runtime_pool; a first commit of an empty pool is allowed outside a launch)
  // while keeping gm_heap and gm_sm at least `gm_heap` and `gm_sm` bytes. Writes the image's
  // device address.
  Status place_resident_image(GrowthContext growth, std::uint64_t gm_heap, std::uint64_t gm_sm,
                              std::uint64_t bytes, void **out);
  // Kernel mode, host-build: places `pool_bytes` in bank 0's runtime pool (as
  // place_resident_image) and the definition `definition_key` in slot 0's graph-definition
  // store. Both are checked against the frozen capacity before either is touched.
  Status place_host_build(GrowthContext growth, std::uint64_t gm_heap, std::uint64_t pool_bytes,
                          std::uint64_t definition_key, std::uint64_t definition_bytes, void **pool,
                          GraphDefinitionStore::Placement *definition);

  RegionStats region_stats(GrowthPoint point) const;
  // Counts a capacity refusal against its growth point; other statuses are ignored.
  void record_refusal(const Status &status) noexcept;

  // Releases every buffer (finalize): banks, retained slots, resident images, caches.
  void release_all() noexcept;

  DeviceAllocator runtime_allocator() noexcept;

 private:
  struct Slot {
    explicit Slot(DeviceAllocator allocator)
        : bank(allocator), retained(allocator), definitions(allocator), staging(allocator) {}
    ArenaBank bank;
    RetainedBuffer retained;
    GraphDefinitionStore definitions;
    HostStaging staging;
    std::uint64_t last_staging_request = 0;
    PrebuiltImageCache image_cache;
    BankRequest last_request;
    std::uint64_t last_retained_request = 0;
  };

  static void *allocate_counted(void *self, std::size_t bytes);
  static int free_counted(void *self, void *ptr) noexcept;
  Status setup_static_arena_locked(GrowthContext growth, int bank, const BankRequest &request);
  Status place_resident_locked(GrowthContext growth, std::uint64_t gm_heap, std::uint64_t gm_sm,
                               std::uint64_t bytes, void **out);

  Device &device_;
  ExecutionModeLatch latch_;
  ContextCounters counters_;
  mutable std::mutex mutex_;
  std::array<std::unique_ptr<Slot>, kPipelineDepth> slots_;
  std::uint64_t resident_used_ = 0;
  DfxCollectors dfx_;
  std::atomic<bool> profiling_{false};
};

}  // namespace replayrt
