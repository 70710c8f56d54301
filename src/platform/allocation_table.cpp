#include "platform/allocation_table.h"

#include <utility>

#include "common/format.h"

namespace replayrt {

namespace {
const void *as_ptr(std::uintptr_t address) {
  return reinterpret_cast<const void *>(address);
}
}  // namespace

Status AllocationTable::insert(std::uintptr_t base, std::size_t size, bool foreign,
                               std::uint64_t *generation) {
  if (size == 0 || base + size < base) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("allocation [%p, +%zu) is empty or wraps", as_ptr(base), size));
  }
  const auto next = live_.lower_bound(base);
  if (next != live_.end() && next->first < base + size) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("allocation [%p, +%zu) overlaps the live allocation at %p",
                                as_ptr(base), size, as_ptr(next->first)));
  }
  if (const auto owner = find(base)) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("allocation [%p, +%zu) overlaps the live allocation at %p",
                                as_ptr(base), size, as_ptr(owner->base)));
  }
  live_.emplace_hint(next, base, Entry{base, size, next_generation_, foreign});
  *generation = next_generation_++;
  if (!foreign) {
    ++counters_.allocation_calls;
    counters_.live_bytes += size;
    if (counters_.live_bytes > counters_.peak_live_bytes) {
      counters_.peak_live_bytes = counters_.live_bytes;
    }
  }
  return Status::ok();
}

Status AllocationTable::erase(std::uintptr_t base, AllocationInfo *erased) {
  const auto it = live_.find(base);
  if (it == live_.end()) {
    for (const auto &[order, block] : quarantine_) {
      if (block.base == base) {
        const unsigned long long generation = block.generation;
        return Status::error(RRT_ERR_INVALID_ARGUMENT,
                             format("device free of %p: already freed (allocation generation %llu)",
                                    as_ptr(base), generation));
      }
    }
    if (const auto owner = find(base)) {
      return Status::error(RRT_ERR_INVALID_ARGUMENT,
                           format("device free of %p: not an allocation base (inside the "
                                  "allocation at %p)",
                                  as_ptr(base), as_ptr(owner->base)));
    }
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("device free of %p: not a live device allocation", as_ptr(base)));
  }
  if (it->second.foreign) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("device free of %p: a registered foreign allocation (unregister "
                                "it instead)",
                                as_ptr(base)));
  }
  const Entry entry = it->second;
  Entries::node_type node = live_.extract(it);
  node.key() = next_free_order_++;
  if (quarantine_limit_ == 0) {
    evicted_.insert(evicted_.end(), std::move(node));
  } else {
    quarantine_.insert(quarantine_.end(), std::move(node));
    quarantine_size_ += entry.size;
  }
  free_epoch_.fetch_add(1, std::memory_order_acq_rel);
  ++counters_.free_calls;
  counters_.live_bytes -= entry.size;
  *erased = AllocationInfo{base, entry.size, entry.generation};
  evict_over_limit();
  return Status::ok();
}

Status AllocationTable::erase_foreign(std::uintptr_t base) {
  const auto it = live_.find(base);
  if (it == live_.end() || !it->second.foreign) {
    return Status::error(
        RRT_ERR_INVALID_ARGUMENT,
        format("unregister of %p: not the base of a registered foreign allocation", as_ptr(base)));
  }
  live_.erase(it);
  free_epoch_.fetch_add(1, std::memory_order_acq_rel);
  return Status::ok();
}

bool AllocationTable::pop_evicted(Evicted *out) {
  if (evicted_.empty()) {
    return false;
  }
  const Entry &oldest = evicted_.begin()->second;
  *out = Evicted{oldest.base, oldest.size};
  evicted_.erase(evicted_.begin());
  return true;
}

std::optional<AllocationInfo> AllocationTable::find(std::uintptr_t address) const {
  auto it = live_.upper_bound(address);
  if (it == live_.begin()) {
    return std::nullopt;
  }
  --it;
  if (address - it->first >= it->second.size) {
    return std::nullopt;
  }
  return AllocationInfo{it->first, it->second.size, it->second.generation};
}

bool AllocationTable::is_foreign(std::uintptr_t base) const {
  const auto it = live_.find(base);
  return it != live_.end() && it->second.foreign;
}

Status AllocationTable::check_range(const void *address, std::size_t bytes,
                                    const char *role) const {
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  const auto owner = find(start);
  if (!owner) {
    return Status::error(
        RRT_ERR_INVALID_ARGUMENT,
        format("copy %s %p is not inside a live device allocation", role, address));
  }
  if (bytes > owner->size - (start - owner->base)) {
    const unsigned long long requested = bytes;
    const unsigned long long size = owner->size;
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("copy %s [%p, +%llu) runs past the end of its %llu-byte "
                                "allocation at %p",
                                role, address, requested, size, as_ptr(owner->base)));
  }
  return Status::ok();
}

std::size_t AllocationTable::first_range_outside(std::span<const AddressRange> ranges) const {
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto start = reinterpret_cast<std::uintptr_t>(ranges[i].address);
    const auto owner = find(start);
    if (!owner || ranges[i].bytes > owner->size - (start - owner->base)) {
      return i;
    }
  }
  return ranges.size();
}

std::size_t AllocationTable::first_stale(std::span<const CapturedAddress> captured) const {
  for (std::size_t i = 0; i < captured.size(); ++i) {
    const auto now = find(captured[i].address);
    if (!now || now->base != captured[i].base || now->generation != captured[i].generation) {
      return i;
    }
  }
  return captured.size();
}

void AllocationTable::evict_over_limit() noexcept {
  while (quarantine_size_ > quarantine_limit_ && !quarantine_.empty()) {
    Entries::node_type oldest = quarantine_.extract(quarantine_.begin());
    quarantine_size_ -= oldest.mapped().size;
    evicted_.insert(evicted_.end(), std::move(oldest));
  }
}

}  // namespace replayrt
