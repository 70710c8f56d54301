// GraphDefinitionStore: one pipeline slot's device storage for host-built task-graph
// definitions, keyed by content, so every submission of a run references a block uploaded once.
#pragma once

#include <cstdint>
#include <map>

#include "memory/device_allocator.h"
#include "memory/growth_guard.h"

namespace replayrt {

// One device block holding definitions side by side, each at a kAlignment-aligned offset and
// found again by its key. acquire() is growth point GrowthPoint::kGraphDefinition:
//   - a key already stored returns its address, nothing to upload, no allocator call;
//   - a new key that fits behind the stored ones is placed there (needs_upload);
//   - an empty store takes its first allocation, sized for this definition (or for `bytes`
//     passed to commit()), in kernel mode too, but not while a launch is encoded;
//   - a new key that does not fit: program mode grows by replacement (a new block for this
//     definition is allocated first, the old block with every earlier definition is freed
//     after; a failed allocation keeps the old block); kernel mode refuses before anything is
//     touched: stored definitions never move.
//
// Ownership: owns the block. Thread safety: none; the context serializes access.
class GraphDefinitionStore {
 public:
  static constexpr std::uint64_t kAlignment = 1024;

  struct Placement {
    void *address = nullptr;
    bool needs_upload = false;  // the caller writes the definition there before use
  };

  explicit GraphDefinitionStore(DeviceAllocator allocator) noexcept;
  ~GraphDefinitionStore();
  GraphDefinitionStore(const GraphDefinitionStore &) = delete;
  GraphDefinitionStore &operator=(const GraphDefinitionStore &) = delete;
  GraphDefinitionStore(GraphDefinitionStore &&) = delete;
  GraphDefinitionStore &operator=(GraphDefinitionStore &&) = delete;

  // Kernel init: the store's first allocation, `bytes` long (0: nothing to commit).
  Status commit(std::uint64_t bytes, GrowthContext context);
  Status acquire(std::uint64_t key, std::uint64_t bytes, GrowthContext context, Placement *out);
  // The refusal acquire() would return, or OK; touches nothing.
  Status preflight(std::uint64_t key, std::uint64_t bytes, GrowthContext context) const;

  void *address() const noexcept { return address_; }
  std::uint64_t capacity() const noexcept { return capacity_; }
  std::uint64_t used() const noexcept { return used_; }
  std::uint64_t base_changes() const noexcept { return base_changes_; }
  std::uint64_t alloc_count() const noexcept { return alloc_count_; }
  std::uint64_t free_count() const noexcept { return free_count_; }

  void release() noexcept;

 private:
  Status replace_block(std::uint64_t bytes);
  GrowthRequest placement_request(std::uint64_t bytes, GrowthContext context) const noexcept;

  DeviceAllocator allocator_;
  void *address_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t used_ = 0;
  std::map<std::uint64_t, std::uint64_t> offsets_;  // key → offset
  std::uint64_t base_changes_ = 0;
  std::uint64_t alloc_count_ = 0;
  std::uint64_t free_count_ = 0;
};

}  // namespace replayrt
