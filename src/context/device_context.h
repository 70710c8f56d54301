// DeviceContext: one device context. It creates and owns every device buffer a run or launch
// can reference, holds the execution-mode latch, and keeps the statistics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <replayrt/values.h>

#include "common/align.h"
#include "common/function_ref.h"
#include "common/growth_point.h"
#include "context/capacity_plan.h"
#include "context/execution_mode_latch.h"
#include "context/slot_view.h"
#include "memory/arena_bank.h"
#include "memory/block_transaction.h"
#include "memory/graph_definition_store.h"
#include "memory/guarded_block.h"
#include "memory/prebuilt_image_cache.h"
#include "memory/profiling_collectors.h"
#include "platform/device.h"

namespace replayrt {

// Monotonic counters, except live_bytes: the bytes the context's blocks asked for and hold
// now (a device may round each allocation up; that is not counted), so it is the sum of the
// regions' capacities outside a transaction. Every field is updated atomically and read
// without a lock.
struct ContextCounters {
  std::atomic<std::uint64_t> device_alloc_calls{0};
  std::atomic<std::uint64_t> device_free_calls{0};
  std::atomic<std::uint64_t> failed_frees{0};
  std::atomic<std::uint64_t> live_bytes{0};
  std::atomic<std::uint64_t> peak_bytes{0};
  std::atomic<std::uint64_t> launches{0};
  std::atomic<std::uint64_t> replays{0};
  std::atomic<std::uint64_t> stale_address_refusals{0};
  std::array<std::atomic<std::uint64_t>, kGrowthPointCount> refusals{};
};

struct RegionStats {
  std::uint64_t capacity = 0;      // bytes held now, over every block of the growth point
  std::uint64_t used = 0;          // bytes the most recent requests asked for
  std::uint64_t base_changes = 0;  // published bases moved (teardown excluded)
};

// A copy of the counters (failed_frees aside) and of every growth point's region, each read
// on its own: concurrent calls can make two fields disagree by their work in flight.
struct ContextStatistics {
  std::uint64_t device_alloc_calls = 0;
  std::uint64_t device_free_calls = 0;
  std::uint64_t live_bytes = 0;
  std::uint64_t peak_bytes = 0;
  std::uint64_t launches = 0;
  std::uint64_t replays = 0;
  std::uint64_t stale_address_refusals = 0;
  std::array<std::uint64_t, kGrowthPointCount> refusals{};
  std::array<RegionStats, kGrowthPointCount> regions{};
};

// Kernel mode: what a prepared callable occupies in the frozen capacity.
struct ResidentRequest {
  std::uint64_t gm_heap = 0;     // bank 0's gm_heap must hold this much
  std::uint64_t gm_sm = 0;       // bank 0's gm_sm must hold this much
  std::uint64_t pool_bytes = 0;  // appended to the resident pool (bank 0's runtime_pool)
  bool place_definition = false;
  std::uint64_t definition_key = 0;  // placed in slot 0's graph-definition store
  std::uint64_t definition_bytes = 0;
  std::uint64_t definition_binding = 0;
  std::uint32_t profile_tasks = 0;
};

// Where a resident placement lies once its transaction commits.
struct ResidentGrant {
  void *pool = nullptr;        // the appended space; null when pool_bytes was 0
  void *definition = nullptr;  // the definition's place; null without place_definition
  BankBases bases;
};

// What one placement in a pipeline slot (a program-mode reservation or a kernel-mode resident
// placement) sizes as one transaction: its blocks, its graph definition's room, and whether it
// sized the profiling collectors. DeviceContext plans, stages and publishes it.
struct SlotPlacement {
  BlockTransaction blocks;
  GraphDefinitionStore::Pending definition;
  BankBases bases_before;
  bool profiled = false;
  bool places_definition = false;
};

// Owns, per pipeline slot (kPipelineDepth of them; slot i uses arena bank i): an ArenaBank
// with its PrebuiltImageCache, a retained-staging block, a graph-definition store and a
// host-staging block; once for the context: the profiling collectors, the latch and the
// counters. In kernel mode bank 0's runtime_pool is the resident pool prepared callables
// are appended to. The context is the only BlockHost: every block above takes its mode from
// the latch and "inside a launch" from a LaunchScope, and allocates through allocate().
//
// Backstop: once the latch says KERNEL, allocate() refuses (growth point launch_allocation)
// any allocation that is not a block's first allocation outside a launch, whatever the
// block decided, so a path that bypasses the guard fails instead of re-basing.
//
// Every operation that sizes several blocks is one transaction (BlockTransaction): decide
// all, stage all, publish all, free superseded backings last; a refusal or a failed
// allocation changes nothing.
//
// Thread safety: every member may be called from any thread; block operations serialize on
// an internal mutex.
class DeviceContext final : public BlockHost {
 public:
  static constexpr int kPipelineDepth = 2;
  // Resident images and scheduler seeds start at multiples of this in the resident pool.
  static constexpr std::uint64_t kResidentAlignment = kDeviceAddressAlignment;

