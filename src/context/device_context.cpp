#include "context/device_context.h"

#include <algorithm>

#include "common/format.h"

namespace replayrt {

namespace {

DeviceContext &runner_of(void *runner) {
  return *static_cast<DeviceContext *>(runner);
}

bool valid_index(int index) {
  return index >= 0 && index < DeviceContext::kPipelineDepth;
}

Status bad_index(const char *what, int index) {
  return Status::error(RRT_ERR_INVALID_ARGUMENT,
                       format("%s %d is out of range (pipeline depth %d)", what, index,
                              DeviceContext::kPipelineDepth));
}

void raise_peak(std::atomic<std::uint64_t> &peak, std::uint64_t value) {
  std::uint64_t seen = peak.load(std::memory_order_relaxed);
  while (seen < value && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

const HostApiOps kHostApiOps = {
    .device_malloc = [](void *runner, GrowthContext growth, std::size_t bytes,
                        void **out) { return runner_of(runner).device_malloc(growth, bytes, out); },
    .device_free = [](void *runner, void *ptr) { return runner_of(runner).device_free(ptr); },
    .copy_to_device =
        [](void *runner, void *dst, const void *src, std::size_t bytes) {
          return runner_of(runner).device().copy_host_to_device(dst, src, bytes);
        },
    .copy_from_device =
        [](void *runner, void *dst, const void *src, std::size_t bytes) {
          return runner_of(runner).device().copy_device_to_host(dst, src, bytes);
        },
    .retained_begin =
        [](void *runner, GrowthContext growth, int slot, std::uint64_t required) {
          return runner_of(runner).retained_begin(growth, slot, required);
        },
    .retained_acquire =
        [](void *runner, int slot, std::uint64_t bytes) {
          return runner_of(runner).retained_acquire(slot, bytes);
        },
    .setup_static_arena =
        [](void *runner, GrowthContext growth, int bank, const BankRequest &request) {
          return runner_of(runner).setup_static_arena(growth, bank, request);
        },
    .pooled_bases = [](void *runner, int bank) { return runner_of(runner).pooled_bases(bank); },
    .pooled_sizes = [](void *runner, int bank) { return runner_of(runner).pooled_sizes(bank); },
    .lookup_prebuilt_image =
        [](void *runner, int bank, std::uint64_t key, PrebuiltImageCache::Entry *out) {
          return runner_of(runner).lookup_prebuilt_image(bank, key, out);
        },
    .store_prebuilt_image =
        [](void *runner, const PrebuiltImageCache::Entry &entry) {
          runner_of(runner).store_prebuilt_image(entry);
        },
    .acquire_graph_definition =
        [](void *runner, GrowthContext growth, int slot, std::uint64_t key, std::uint64_t bytes,
           GraphDefinitionStore::Placement *out) {
          return runner_of(runner).acquire_graph_definition(growth, slot, key, bytes, out);
        },
    .host_staging_begin =
        [](void *runner, GrowthContext growth, int slot, std::uint64_t required) {
          return runner_of(runner).host_staging_begin(growth, slot, required);
        },
    .host_staging_stage =
        [](void *runner, GrowthContext growth, int slot, std::uint64_t bytes, void **out) {
          return runner_of(runner).host_staging_stage(growth, slot, bytes, out);
        },
    .profile_area =
        [](void *runner, GrowthContext growth, int slot, std::uint32_t tasks, TaskTiming **timings,
           LaunchRecord **wall) {
          return runner_of(runner).profile_area(growth, slot, tasks, timings, wall);
        },
    .is_kernel_mode = [](void *runner) { return runner_of(runner).latch().is_kernel(); },
};

}  // namespace

DeviceContext::DeviceContext(Device &device)
    : device_(device), dfx_(runtime_allocator(), kPipelineDepth) {
  for (auto &slot : slots_) {
    slot = std::make_unique<Slot>(runtime_allocator());
  }
}

DeviceContext::~DeviceContext() {
  release_all();
}

const HostApiOps &DeviceContext::host_api_ops() noexcept {
  return kHostApiOps;
}

DeviceAllocator DeviceContext::runtime_allocator() noexcept {
  return DeviceAllocator{this, &DeviceContext::allocate_counted, &DeviceContext::free_counted};
}

void *DeviceContext::allocate_counted(void *self, std::size_t bytes) {
  auto &context = *static_cast<DeviceContext *>(self);
  void *ptr = context.device_.allocate(bytes);
  if (ptr == nullptr) {
    return nullptr;
  }
  const auto info = context.device_.find_allocation(ptr);
  const std::uint64_t size = info ? info->size : bytes;
  context.counters_.device_alloc_calls.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t live =
      context.counters_.live_bytes.fetch_add(size, std::memory_order_relaxed) + size;
  raise_peak(context.counters_.peak_bytes, live);
  return ptr;
}

int DeviceContext::free_counted(void *self, void *ptr) noexcept {
  auto &context = *static_cast<DeviceContext *>(self);
  try {
    const auto info = context.device_.find_allocation(ptr);
    if (!context.device_.free(ptr).is_ok()) {
      return -1;
    }
    context.counters_.device_free_calls.fetch_add(1, std::memory_order_relaxed);
    if (info) {
      context.counters_.live_bytes.fetch_sub(info->size, std::memory_order_relaxed);
    }
    return 0;
  } catch (...) {
    return -1;
  }
}

Status DeviceContext::device_malloc(GrowthContext growth, std::size_t bytes, void **out) {
  const GrowthRequest request{.point = GrowthPoint::kLaunchAllocation,
                              .context = growth,
                              .published = false,
                              .capacity = 0,
                              .required = bytes,
                              .zero = ZeroRequest::kKeeps};
  const GrowthDecision decision = decide_growth(request);
  if (decision == GrowthDecision::kRefuse) {
    Status refusal = refuse_growth(request);
    record_refusal(refusal);
    return refusal;
  }
  if (bytes == 0) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "device allocation of zero bytes");
  }
  void *ptr = allocate_or_null(runtime_allocator(), bytes);
  if (ptr == nullptr) {
    return Status::error(RRT_ERR_OUT_OF_MEMORY,
                         format("device allocation of %zu bytes failed", bytes));
  }
  *out = ptr;
  return Status::ok();
}

Status DeviceContext::device_free(void *ptr) {
  if (free_counted(this, ptr) != 0) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("device free of %p: not a live runtime allocation", ptr));
  }
  return Status::ok();
}

