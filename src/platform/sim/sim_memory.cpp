#include "platform/sim/sim_memory.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "common/align.h"
#include "common/format.h"

namespace replayrt::sim {

SimMemory::SimMemory(SimMemoryOptions options) : table_(options.quarantine_bytes) {}

SimMemory::~SimMemory() {
  table_.for_each_owned(
      [](std::uintptr_t base, std::size_t) { std::free(reinterpret_cast<void *>(base)); });
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
  std::uint64_t generation = 0;
  try {
    if (!table_.insert(reinterpret_cast<std::uintptr_t>(ptr), size, false, &generation).is_ok()) {
      std::free(ptr);
      return nullptr;
    }
  } catch (const std::bad_alloc &) {
    std::free(ptr);
    return nullptr;
  }
  return ptr;
}

Status SimMemory::free(void *ptr) {
  const std::lock_guard<std::mutex> lock(mutex_);
  AllocationInfo erased;
  RRT_RETURN_IF_ERROR(table_.erase(reinterpret_cast<std::uintptr_t>(ptr), &erased));
  std::memset(ptr, kPoisonByte, erased.size);
  release_evicted_locked();
  return Status::ok();
}

void SimMemory::release_evicted_locked() {
  AllocationTable::Evicted evicted;
  while (table_.pop_evicted(&evicted)) {
    std::free(reinterpret_cast<void *>(evicted.base));
  }
}

Status SimMemory::copy_host_to_device(void *dst, const void *src, std::size_t bytes) {
  if (bytes == 0) {
    return Status::ok();
  }
  if (src == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "host-to-device copy from a null host pointer");
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  RRT_RETURN_IF_ERROR(table_.check_range(dst, bytes, "destination"));
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
  RRT_RETURN_IF_ERROR(table_.check_range(src, bytes, "source"));
  std::memcpy(dst, src, bytes);
  return Status::ok();
}

Status SimMemory::copy_device_to_device(void *dst, const void *src, std::size_t bytes) {
  if (bytes == 0) {
    return Status::ok();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  RRT_RETURN_IF_ERROR(table_.check_range(src, bytes, "source"));
  RRT_RETURN_IF_ERROR(table_.check_range(dst, bytes, "destination"));
  std::memmove(dst, src, bytes);
  return Status::ok();
}

Status SimMemory::memset(void *dst, int value, std::size_t bytes) {
  if (bytes == 0) {
    return Status::ok();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  RRT_RETURN_IF_ERROR(table_.check_range(dst, bytes, "destination"));
  std::memset(dst, value, bytes);
  return Status::ok();
}

std::optional<AllocationInfo> SimMemory::find_allocation(const void *address) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return table_.find(reinterpret_cast<std::uintptr_t>(address));
}

bool SimMemory::is_live(const void *address, std::uint64_t generation) const {
  const auto info = find_allocation(address);
  return info && info->generation == generation;
}

std::size_t SimMemory::first_stale(std::span<const CapturedAddress> captured) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return table_.first_stale(captured);
}

std::size_t SimMemory::first_range_outside_allocations(std::span<const AddressRange> ranges) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return table_.first_range_outside(ranges);
}

MemoryCounters SimMemory::counters() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return table_.counters();
}

std::size_t SimMemory::quarantined_bytes() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return table_.quarantined_bytes();
}

}  // namespace replayrt::sim
