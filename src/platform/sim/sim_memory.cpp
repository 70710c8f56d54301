#include "platform/sim/sim_memory.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "common/align.h"
#include "common/format.h"

namespace replayrt::sim {

namespace {
const void *as_ptr(std::uintptr_t address) {
  return reinterpret_cast<const void *>(address);
}
}  // namespace

SimMemory::SimMemory(SimMemoryOptions options) : options_(options) {}

SimMemory::~SimMemory() {
  for (const auto &[base, block] : live_) {
    std::free(reinterpret_cast<void *>(base));
  }
  for (const QuarantinedBlock &block : quarantine_) {
    std::free(reinterpret_cast<void *>(block.base));
  }
}

void *SimMemory::allocate(std::size_t bytes) {
  if (bytes == 0 || bytes > (std::size_t{1} << 40)) {
    return nullptr;
  }
  const std::size_t size = align_up(bytes, kAlignment);
  void *ptr = std::aligned_alloc(kAlignment, size);
  if (ptr == nullptr) {
    return nullptr;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  try {
    live_.emplace(reinterpret_cast<std::uintptr_t>(ptr), Block{size, next_generation_});
  } catch (const std::bad_alloc &) {
    std::free(ptr);
    return nullptr;
  }
  ++next_generation_;
  ++counters_.allocation_calls;
  counters_.live_bytes += size;
  if (counters_.live_bytes > counters_.peak_live_bytes) {
    counters_.peak_live_bytes = counters_.live_bytes;
  }
  return ptr;
}

Status SimMemory::free(void *ptr) {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = live_.find(address);
  if (it == live_.end()) {
    for (const QuarantinedBlock &block : quarantine_) {
      if (block.base == address) {
        const unsigned long long generation = block.generation;
        return Status::error(RRT_ERR_INVALID_ARGUMENT,
                             format("device free of %p: already freed (allocation generation %llu)",
                                    ptr, generation));
      }
    }
    if (const auto owner = find_locked(address)) {
      return Status::error(RRT_ERR_INVALID_ARGUMENT,
                           format("device free of %p: not an allocation base (inside the "
                                  "allocation at %p)",
                                  ptr, as_ptr(owner->base)));
    }
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("device free of %p: not a live device allocation", ptr));
  }
  const Block block = it->second;
  live_.erase(it);
  ++counters_.free_calls;
  counters_.live_bytes -= block.size;
  std::memset(ptr, kPoisonByte, block.size);
  if (options_.quarantine_bytes == 0) {
    std::free(ptr);
    return Status::ok();
  }
  quarantine_.push_back(QuarantinedBlock{address, block.size, block.generation});
  quarantine_size_ += block.size;
  evict_quarantine_locked();
  return Status::ok();
}

Status SimMemory::copy_host_to_device(void *dst, const void *src, std::size_t bytes) {
  if (bytes == 0) {
    return Status::ok();
  }
  if (src == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "host-to-device copy from a null host pointer");
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  RRT_RETURN_IF_ERROR(check_range_locked(dst, bytes, "destination"));
  std::memcpy(dst, src, bytes);
  return Status::ok();
}

Status SimMemory::copy_device_to_host(void *dst, const void *src, std::size_t bytes) {
  if (bytes == 0) {
    return Status::ok();
  }
  if (dst == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "device-to-host copy into a null host pointer");
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  RRT_RETURN_IF_ERROR(check_range_locked(src, bytes, "source"));
  std::memcpy(dst, src, bytes);
  return Status::ok();
}

Status SimMemory::copy_device_to_device(void *dst, const void *src, std::size_t bytes) {
  if (bytes == 0) {
    return Status::ok();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  RRT_RETURN_IF_ERROR(check_range_locked(src, bytes, "source"));
  RRT_RETURN_IF_ERROR(check_range_locked(dst, bytes, "destination"));
  std::memmove(dst, src, bytes);
  return Status::ok();
}

Status SimMemory::memset(void *dst, int value, std::size_t bytes) {
  if (bytes == 0) {
    return Status::ok();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  RRT_RETURN_IF_ERROR(check_range_locked(dst, bytes, "destination"));
  std::memset(dst, value, bytes);
  return Status::ok();
}

std::optional<AllocationInfo> SimMemory::find_allocation(const void *address) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return find_locked(reinterpret_cast<std::uintptr_t>(address));
}

bool SimMemory::is_live(const void *address, std::uint64_t generation) const {
  const auto info = find_allocation(address);
  return info && info->generation == generation;
}

std::size_t SimMemory::first_stale(std::span<const CapturedAddress> captured) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < captured.size(); ++i) {
    const auto now = find_locked(captured[i].address);
    if (!now || now->base != captured[i].base || now->generation != captured[i].generation) {
      return i;
    }
  }
  return captured.size();
}

std::size_t SimMemory::first_range_outside_allocations(std::span<const AddressRange> ranges) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto start = reinterpret_cast<std::uintptr_t>(ranges[i].address);
    const auto owner = find_locked(start);
    if (!owner || ranges[i].bytes > owner->size - (start - owner->base)) {
      return i;
    }
  }
  return ranges.size();
}

MemoryCounters SimMemory::counters() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return counters_;
}

std::size_t SimMemory::quarantined_bytes() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return quarantine_size_;
}

Status SimMemory::check_range_locked(const void *address, std::size_t bytes,
                                     const char *role) const {
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  const auto owner = find_locked(start);
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

std::optional<AllocationInfo> SimMemory::find_locked(std::uintptr_t address) const {
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

void SimMemory::evict_quarantine_locked() {
  while (quarantine_size_ > options_.quarantine_bytes && !quarantine_.empty()) {
    const QuarantinedBlock oldest = quarantine_.front();
    quarantine_.pop_front();
    quarantine_size_ -= oldest.size;
    std::free(reinterpret_cast<void *>(oldest.base));
  }
}

}  // namespace replayrt::sim