Status DeviceContext::retained_begin(GrowthContext growth, int slot, std::uint64_t required) {
  if (!valid_index(slot)) {
    return bad_index("pipeline slot", slot);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  Slot &s = *slots_[static_cast<std::size_t>(slot)];
  Status status = s.retained.begin(required, growth);
  if (status.is_ok()) {
    s.last_retained_request = required;
  }
  record_refusal(status);
  return status;
}

void *DeviceContext::retained_acquire(int slot, std::uint64_t bytes) {
  if (!valid_index(slot)) {
    return nullptr;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  return slots_[static_cast<std::size_t>(slot)]->retained.acquire(bytes);
}

Status DeviceContext::setup_static_arena(GrowthContext growth, int bank,
                                         const BankRequest &request) {
  if (!valid_index(bank)) {
    return bad_index("arena bank", bank);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  return setup_static_arena_locked(growth, bank, request);
}

Status DeviceContext::setup_static_arena_locked(GrowthContext growth, int bank,
                                                const BankRequest &request) {
  Slot &s = *slots_[static_cast<std::size_t>(bank)];
  BankCommitOutcome outcome = s.bank.commit(request, growth);
  if (outcome.bases_changed) {
    s.image_cache.invalidate_bank(bank);
  }
  if (outcome.status.is_ok()) {
    s.last_request = request;
  }
  record_refusal(outcome.status);
  return std::move(outcome.status);
}

BankBases DeviceContext::pooled_bases(int bank) const {
  if (!valid_index(bank)) {
    return {};
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  return slots_[static_cast<std::size_t>(bank)]->bank.bases();
}

BankRequest DeviceContext::pooled_sizes(int bank) const {
  if (!valid_index(bank)) {
    return {};
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  const ArenaBank &b = slots_[static_cast<std::size_t>(bank)]->bank;
  return BankRequest{b.cached_size(BankRegion::kGmHeap), b.cached_size(BankRegion::kGmSm),
                     b.cached_size(BankRegion::kRuntimePool)};
}

bool DeviceContext::lookup_prebuilt_image(int bank, std::uint64_t key,
                                          PrebuiltImageCache::Entry *out) const {
  if (!valid_index(bank)) {
    return false;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  const Slot &s = *slots_[static_cast<std::size_t>(bank)];
  return s.image_cache.lookup(bank, key, s.bank.bases(), out);
}

void DeviceContext::store_prebuilt_image(const PrebuiltImageCache::Entry &entry) {
  if (!valid_index(entry.bank)) {
    return;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  slots_[static_cast<std::size_t>(entry.bank)]->image_cache.store(entry);
}

Status DeviceContext::commit_capacity_plan(const rrt_capacity_plan_t &plan,
                                           std::uint32_t profile_tasks) {
  const GrowthContext kernel{ExecutionMode::kKernel, false};
  RRT_RETURN_IF_ERROR(setup_static_arena(
      kernel, 0, BankRequest{plan.gm_heap_bytes, plan.gm_sm_bytes, plan.runtime_pool_bytes}));
  RRT_RETURN_IF_ERROR(retained_begin(kernel, 0, plan.retained_staging_bytes));
  const std::lock_guard<std::mutex> lock(mutex_);
  Slot &s = *slots_[0];
  RRT_RETURN_IF_ERROR(s.definitions.commit(plan.graph_definition_bytes, kernel));
  RRT_RETURN_IF_ERROR(s.staging.commit(plan.host_staging_bytes, kernel));
  if (profiling() && profile_tasks != 0) {
    RRT_RETURN_IF_ERROR(dfx_.ensure(profile_tasks, kernel));
  }
  return Status::ok();
}

Status DeviceContext::acquire_graph_definition(GrowthContext growth, int slot, std::uint64_t key,
                                               std::uint64_t bytes,
                                               GraphDefinitionStore::Placement *out) {
  if (!valid_index(slot)) {
    return bad_index("pipeline slot", slot);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  Status status =
      slots_[static_cast<std::size_t>(slot)]->definitions.acquire(key, bytes, growth, out);
  record_refusal(status);
  return status;
}

Status DeviceContext::host_staging_begin(GrowthContext growth, int slot, std::uint64_t required) {
  if (!valid_index(slot)) {
    return bad_index("pipeline slot", slot);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  Slot &s = *slots_[static_cast<std::size_t>(slot)];
  Status status = s.staging.begin(required, growth);
  if (status.is_ok()) {
    s.last_staging_request = required;
  }
  record_refusal(status);
  return status;
}

Status DeviceContext::host_staging_stage(GrowthContext growth, int slot, std::uint64_t bytes,
                                         void **out) {
  if (!valid_index(slot)) {
    return bad_index("pipeline slot", slot);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  Status status = slots_[static_cast<std::size_t>(slot)]->staging.stage(bytes, growth, out);
  record_refusal(status);
  return status;
}

void DeviceContext::end_host_staging(int slot) noexcept {
  if (!valid_index(slot)) {
    return;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  slots_[static_cast<std::size_t>(slot)]->staging.end_run();
}

Status DeviceContext::profile_area(GrowthContext growth, int slot, std::uint32_t tasks,
                                   TaskTiming **timings, LaunchRecord **wall) {
  *timings = nullptr;
  *wall = nullptr;
  if (!profiling()) {
    return Status::ok();
  }
  if (!valid_index(slot)) {
    return bad_index("pipeline slot", slot);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  Status status = dfx_.ensure(tasks, growth);
  record_refusal(status);
  RRT_RETURN_IF_ERROR(status);
  *timings = dfx_.timings(slot);
  *wall = dfx_.wall(slot);
  return Status::ok();
}

Status DeviceContext::profile_preflight(GrowthContext growth, std::uint32_t tasks) {
  if (!profiling()) {
    return Status::ok();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  Status status = dfx_.preflight(tasks, growth);
  record_refusal(status);
  return status;
}

bool DeviceContext::profile_would_rebuild(std::uint32_t tasks) const {
  if (!profiling()) {
    return false;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  return dfx_.would_rebuild(tasks);
}

Status DeviceContext::read_profile(int slot, LaunchRecord *record, TaskTiming *timings,
                                   std::uint32_t capacity) const {
  if (!profiling()) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "profiling is off for this context (rrt_context_options_t.profiling)");
  }
  if (!valid_index(slot)) {
    return bad_index("pipeline slot", slot);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  const LaunchRecord *wall = dfx_.wall(slot);
  if (wall == nullptr) {
    *record = LaunchRecord{};
    return Status::ok();
  }
  RRT_RETURN_IF_ERROR(device_.copy_device_to_host(record, wall, sizeof(LaunchRecord)));
  const std::uint32_t count = std::min({record->tasks, capacity, dfx_.shape()});
  if (count != 0 && timings != nullptr) {
    RRT_RETURN_IF_ERROR(
        device_.copy_device_to_host(timings, dfx_.timings(slot), count * sizeof(TaskTiming)));
  }
  return Status::ok();
}

Status DeviceContext::place_resident_image(GrowthContext growth, std::uint64_t gm_heap,
                                           std::uint64_t gm_sm, std::uint64_t bytes, void **out) {
  const std::lock_guard<std::mutex> lock(mutex_);
  return place_resident_locked(growth, gm_heap, gm_sm, bytes, out);
}

Status DeviceContext::place_host_build(GrowthContext growth, std::uint64_t gm_heap,
                                       std::uint64_t pool_bytes, std::uint64_t definition_key,
                                       std::uint64_t definition_bytes, void **pool,
                                       GraphDefinitionStore::Placement *definition) {
  const std::lock_guard<std::mutex> lock(mutex_);
  Slot &s = *slots_[0];
  Status fits = s.definitions.preflight(definition_key, definition_bytes, growth);
  if (!fits.is_ok()) {
    record_refusal(fits);
    return fits;
  }
  const std::uint64_t resident_before = resident_used_;
  RRT_RETURN_IF_ERROR(place_resident_locked(growth, gm_heap, 0, pool_bytes, pool));
  Status placed = s.definitions.acquire(definition_key, definition_bytes, growth, definition);
  if (!placed.is_ok()) {
    // Only an allocation failure of an empty store gets here; the pool space it took was
    // never handed out.
    resident_used_ = resident_before;
    *pool = nullptr;
  }
  record_refusal(placed);
  return placed;
}

Status DeviceContext::place_resident_locked(GrowthContext growth, std::uint64_t gm_heap,
                                            std::uint64_t gm_sm, std::uint64_t bytes, void **out) {
  Slot &s = *slots_[0];
  const std::uint64_t offset =
      (resident_used_ + kResidentAlignment - 1) / kResidentAlignment * kResidentAlignment;
  const BankRequest request{
      std::max(gm_heap, s.bank.cached_size(BankRegion::kGmHeap)),
      std::max(gm_sm, s.bank.cached_size(BankRegion::kGmSm)),
      std::max(offset + bytes, s.bank.cached_size(BankRegion::kRuntimePool)),
  };
  RRT_RETURN_IF_ERROR(setup_static_arena_locked(growth, 0, request));
  resident_used_ = offset + bytes;
  *out = static_cast<std::byte *>(s.bank.base(BankRegion::kRuntimePool)) + offset;
  return Status::ok();
}

RegionStats DeviceContext::region_stats(GrowthPoint point) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  RegionStats stats;
  for (const auto &slot : slots_) {
    switch (point) {
      case GrowthPoint::kArenaGmHeap:
      case GrowthPoint::kArenaGmSm:
      case GrowthPoint::kArenaRuntimePool: {
        const auto region = static_cast<BankRegion>(growth_point_index(point));
        stats.capacity += slot->bank.cached_size(region);
        stats.used += slot->last_request.bytes(region);
        stats.base_changes += slot->bank.base_changes(region);
        break;
      }
      case GrowthPoint::kRetainedStaging:
        stats.capacity += slot->retained.capacity();
        stats.used += slot->last_retained_request;
        stats.base_changes += slot->retained.base_changes();
        break;
      case GrowthPoint::kGraphDefinition:
        stats.capacity += slot->definitions.capacity();
        stats.used += slot->definitions.used();
        stats.base_changes += slot->definitions.base_changes();
        break;
      case GrowthPoint::kHostStaging:
        stats.capacity += slot->staging.capacity();
        stats.used += slot->last_staging_request;
        break;
      default:
        break;
    }
  }
  if (point == GrowthPoint::kArenaRuntimePool && latch_.is_kernel()) {
    stats.used = resident_used_;
  }
  if (point == GrowthPoint::kDfxCollectors) {
    stats.capacity = dfx_.pool_bytes();
    stats.used = dfx_.pool_bytes();
    stats.base_changes = dfx_.base_changes();
  }
  return stats;
}

void DeviceContext::record_refusal(const Status &status) noexcept {
  if (!status.is_capacity_refusal()) {
    return;
  }
  const int index = growth_point_index(status.growth_point());
  if (index >= 0 && index < kGrowthPointCount) {
    counters_.refusals[static_cast<std::size_t>(index)].fetch_add(1, std::memory_order_relaxed);
  }
}

void DeviceContext::release_all() noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (auto &slot : slots_) {
    slot->image_cache.clear();
    slot->bank.release_all();
    slot->retained.release();
    slot->definitions.release();
    slot->staging.release();
    slot->last_staging_request = 0;
    slot->last_request = BankRequest{};
    slot->last_retained_request = 0;
  }
  resident_used_ = 0;
  dfx_.release();
}

}  // namespace replayrt