  // `device` must outlive the context.
  explicit DeviceContext(Device &device);
  ~DeviceContext() override;
  DeviceContext(const DeviceContext &) = delete;
  DeviceContext &operator=(const DeviceContext &) = delete;
  DeviceContext(DeviceContext &&) = delete;
  DeviceContext &operator=(DeviceContext &&) = delete;

  Device &device() noexcept { return device_; }
  ExecutionModeLatch &latch() noexcept { return latch_; }
  const ExecutionModeLatch &latch() const noexcept { return latch_; }
  ContextCounters &counters() noexcept { return counters_; }
  const ContextCounters &counters() const noexcept { return counters_; }

  // BlockHost.
  GrowthContext growth_context() const noexcept override;
  Status allocate(const GuardedBlock &block, std::size_t bytes, void **out) noexcept override;
  bool free(void *ptr, std::size_t bytes) noexcept override;
  Status zero(void *ptr, std::size_t bytes) noexcept override;
  void count_refusal(GrowthPoint point) noexcept override;

  // Program pipeline: claims a free slot (RRT_ERR_INVALID_STATE when every slot holds a run)
  // and releases it.
  Status claim_slot(int *out);
  void release_slot(int slot) noexcept;
  // The slot view binds use; `slot` < kPipelineDepth.
  SlotView &slot(int slot) noexcept;

  // Kernel init: commits `plan` as one transaction (bank 0; slot 0's retained staging,
  // graph-definition store and host staging; the collectors for `profile_tasks` tasks when
  // profiling is on). `decide` runs once everything is staged and zeroed and before anything
  // is published: it is the caller's commit point, and only what cannot fail runs after it.
  // A failure or a throw anywhere, `decide` included, leaves nothing allocated.
  Status commit_capacity_plan(const CapacityPlan &plan, std::uint32_t profile_tasks,
                              FunctionRef<Status()> decide);

  // Kernel mode, outside launches: places a prepared callable in the frozen capacity, as one
  // transaction from construction to commit().
  //   stage()   decides and stages every block the request needs (the profiling collectors,
  //             the definition store, bank 0's regions), zeroes staged collectors and says
  //             where everything lies once published (grant()). A refusal or a failure is
  //             returned with the context as it was.
  //   ...       the caller builds and uploads into the granted addresses: nothing published
  //             refers to them yet.
  //   commit()  publishes the blocks, the resident pool's new end and the definition's key
  //             (as uploaded). It cannot fail.
  // Destroyed before commit() (a failed build or upload, an exception), it frees every
  // backing it staged: offsets, keys, first allocations and statistics are as before.
  // Holds the context's lock for its whole life, so the caller must not call the context
  // (its device is fine) until the transaction is gone. One per context at a time.
  class ResidentTransaction {
   public:
    explicit ResidentTransaction(DeviceContext &context);
    ~ResidentTransaction() = default;
    ResidentTransaction(const ResidentTransaction &) = delete;
    ResidentTransaction &operator=(const ResidentTransaction &) = delete;
    ResidentTransaction(ResidentTransaction &&) = delete;
    ResidentTransaction &operator=(ResidentTransaction &&) = delete;

    // Once per transaction.
    Status stage(const ResidentRequest &request);
    // Valid after a successful stage().
    const ResidentGrant &grant() const noexcept { return grant_; }
    // Requires a successful stage().
    void commit() noexcept;

