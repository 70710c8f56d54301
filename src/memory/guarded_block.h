// GuardedBlock: one device buffer a launch can reference, sized only through the growth guard.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/growth_point.h"
#include "common/status.h"
#include "memory/growth_guard.h"

namespace replayrt {

class GuardedBlock;

// What a block needs from the object that created it (the context): the growth context,
// device allocation and free, a device memset, and refusal accounting. A block never reaches
// a device or an allocator any other way.
class BlockHost {
 public:
  BlockHost() = default;
  virtual ~BlockHost() = default;
  BlockHost(const BlockHost &) = delete;
  BlockHost &operator=(const BlockHost &) = delete;
  BlockHost(BlockHost &&) = delete;
  BlockHost &operator=(BlockHost &&) = delete;

  // The mode comes from the host's latch and "inside a launch" from a scope the runtime
  // opened; callers of a block never pass either.
  virtual GrowthContext growth_context() const noexcept = 0;
  // Allocates `bytes` (> 0) for `block`'s next backing. RRT_ERR_OUT_OF_MEMORY when the device
  // cannot; a host may also refuse (a capacity refusal) an allocation its own rules forbid.
  // Writes *out only on success.
  virtual Status allocate(const GuardedBlock &block, std::size_t bytes, void **out) noexcept = 0;
  // Frees a backing of `bytes` bytes (what allocate() was asked for) that this host allocated;
  // false when the device rejected the free.
  virtual bool free(void *ptr, std::size_t bytes) noexcept = 0;
  // Sets `bytes` of device memory at `ptr` to zero, synchronously.
  virtual Status zero(void *ptr, std::size_t bytes) noexcept = 0;
  virtual void count_refusal(GrowthPoint point) noexcept = 0;
};

// The one sizing operation a block offers, in two forms:
//
//   reserve(required)          decide, stage the new backing, publish it, free the old one
//
//   plan(required)             decide only (no side effect); a refusal is returned and counted
//   stage()                    allocate the planned backing; the published one is untouched
//   publish()                  the staged backing becomes the published one
//   free_superseded()          frees the backing publish() replaced, last
//   abort()                    frees a staged backing; the block is as before plan()
//
// The second form lets a transaction size several blocks all-or-nothing: plan every block,
// stage every block, publish every block, then free what was superseded.
//
// Decisions come from decide_growth with the host's growth context, the block's published
// state and its capacity. A block that holds `required` bytes keeps its backing. An empty
// block takes its first allocation, in kernel mode too, except while a launch is encoded. A
// published block grows only in program mode (a new backing of `required` bytes, published
// before the old one is freed); in kernel mode it is refused before anything is touched.
// A zero request keeps the block as it is.
//
// Failures: an allocation failure returns RRT_ERR_OUT_OF_MEMORY and leaves the block as it
// was. A refusal whose message cannot be allocated throws std::bad_alloc from plan() and is
// counted neither on the block nor on its host. Counters: allocations and frees this block
// made through its host, frees the device rejected, published base changes (teardown
// excluded) and refusals.
//
// Ownership: the block owns its backings; release() and the destructor free them.
// Thread safety: none; the host serializes access.
class GuardedBlock {
 public:
  GuardedBlock(BlockHost &host, GrowthPoint point) noexcept;
  ~GuardedBlock();
  GuardedBlock(const GuardedBlock &) = delete;
  GuardedBlock &operator=(const GuardedBlock &) = delete;
  GuardedBlock(GuardedBlock &&) = delete;
  GuardedBlock &operator=(GuardedBlock &&) = delete;

  Status reserve(std::uint64_t required);

  Status plan(std::uint64_t required);
  // True when the planned decision needs a new backing (stage() will allocate).
  bool needs_backing() const noexcept;
  Status stage();
  void publish() noexcept;
  void free_superseded() noexcept;
  void abort() noexcept;

  // The refusal reserve(required) would return, or OK; touches and counts nothing.
  Status preflight(std::uint64_t required) const;

  GrowthPoint point() const noexcept { return point_; }
  void *base() const noexcept { return base_; }
  // The base the block has once publish() ran: the staged backing after stage() allocated
  // one, else the published base. Work that must be in place before publishing (an upload, a
  // zeroing) writes there.
  void *base_after_publish() const noexcept { return staged_ != nullptr ? staged_ : base_; }
  // The capacity the block has once publish() ran.
  std::uint64_t capacity_after_publish() const noexcept {
    return staged_ != nullptr ? planned_bytes_ : capacity_;
  }
  bool is_published() const noexcept { return base_ != nullptr; }
  std::uint64_t capacity() const noexcept { return capacity_; }
  // The bytes the most recent successful sizing asked for.
  std::uint64_t requested() const noexcept { return requested_; }

  std::uint64_t allocations() const noexcept { return allocations_; }
  std::uint64_t frees() const noexcept { return frees_; }
  std::uint64_t failed_frees() const noexcept { return failed_frees_; }
  std::uint64_t base_changes() const noexcept { return base_changes_; }
  std::uint64_t refusals() const noexcept { return refusals_; }

  // Teardown: frees every backing and returns to empty. Idempotent.
  void release() noexcept;

 private:
  GrowthRequest request_for(std::uint64_t required) const noexcept;
  void free_backing(void *&backing, std::uint64_t bytes) noexcept;

  BlockHost &host_;
  GrowthPoint point_;
  void *base_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t requested_ = 0;
  GrowthDecision planned_ = GrowthDecision::kKeep;
  std::uint64_t planned_bytes_ = 0;
  void *staged_ = nullptr;
  void *superseded_ = nullptr;
  std::uint64_t superseded_bytes_ = 0;
  std::uint64_t allocations_ = 0;
  std::uint64_t frees_ = 0;
  std::uint64_t failed_frees_ = 0;
  std::uint64_t base_changes_ = 0;
  std::uint64_t refusals_ = 0;
};

}  // namespace replayrt
