#include "context/device_context.h"

#include <algorithm>

#include "common/align.h"
#include "common/format.h"
#include "context/launch_scope.h"
#include "memory/block_transaction.h"

namespace replayrt {

namespace {

thread_local const DeviceContext *t_launching = nullptr;

void raise_peak(std::atomic<std::uint64_t> &peak, std::uint64_t value) {
  std::uint64_t seen = peak.load(std::memory_order_relaxed);
  while (seen < value && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

LaunchScope::LaunchScope(const DeviceContext &context) noexcept {
  t_launching = &context;
}

LaunchScope::~LaunchScope() {
  t_launching = nullptr;
}

bool LaunchScope::is_open_for(const DeviceContext &context) noexcept {
  return t_launching == &context;
}

class DeviceContext::Slot final : public SlotView {
 public:
  Slot(DeviceContext &context, int index)
      : context_(context),
        index_(index),
        bank(context),
        retained(context, GrowthPoint::kRetainedStaging),
        definitions(context),
        host_staging(context, GrowthPoint::kHostStaging) {}

  int index() const noexcept override { return index_; }
  ExecutionMode mode() const noexcept override {
    return context_.latch_.is_kernel() ? ExecutionMode::kKernel : ExecutionMode::kProgram;
  }
  Status reserve(const SlotRequest &request, SlotGrant *grant) override {
    // A kernel-mode launch that stages nothing and records no profile sizes no block: it
    // needs neither the lock nor the bases, which cannot change after kernel init.
    const bool sizes_nothing = request.staging_bytes == 0 && !request.size_bank &&
                               !request.place_definition &&
                               (request.profile_tasks == 0 || !context_.profiling());
    if (sizes_nothing && context_.latch_.is_kernel()) {
      *grant = SlotGrant{};
      return Status::ok();
    }
    const std::lock_guard<std::mutex> lock(context_.mutex_);
    return context_.reserve_slot(*this, request, grant);
  }
  Status upload(void *dst, const void *src, std::size_t bytes) override {
    return context_.device_.copy_host_to_device(dst, src, bytes);
  }
  BankBases bank_bases() const override {
    const std::lock_guard<std::mutex> lock(context_.mutex_);
    return bank.bases();
  }
  BankRequest bank_capacities() const override {
    const std::lock_guard<std::mutex> lock(context_.mutex_);
    return bank.capacities();
  }
  bool find_prebuilt(std::uint64_t key, PrebuiltImageCache::Entry *out) const override {
    const std::lock_guard<std::mutex> lock(context_.mutex_);
    return image_cache.lookup(index_, key, bank.bases(), out);
  }
  void remember_prebuilt(const PrebuiltImageCache::Entry &entry) override {
    const std::lock_guard<std::mutex> lock(context_.mutex_);
    image_cache.store(entry);
  }

  GuardedBlock &staging(StagingKind kind) noexcept {
    return kind == StagingKind::kRetained ? retained : host_staging;
  }

  void release() noexcept {
    image_cache.clear();
    bank.release_all();
    retained.release();
    definitions.release();
    host_staging.release();
  }

 private:
  DeviceContext &context_;
  int index_;

 public:
  ArenaBank bank;
  GuardedBlock retained;
  GraphDefinitionStore definitions;
  GuardedBlock host_staging;
  PrebuiltImageCache image_cache;
};

DeviceContext::DeviceContext(Device &device)
    : device_(device), profiling_collectors_(*this, kPipelineDepth) {
  for (int i = 0; i < kPipelineDepth; ++i) {
    slots_[static_cast<std::size_t>(i)] = std::make_unique<Slot>(*this, i);
  }
}

DeviceContext::~DeviceContext() {
  release_all();
}

GrowthContext DeviceContext::growth_context() const noexcept {
  return GrowthContext{latch_.is_kernel() ? ExecutionMode::kKernel : ExecutionMode::kProgram,
                       LaunchScope::is_open_for(*this)};
}

Status DeviceContext::allocate(const GuardedBlock &block, std::size_t bytes, void **out) noexcept {
  const bool refused =
      latch_.is_kernel() && (block.is_published() || LaunchScope::is_open_for(*this));
  if (refused) {
    count_refusal(GrowthPoint::kLaunchAllocation);
  }
  // Every message below allocates; under host OOM the status goes without its detail.
  try {
    if (refused) {
      return Status::capacity_refusal(
          GrowthPoint::kLaunchAllocation, bytes, block.capacity(),
          format("kernel-mode capacity refusal at launch_allocation: %s asked for a %zu-byte "
                 "device allocation that is not its first allocation outside a launch; after "
                 "kernel init only an empty block may allocate",
                 growth_point_name(block.point()), bytes));
    }
    void *ptr = nullptr;
    if (Status allocated = device_.try_allocate(bytes, &ptr); !allocated.is_ok()) {
      return Status::error(
          allocated.code(),
          format("device allocation of %zu bytes for %s failed (%s); nothing "
                 "changed",
                 bytes, growth_point_name(block.point()), allocated.message().c_str()));
    }
    counters_.device_alloc_calls.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t live =
        counters_.live_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    raise_peak(counters_.peak_bytes, live);
    *out = ptr;
    return Status::ok();
  } catch (...) {
    return Status::error_without_detail(refused ? RRT_ERR_INTERNAL : RRT_ERR_OUT_OF_MEMORY);
  }
}

bool DeviceContext::free(void *ptr, std::size_t bytes) noexcept {
  bool freed = false;
  try {
    freed = device_.free(ptr).is_ok();
  } catch (...) {
    freed = false;
  }
  if (!freed) {
    counters_.failed_frees.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  counters_.device_free_calls.fetch_add(1, std::memory_order_relaxed);
  counters_.live_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  return true;
}

Status DeviceContext::zero(void *ptr, std::size_t bytes) noexcept {
  try {
    return device_.memset(ptr, 0, bytes);
  } catch (...) {
    return Status::error_without_detail(RRT_ERR_INTERNAL);
  }
}

void DeviceContext::count_refusal(GrowthPoint point) noexcept {
  const int index = growth_point_index(point);
  if (index >= 0 && index < kGrowthPointCount) {
    counters_.refusals[static_cast<std::size_t>(index)].fetch_add(1, std::memory_order_relaxed);
  }
}

Status DeviceContext::claim_slot(int *out) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (int i = 0; i < kPipelineDepth; ++i) {
    if (!slot_busy_[static_cast<std::size_t>(i)]) {
      slot_busy_[static_cast<std::size_t>(i)] = true;
      *out = i;
      return Status::ok();
    }
  }
  return Status::error(
      RRT_ERR_INVALID_STATE,
      format("all %d pipeline slots hold runs; finalize one first", kPipelineDepth));
}

void DeviceContext::release_slot(int slot) noexcept {
  if (slot < 0 || slot >= kPipelineDepth) {
    return;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  slot_busy_[static_cast<std::size_t>(slot)] = false;
}

SlotView &DeviceContext::slot(int slot) noexcept {
  return *slots_[static_cast<std::size_t>(slot)];
}

Status DeviceContext::plan_collectors(SlotPlacement &placement, std::uint32_t tasks,
                                      std::uint32_t first_record) {
  placement.profiled = profiling() && tasks != 0;
  if (!placement.profiled) {
    return Status::ok();
  }
  return profiling_collectors_.plan(placement.blocks, first_record + tasks);
}

Status DeviceContext::plan_definition(Slot &slot, SlotPlacement &placement, std::uint64_t key,
                                      std::uint64_t bytes) {
  placement.places_definition = true;
  placement.definition = slot.definitions.plan(key, bytes);
  return placement.blocks.add(slot.definitions.block(), placement.definition.required);
}

Status DeviceContext::stage_placement(Slot &slot, SlotPlacement &placement) {
  RRT_RETURN_IF_ERROR(placement.blocks.stage());
  if (placement.profiled) {
    RRT_RETURN_IF_ERROR(profiling_collectors_.zero_staged());
  }
  placement.bases_before = slot.bank.bases();
  return Status::ok();
}

void DeviceContext::publish_placement(Slot &slot, SlotPlacement &placement, std::uint64_t binding,
                                      bool uploaded) noexcept {
  placement.blocks.publish();
  if (slot.bank.bases() != placement.bases_before) {
    slot.image_cache.invalidate_bank(slot.index());
  }
  if (placement.profiled) {
    profiling_collectors_.latch_shape();
  }
  if (placement.places_definition) {
    (void)slot.definitions.place(std::move(placement.definition), binding, uploaded);
  }
}

Status DeviceContext::check_collectors_rebuild(int slot, std::uint32_t tasks, bool *rebuild) const {
  *rebuild = false;
  if (!profiling()) {
    return Status::ok();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  return check_collectors_rebuild_locked(slot, tasks, rebuild);
}

Status DeviceContext::check_collectors_rebuild_locked(int slot, std::uint32_t tasks,
                                                      bool *rebuild) const {
  *rebuild = profiling() && tasks != 0 && !latch_.is_kernel() &&
             profiling_collectors_.would_rebuild(tasks);
  if (!*rebuild) {
    return Status::ok();
  }
  for (int other = 0; other < kPipelineDepth; ++other) {
    if (other != slot && slot_busy_[static_cast<std::size_t>(other)]) {
      return Status::error(
          RRT_ERR_PREPARED_INCOMPATIBLE,
          format("the run's %u tasks need larger profiling collectors, and the run in the "
                 "other pipeline slot is using them; finalize that run, then prepare again",
                 tasks));
    }
  }
  return Status::ok();
}

Status DeviceContext::reserve_slot(Slot &slot, const SlotRequest &request, SlotGrant *grant) {
  const bool profiled = profiling() && request.profile_tasks != 0;
  bool rebuild = false;
  RRT_RETURN_IF_ERROR(
      check_collectors_rebuild_locked(slot.index(), request.profile_tasks, &rebuild));
  SlotPlacement placement;
  RRT_RETURN_IF_ERROR(plan_collectors(placement, request.profile_tasks, request.profile_offset));
  GuardedBlock &staging = slot.staging(request.staging_kind);
  if (request.staging_bytes != 0) {
    RRT_RETURN_IF_ERROR(placement.blocks.add(staging, request.staging_bytes));
  }
  if (request.size_bank) {
    RRT_RETURN_IF_ERROR(slot.bank.plan(placement.blocks, request.bank));
  }
  if (request.place_definition) {
    RRT_RETURN_IF_ERROR(
        plan_definition(slot, placement, request.definition_key, request.definition_bytes));
  }
  RRT_RETURN_IF_ERROR(stage_placement(slot, placement));
  if (profiled) {
    grant->timings =
        profiling_collectors_.timings_after_publish(slot.index()) + request.profile_offset;
    grant->wall = profiling_collectors_.wall_after_publish(slot.index());
  }
  if (request.place_definition) {
    const GraphDefinitionStore::Pending &definition = placement.definition;
    grant->definition = GraphDefinitionStore::Placement{
        slot.definitions.address_after_publish(definition),
        slot.definitions.needs_upload(definition, request.definition_binding), !definition.stored};
  }
  grant->staging = request.staging_bytes != 0 ? staging.base_after_publish() : nullptr;
  grant->bases = slot.bank.bases_after_publish();
  if (request.fill) {
    RRT_RETURN_IF_ERROR(fill_placement(slot, request, *grant));
  }
  publish_placement(slot, placement, request.definition_binding, request.fill != nullptr);
  return Status::ok();
}

Status DeviceContext::fill_placement(Slot &slot, const SlotRequest &request,
                                     const SlotGrant &grant) {
  // A kept runtime pool is filled in place, so a fill that fails (returning or throwing) may
  // have overwritten the image the cache vouches for there: nothing moved, but the entry no
  // longer holds. A pool the request re-stages is written only in its new backing.
  const bool pool_kept =
      slot.bank.bases_after_publish().runtime_pool == slot.bank.bases().runtime_pool;
  Status filled;
  try {
    filled = request.fill(grant);
  } catch (...) {
    if (pool_kept) {
      slot.image_cache.invalidate_bank(slot.index());
    }
    throw;
  }
  if (!filled.is_ok() && pool_kept) {
    slot.image_cache.invalidate_bank(slot.index());
  }
  return filled;
}

Status DeviceContext::commit_capacity_plan(const CapacityPlan &plan, std::uint32_t profile_tasks,
                                           FunctionRef<Status()> decide) {
  const std::lock_guard<std::mutex> lock(mutex_);
  Slot &s = *slots_[0];
  BlockTransaction txn;
  RRT_RETURN_IF_ERROR(
      s.bank.plan(txn, BankRequest{plan.gm_heap_bytes, plan.gm_sm_bytes, plan.runtime_pool_bytes}));
  RRT_RETURN_IF_ERROR(txn.add(s.retained, plan.retained_staging_bytes));
  RRT_RETURN_IF_ERROR(txn.add(s.definitions.block(), plan.graph_definition_bytes));
  RRT_RETURN_IF_ERROR(txn.add(s.host_staging, plan.host_staging_bytes));
  if (profiling()) {
    RRT_RETURN_IF_ERROR(profiling_collectors_.plan(txn, profile_tasks));
  }
  RRT_RETURN_IF_ERROR(txn.stage());
  RRT_RETURN_IF_ERROR(profiling_collectors_.zero_staged());
  RRT_RETURN_IF_ERROR(decide());
  txn.publish();
  profiling_collectors_.latch_shape();
  return Status::ok();
}

DeviceContext::ResidentTransaction::ResidentTransaction(DeviceContext &context)
    : context_(context), lock_(context.mutex_) {}

Status DeviceContext::ResidentTransaction::stage(const ResidentRequest &request) {
  request_ = request;
  Slot &s = *context_.slots_[0];
  const std::uint64_t offset = align_up(context_.resident_used_, kResidentAlignment);
  pool_end_ = offset + request.pool_bytes;
  RRT_RETURN_IF_ERROR(context_.plan_collectors(placement_, request.profile_tasks, 0));
  if (request.place_definition) {
    RRT_RETURN_IF_ERROR(
        context_.plan_definition(s, placement_, request.definition_key, request.definition_bytes));
  }
  RRT_RETURN_IF_ERROR(s.bank.plan(
      placement_.blocks,
      BankRequest{request.gm_heap, request.gm_sm, request.pool_bytes != 0 ? pool_end_ : 0}));
  RRT_RETURN_IF_ERROR(context_.stage_placement(s, placement_));
  grant_ = ResidentGrant{};
  grant_.bases = s.bank.bases_after_publish();
  if (request.pool_bytes != 0) {
    grant_.pool = static_cast<std::byte *>(grant_.bases.runtime_pool) + offset;
  }
  if (request.place_definition) {
    grant_.definition = s.definitions.address_after_publish(placement_.definition);
  }
  return Status::ok();
}

void DeviceContext::ResidentTransaction::commit() noexcept {
  context_.publish_placement(*context_.slots_[0], placement_, request_.definition_binding, true);
  if (request_.pool_bytes != 0) {
    context_.resident_used_ = pool_end_;
  }
}

Status DeviceContext::read_task_records(int slot, LaunchRecord *record, TaskTiming *timings,
                                        std::uint32_t count, std::uint32_t *read) const {
  if (!profiling()) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "profiling is off for this context (rrt_context_options_t.profiling)");
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  *read = 0;
  const LaunchRecord *wall = profiling_collectors_.wall(slot);
  if (wall == nullptr) {
    *record = LaunchRecord{};
    return Status::ok();
  }
  RRT_RETURN_IF_ERROR(device_.copy_device_to_host(record, wall, sizeof(LaunchRecord)));
  const std::uint32_t records = std::min(count, profiling_collectors_.shape());
  if (records != 0 && timings != nullptr) {
    RRT_RETURN_IF_ERROR(device_.copy_device_to_host(timings, profiling_collectors_.timings(slot),
                                                    records * sizeof(TaskTiming)));
  }
  *read = records;
  return Status::ok();
}

void DeviceContext::for_each_block(const std::function<void(const GuardedBlock &)> &visit) const {
  for (const auto &slot : slots_) {
    for (int r = 0; r < kBankRegionCount; ++r) {
      visit(slot->bank.region(static_cast<BankRegion>(r)));
    }
    visit(slot->retained);
    visit(slot->definitions.block());
    visit(slot->host_staging);
  }
  visit(profiling_collectors_.timing_block());
  visit(profiling_collectors_.wall_block());
}

DeviceContext::PublishedKeys DeviceContext::published_keys() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  PublishedKeys keys;
  for (int i = 0; i < kPipelineDepth; ++i) {
    const Slot &slot = *slots_[static_cast<std::size_t>(i)];
    keys.definitions[static_cast<std::size_t>(i)] = slot.definitions.stored_keys();
    if (const PrebuiltImageCache::Entry *entry = slot.image_cache.entry()) {
      keys.prebuilt_images[static_cast<std::size_t>(i)] = *entry;
    }
  }
  keys.resident_used = resident_used_;
  return keys;
}

RegionStats DeviceContext::region_stats(GrowthPoint point) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  RegionStats stats;
  for_each_block([&](const GuardedBlock &block) {
    if (block.point() != point) {
      return;
    }
    stats.capacity += block.capacity();
    stats.used += block.requested();
    stats.base_changes += block.base_changes();
  });
  if (point == GrowthPoint::kArenaRuntimePool && latch_.is_kernel()) {
    stats.used = resident_used_;
  }
  if (point == GrowthPoint::kGraphDefinition) {
    stats.used = 0;
    for (const auto &slot : slots_) {
      stats.used += slot->definitions.used();
    }
  }
  if (point == GrowthPoint::kDfxCollectors) {
    stats.used = stats.capacity;
    stats.base_changes = profiling_collectors_.timing_block().base_changes();
  }
  return stats;
}

ContextStatistics DeviceContext::statistics() const {
  ContextStatistics stats;
  stats.device_alloc_calls = counters_.device_alloc_calls.load();
  stats.device_free_calls = counters_.device_free_calls.load();
  stats.live_bytes = counters_.live_bytes.load();
  stats.peak_bytes = counters_.peak_bytes.load();
  stats.launches = counters_.launches.load();
  stats.replays = counters_.replays.load();
  stats.stale_address_refusals = counters_.stale_address_refusals.load();
  for (int i = 0; i < kGrowthPointCount; ++i) {
    const auto index = static_cast<std::size_t>(i);
    stats.refusals[index] = counters_.refusals[index].load();
    stats.regions[index] = region_stats(static_cast<GrowthPoint>(i));
  }
  return stats;
}

void DeviceContext::release_all() noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (auto &slot : slots_) {
    slot->release();
  }
  slot_busy_.fill(false);
  resident_used_ = 0;
  profiling_collectors_.release();
}

}  // namespace replayrt
