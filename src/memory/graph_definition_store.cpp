#include "memory/graph_definition_store.h"

#include <cstddef>
#include <utility>

#include "common/align.h"

namespace replayrt {

GraphDefinitionStore::Pending GraphDefinitionStore::plan(std::uint64_t key,
                                                         std::uint64_t bytes) const {
  const bool valid = block_.base() == placed_base_;
  const auto found = valid ? stored_.find(key) : stored_.end();
  Pending pending;
  pending.key = key;
  pending.bytes = bytes;
  pending.stored = found != stored_.end();
  if (pending.stored) {
    pending.offset = found->second.offset;
    return pending;
  }
  pending.offset = align_up(valid ? used_ : 0, kAlignment);
  pending.required = pending.offset + bytes;
  Keys entry;
  entry.emplace(key, Stored{pending.offset, 0, false});
  pending.node = entry.extract(entry.begin());
  return pending;
}

void *GraphDefinitionStore::address_after_publish(const Pending &pending) const noexcept {
  void *const base = block_.base_after_publish();
  // A block that takes a new base forgets its keys: the pending one then lands at offset 0.
  return static_cast<std::byte *>(base) + (base == placed_base_ ? pending.offset : 0);
}

bool GraphDefinitionStore::needs_upload(const Pending &pending,
                                        std::uint64_t binding) const noexcept {
  if (!pending.stored || block_.base_after_publish() != placed_base_) {
    return true;
  }
  const auto found = stored_.find(pending.key);
  return found == stored_.end() || found->second.binding != binding || !found->second.uploaded;
}

GraphDefinitionStore::Placement GraphDefinitionStore::place(Pending &&pending,
                                                            std::uint64_t binding,
                                                            bool uploaded) noexcept {
  std::uint64_t offset = pending.offset;
  if (block_.base() != placed_base_) {
    stored_.clear();
    used_ = 0;
    placed_base_ = block_.base();
    offset = 0;
  }
  auto *base = static_cast<std::byte *>(block_.base());
  const auto found = stored_.find(pending.key);
  if (found != stored_.end()) {
    Stored &stored = found->second;
    const bool rebound = stored.binding != binding;
    stored.binding = binding;
    stored.uploaded = uploaded || (stored.uploaded && !rebound);
    return Placement{base + stored.offset, !stored.uploaded, false};
  }
  pending.node.mapped() = Stored{offset, binding, uploaded};
  stored_.insert(std::move(pending.node));
  used_ = offset + pending.bytes;
  return Placement{base + offset, !uploaded, true};
}

std::vector<GraphDefinitionStore::StoredKey> GraphDefinitionStore::stored_keys() const {
  std::vector<StoredKey> keys;
  keys.reserve(stored_.size());
  for (const auto &[key, stored] : stored_) {
    keys.push_back(StoredKey{key, stored.offset, stored.binding, stored.uploaded});
  }
  return keys;
}

void GraphDefinitionStore::release() noexcept {
  block_.release();
  stored_.clear();
  used_ = 0;
  placed_base_ = nullptr;
}

}  // namespace replayrt