   private:
    DeviceContext &context_;
    std::unique_lock<std::mutex> lock_;
    SlotPlacement placement_;
    ResidentRequest request_;
    ResidentGrant grant_;
    std::uint64_t pool_end_ = 0;
  };

  // Profiling is chosen once, before init.
  void enable_profiling() noexcept { profiling_.store(true, std::memory_order_release); }
  bool profiling() const noexcept { return profiling_.load(std::memory_order_acquire); }
  // Program mode, profiling on: whether binding a run of `tasks` tasks into `slot` would
  // rebuild the collectors (*rebuild), freeing the ones both slots' work writes now. A rebuild
  // while another slot holds a run is RRT_ERR_PREPARED_INCOMPATIBLE, as the bind would be.
  Status check_collectors_rebuild(int slot, std::uint32_t tasks, bool *rebuild) const;
  // The wall record of the area of `slot` and its first `count` task records (at most the
  // collectors' shape; *read says how many). Program mode: the slot's most recent run; kernel
  // mode: the most recent launch or replay, whose launches write their records one after
  // another. RRT_ERR_INVALID_STATE when profiling is off.
  Status read_task_records(int slot, LaunchRecord *record, TaskTiming *timings, std::uint32_t count,
                           std::uint32_t *read) const;

  RegionStats region_stats(GrowthPoint point) const;
  ContextStatistics statistics() const;
  // What the context publishes besides its blocks' bases and sizes: each slot's stored
  // graph-definition keys and prebuilt image, and the resident pool's end. For tests that
  // check a failed call changed nothing; takes the context's lock.
  struct PublishedKeys {
    std::array<std::vector<GraphDefinitionStore::StoredKey>, kPipelineDepth> definitions;
    std::array<std::optional<PrebuiltImageCache::Entry>, kPipelineDepth> prebuilt_images;
    std::uint64_t resident_used = 0;
    bool operator==(const PublishedKeys &) const = default;
  };
  PublishedKeys published_keys() const;
  // Calls `visit` for every block the context created, live or empty.
  void for_each_block(const std::function<void(const GuardedBlock &)> &visit) const;

  // Releases every buffer (finalize): banks, staging, stores, resident images, caches.
  void release_all() noexcept;

 private:
  class Slot;

  Status reserve_slot(Slot &slot, const SlotRequest &request, SlotGrant *grant);
  // check_collectors_rebuild; the caller holds mutex_.
  Status check_collectors_rebuild_locked(int slot, std::uint32_t tasks, bool *rebuild) const;
  // The steps every slot placement takes, in this order; each requires the lock.
  //   plan_collectors   with profiling on and `tasks` != 0, the collectors for task records
  //                     up to `first_record` + `tasks`;
  //   plan_definition   room for the definition `key` of `bytes` in the slot's store;
  //   ...               the caller plans the other blocks into placement.blocks;
  //   stage_placement   stages every block planned and zeroes the staged collectors;
  //   fill_placement    runs the request's fill; when it fails (or throws) with the runtime
  //                     pool kept, forgets the slot's prebuilt images, which the pool, filled
  //                     in place, may no longer hold;
  //   publish_placement publishes the blocks, forgets the slot's prebuilt images if its bank
  //                     moved, latches the collectors' shape and places the definition with
  //                     `binding` (`uploaded`: its contents are written). It cannot fail.
  // A placement destroyed before it is published frees everything it staged.
  Status plan_collectors(SlotPlacement &placement, std::uint32_t tasks, std::uint32_t first_record);
  Status plan_definition(Slot &slot, SlotPlacement &placement, std::uint64_t key,
                         std::uint64_t bytes);
  Status stage_placement(Slot &slot, SlotPlacement &placement);
  Status fill_placement(Slot &slot, const SlotRequest &request, const SlotGrant &grant);
  void publish_placement(Slot &slot, SlotPlacement &placement, std::uint64_t binding,
                         bool uploaded) noexcept;

  Device &device_;
  ExecutionModeLatch latch_;
  ContextCounters counters_;
  mutable std::mutex mutex_;
  std::array<std::unique_ptr<Slot>, kPipelineDepth> slots_;
  std::array<bool, kPipelineDepth> slot_busy_{};
  std::uint64_t resident_used_ = 0;
  ProfilingCollectors profiling_collectors_;
  std::atomic<bool> profiling_{false};
};

}  // namespace replayrt
