// GraphDefinitionStore: one pipeline slot's device storage for host-built task-graph
// definitions, keyed by content, so every submission of a run references a block uploaded once.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "common/align.h"
#include "memory/guarded_block.h"

namespace replayrt {

// Definitions sit side by side in one guarded block (growth point graph_definition), each at
// a kAlignment-aligned offset and found again by its key.
//
// Call order: plan(key, bytes) → the owner sizes block() for pending.required (alone or in
// a transaction) → place(std::move(pending), binding, uploaded).
//   - a key already stored needs no sizing and is placed where it is; it needs an upload only
//     when `binding` (what the definition bakes: the bank bases it points into) changed or its
//     contents were never uploaded;
//   - a new key asks the block to hold the stored definitions plus this one behind them: a
//     block that holds that keeps its base; an empty block takes its first allocation; a
//     larger need grows in program mode (a fresh block: earlier definitions are forgotten
//     and the new one is placed at offset 0, with room behind it for the ones that follow)
//     and is refused in kernel mode, where stored definitions never move.
// Alternating callables therefore settle into one block that holds all of them.
//
// A key is trusted only once its contents are uploaded: place() records whether they are
// (`uploaded`), and a key placed without its contents asks for the upload again at its next
// placement. A caller uploads before it places, inside the transaction that sizes block():
// to address_after_publish(), when needs_upload() says so.
//
// place() cannot fail: plan() allocates everything a new key needs.
//
// Thread safety: none; the context serializes access.
class GraphDefinitionStore {
 public:
  static constexpr std::uint64_t kAlignment = kDeviceAddressAlignment;

  struct Placement {
    void *address = nullptr;
    bool needs_upload = false;  // the caller writes the definition there before use
    bool newly_stored = false;  // the key was not stored before this placement
  };

 private:
  struct Stored {
    std::uint64_t offset = 0;
    std::uint64_t binding = 0;
    bool uploaded = false;
  };
  using Keys = std::map<std::uint64_t, Stored>;

 public:
  struct Pending {
    std::uint64_t key = 0;
    std::uint64_t bytes = 0;
    std::uint64_t required = 0;  // what block() must hold; 0 when the key is stored
    std::uint64_t offset = 0;    // from the block's base, while the block keeps its base
    bool stored = false;
    Keys::node_type node;  // a new key's entry, inserted by place()
  };

  explicit GraphDefinitionStore(BlockHost &host) noexcept
      : block_(host, GrowthPoint::kGraphDefinition) {}

  // Allocates a new key's entry (std::bad_alloc when the host cannot); changes nothing.
  Pending plan(std::uint64_t key, std::uint64_t bytes) const;
  // Where the pending definition lies once the transaction sizing block() publishes it.
  void *address_after_publish(const Pending &pending) const noexcept;
  // Whether the pending key's contents must be written before it is placed with `binding`:
  // a new key, a block that takes a new base, a changed binding or a missing upload.
  bool needs_upload(const Pending &pending, std::uint64_t binding) const noexcept;
  // Requires that block() was sized for pending.required since plan().
  Placement place(Pending &&pending, std::uint64_t binding, bool uploaded) noexcept;

  // One stored key as published: where its definition lies in block(), the binding it was
  // placed with and whether its contents were written.
  struct StoredKey {
    std::uint64_t key = 0;
    std::uint64_t offset = 0;
    std::uint64_t binding = 0;
    bool uploaded = false;
    bool operator==(const StoredKey &) const = default;
  };

  GuardedBlock &block() noexcept { return block_; }
  const GuardedBlock &block() const noexcept { return block_; }
  std::uint64_t used() const noexcept { return used_; }
  bool holds(std::uint64_t key) const { return stored_.count(key) != 0; }
  // Every stored key in ascending order (std::bad_alloc when the host cannot hold the list).
  std::vector<StoredKey> stored_keys() const;

  void release() noexcept;

 private:
  GuardedBlock block_;
  std::uint64_t used_ = 0;
  const void *placed_base_ = nullptr;  // the block base every stored offset is relative to
  Keys stored_;
};

}  // namespace replayrt
