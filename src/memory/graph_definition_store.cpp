#include "memory/graph_definition_store.h"

#include <cstddef>

#include "common/align.h"

namespace replayrt {

GraphDefinitionStore::Pending GraphDefinitionStore::plan(std::uint64_t key,
                                                         std::uint64_t bytes) const {
  const bool valid = block_.base() == placed_base_;
  Pending pending{key, bytes, 0, valid && stored_.count(key) != 0};
  if (!pending.stored) {
    pending.required = align_up(valid ? used_ : 0, kAlignment) + bytes;
  }
  return pending;
}

GraphDefinitionStore::Placement GraphDefinitionStore::place(const Pending &pending,
                                                            std::uint64_t binding) {
  if (block_.base() != placed_base_) {
    stored_.clear();
    used_ = 0;
    placed_base_ = block_.base();
  }
  auto *base = static_cast<std::byte *>(block_.base());
  const auto found = stored_.find(pending.key);
  if (found != stored_.end()) {
    const bool rebound = found->second.binding != binding;
    found->second.binding = binding;
    return Placement{base + found->second.offset, rebound, false};
  }
  const std::uint64_t offset = align_up(used_, kAlignment);
  stored_[pending.key] = Stored{offset, binding};
  used_before_last_ = used_;
  used_ = offset + pending.bytes;
  return Placement{base + offset, true, true};
}

void GraphDefinitionStore::forget_last(std::uint64_t key) noexcept {
  if (stored_.erase(key) != 0) {
    used_ = used_before_last_;
  }
}

void GraphDefinitionStore::release() noexcept {
  block_.release();
  stored_.clear();
  used_ = 0;
  used_before_last_ = 0;
  placed_base_ = nullptr;
}

}  // namespace replayrt
