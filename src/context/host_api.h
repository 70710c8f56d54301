// HostApiOps / HostApi: how runtime code (the binds) reaches the context's device memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "memory/arena_bank.h"
#include "memory/dfx_collectors.h"
#include "memory/graph_definition_store.h"
#include "memory/growth_guard.h"
#include "memory/prebuilt_image_cache.h"

namespace replayrt {

// One immutable table of function pointers per context kind, the runner (context) first.
// Every operation that can grow a buffer takes the GrowthContext the runtime computed with
// HostApi::growth_context(), and sends it through the growth guard before any side effect.
// A null entry means the operation is not available: the HostApi wrapper reports
// RRT_ERR_UNSUPPORTED for it, except is_kernel_mode, which reads as program mode. Test fakes
// built with designated initializers therefore default to program mode.
// The producer (context/device_context.cpp) and every consumer (runtime/) are built into the
// same library, so entries are appended without a version field.
struct HostApiOps {
  // Runtime-facing device allocation (growth point launch_allocation while a launch is
  // encoded). The allocation is the caller's to free with device_free.
  Status (*device_malloc)(void *runner, GrowthContext growth, std::size_t bytes,
                          void **out) = nullptr;
  Status (*device_free)(void *runner, void *ptr) = nullptr;
  // Synchronous copies (outside launches only: a launch never synchronizes).
  Status (*copy_to_device)(void *runner, void *dst, const void *src, std::size_t bytes) = nullptr;
  Status (*copy_from_device)(void *runner, void *dst, const void *src, std::size_t bytes) = nullptr;

  // The pipeline slot's retained staging buffer (growth point retained_staging).
  Status (*retained_begin)(void *runner, GrowthContext growth, int slot,
                           std::uint64_t required) = nullptr;
  void *(*retained_acquire)(void *runner, int slot, std::uint64_t bytes) = nullptr;

  // The arena bank commit rule (growth points gm_heap, gm_sm, runtime_pool). Invalidates the
  // bank's prebuilt image exactly when a published base changed.
  Status (*setup_static_arena)(void *runner, GrowthContext growth, int bank,
                               const BankRequest &request) = nullptr;
  BankBases (*pooled_bases)(void *runner, int bank) = nullptr;
  BankRequest (*pooled_sizes)(void *runner, int bank) = nullptr;

  // The bank's prebuilt runtime image (single entry per bank).
  bool (*lookup_prebuilt_image)(void *runner, int bank, std::uint64_t key,
                                PrebuiltImageCache::Entry *out) = nullptr;
  void (*store_prebuilt_image)(void *runner, const PrebuiltImageCache::Entry &entry) = nullptr;

  // The pipeline slot's graph-definition store (growth point graph_definition).
  Status (*acquire_graph_definition)(void *runner, GrowthContext growth, int slot,
                                     std::uint64_t key, std::uint64_t bytes,
                                     GraphDefinitionStore::Placement *out) = nullptr;

  // The pipeline slot's host staging for host-build runs (growth point host_staging).
  Status (*host_staging_begin)(void *runner, GrowthContext growth, int slot,
                               std::uint64_t required) = nullptr;
  Status (*host_staging_stage)(void *runner, GrowthContext growth, int slot, std::uint64_t bytes,
                               void **out) = nullptr;

  // Profiling collectors (growth point dfx_collectors): sizes them for `tasks` records and
  // writes the slot's timing area and device-wall record (both null when profiling is off).
  Status (*profile_area)(void *runner, GrowthContext growth, int slot, std::uint32_t tasks,
                         TaskTiming **timings, LaunchRecord **wall) = nullptr;

  // The context's execution identity: a query of its ExecutionModeLatch. Last entry.
  bool (*is_kernel_mode)(void *runner) = nullptr;
};

// A HostApiOps table bound to one runner and one run's pipeline slot and arena bank, plus
// whether the run is being encoded as a kernel-mode launch. Built per run and passed by const
// reference into the binds, so callbacks never consult globals.
class HostApi {
 public:
  HostApi(const HostApiOps *ops, void *runner, int slot, int bank, bool in_launch) noexcept
      : ops_(ops), runner_(runner), slot_(slot), bank_(bank), in_launch_(in_launch) {}

  int slot() const noexcept { return slot_; }
  int bank() const noexcept { return bank_; }
  bool in_launch() const noexcept { return in_launch_; }
  bool is_kernel_mode() const {
    return ops_->is_kernel_mode != nullptr && ops_->is_kernel_mode(runner_);
  }
  GrowthContext growth_context() const {
    return GrowthContext{is_kernel_mode() ? ExecutionMode::kKernel : ExecutionMode::kProgram,
                         in_launch_};
  }

  Status device_malloc(std::size_t bytes, void **out) const;
  Status device_free(void *ptr) const;
  Status copy_to_device(void *dst, const void *src, std::size_t bytes) const;
  Status copy_from_device(void *dst, const void *src, std::size_t bytes) const;
  Status retained_begin(std::uint64_t required) const;
  // Null when the op is missing, the slot has no buffer, or the slice passes its capacity.
  void *retained_acquire(std::uint64_t bytes) const;
  Status setup_static_arena(const BankRequest &request) const;
  BankBases pooled_bases() const;
  BankRequest pooled_sizes() const;
  bool lookup_prebuilt_image(std::uint64_t key, PrebuiltImageCache::Entry *out) const;
  void store_prebuilt_image(const PrebuiltImageCache::Entry &entry) const;
  Status acquire_graph_definition(std::uint64_t key, std::uint64_t bytes,
                                  GraphDefinitionStore::Placement *out) const;
  Status host_staging_begin(std::uint64_t required) const;
  Status host_staging_stage(std::uint64_t bytes, void **out) const;
  // Missing op: profiling off (both outputs null).
  Status profile_area(std::uint32_t tasks, TaskTiming **timings, LaunchRecord **wall) const;

 private:
  const HostApiOps *ops_;
  void *runner_;
  int slot_;
  int bank_;
  bool in_launch_;
};

}  // namespace replayrt
