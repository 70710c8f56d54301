// SlotView: what a bind strategy may do with the pipeline slot (and the arena bank of the
// same index) a run or launch was given.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/execution_mode.h"
#include "common/function_ref.h"
#include "common/status.h"
#include "memory/arena_bank.h"
#include "memory/graph_definition_store.h"
#include "memory/prebuilt_image_cache.h"
#include "platform/launch/profile_records.h"

namespace replayrt {

// Where a bind stages its HOST tensors: the slot's retained staging (device-build binds) or
// its host staging (host-build binds).
enum class StagingKind { kRetained, kHost };

struct SlotGrant;

// Everything one run needs from its slot, sized together.
struct SlotRequest {
  StagingKind staging_kind = StagingKind::kRetained;
  std::uint64_t staging_bytes = 0;  // the run's staging slices; 0: no HOST tensor
  bool size_bank = false;           // program mode: size the bank for `bank`
  BankRequest bank;
  bool place_definition = false;  // program mode: place a host-built definition
  std::uint64_t definition_key = 0;
  std::uint64_t definition_bytes = 0;
  std::uint64_t definition_binding = 0;  // what the definition bakes (see GraphDefinitionStore)
  std::uint32_t profile_tasks = 0;       // 0: profiling off for this run
  // Kernel mode: the run's first task record; the records before it belong to the launches
  // its capture already holds. The collectors must hold profile_offset + profile_tasks.
  std::uint32_t profile_offset = 0;
  // Program mode: writes what the run needs into the granted blocks (uploads, the staging
  // layout) after they are staged and before they are published; the grant holds the
  // addresses they will have. It runs under the context's lock, so it must not call the
  // context (the slot's upload() is fine). A failure or an exception leaves every block's size
  // and address as before, and a definition it was asked for counts as uploaded once it
  // returns OK. A block the request kept is filled in place, so after a failed fill it may
  // hold part of what the fill wrote: the slot then drops its prebuilt image. The callable it
  // refers to must live until reserve() returns.
  FunctionRef<Status(const SlotGrant &grant)> fill;
};

// Where the request landed. Null for what the request did not ask for; in kernel mode `bases`
// is set only when the request sized a block (kernel-mode binds use their resident placement).
// The definition's needs_upload says whether fill must write it.
struct SlotGrant {
  void *staging = nullptr;  // the run's first staging slice; the others follow it
  BankBases bases;          // the bank after the request
  GraphDefinitionStore::Placement definition;
  TaskTiming *timings = nullptr;
  LaunchRecord *wall = nullptr;
};

// The context implements this interface; tests may decorate it. Every member is required:
// there is no default behaviour to fall back on.
//
// reserve() is one transaction over the slot's blocks (and the context's profiling
// collectors): every block is decided before anything is touched, then staged, filled
// (SlotRequest::fill), published and superseded backings freed last; a refusal, a failed
// allocation or a failed fill changes nothing.
// Inside a kernel-mode launch any growth or first allocation is refused. In program mode a
// request that would rebuild the profiling collectors while the other slot holds a run is
// RRT_ERR_PREPARED_INCOMPATIBLE.
//
// Thread safety: a slot is used by one run at a time; members serialize on the context.
class SlotView {
 public:
  SlotView() = default;
  virtual ~SlotView() = default;
  SlotView(const SlotView &) = delete;
  SlotView &operator=(const SlotView &) = delete;
  SlotView(SlotView &&) = delete;
  SlotView &operator=(SlotView &&) = delete;

  virtual int index() const noexcept = 0;
  // The context's latched mode.
  virtual ExecutionMode mode() const noexcept = 0;
  virtual Status reserve(const SlotRequest &request, SlotGrant *grant) = 0;
  // A synchronous host-to-device copy (outside launches only: a launch never synchronizes).
  virtual Status upload(void *dst, const void *src, std::size_t bytes) = 0;
  virtual BankBases bank_bases() const = 0;
  virtual BankRequest bank_capacities() const = 0;
  // The bank's prebuilt image (one entry per bank), valid only while the bank's bases are.
  virtual bool find_prebuilt(std::uint64_t key, PrebuiltImageCache::Entry *out) const = 0;
  virtual void remember_prebuilt(const PrebuiltImageCache::Entry &entry) = 0;
};

}  // namespace replayrt
