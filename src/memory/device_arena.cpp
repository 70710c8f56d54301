#include "memory/device_arena.h"

#include <cassert>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace replayrt {

namespace {
bool is_power_of_two(std::size_t value) {
  return value != 0 && (value & (value - 1)) == 0;
}

bool align_up(std::size_t value, std::size_t align, std::size_t *out) {
  const std::size_t mask = align - 1;
  if (value > static_cast<std::size_t>(-1) - mask) {
    return false;
  }
  *out = (value + mask) & ~mask;
  return true;
}

[[noreturn]] void abort_with(const char *message) {
  std::fprintf(stderr, "replayrt: DeviceArena::attach: %s\n", message);
  std::abort();
}
}  // namespace

DeviceArena::DeviceArena(DeviceAllocator allocator) noexcept : allocator_(allocator) {}

DeviceArena::~DeviceArena() {
  release();
}

std::size_t DeviceArena::reserve(std::size_t size, std::size_t align) {
  if (committed_ || region_count_ == kMaxRegions || !is_power_of_two(align)) {
    return kInvalidOffset;
  }
  std::size_t offset = 0;
  if (!align_up(cursor_, align, &offset) || size > static_cast<std::size_t>(-1) - offset) {
    return kInvalidOffset;
  }
  regions_[region_count_++] = Region{offset, size};
  cursor_ = offset + size;
  return offset;
}

void *DeviceArena::commit(std::size_t base_align) {
  if (committed_) {
    return current_.base;
  }
  if (!is_power_of_two(base_align)) {
    return nullptr;
  }
  Backing backing;
  if (!allocate_backing(cursor_, base_align, &backing)) {
    return nullptr;
  }
  current_ = backing;
  committed_ = true;
  return current_.base;
}

void DeviceArena::attach(void *external_base, std::size_t base_align) {
  if (external_base == nullptr) {
    abort_with("null base");
  }
  if (!is_power_of_two(base_align)) {
    abort_with("base alignment is not a power of two");
  }
  if ((reinterpret_cast<std::uintptr_t>(external_base) & (base_align - 1)) != 0) {
    abort_with("base is not aligned to the requested alignment");
  }
  if (committed_ && !attached_) {
    abort_with("arena holds a committed allocation; release it before attaching");
  }
  abort_replacement();
  reset_layout();
  current_ = Backing{nullptr, external_base};
  committed_ = true;
  attached_ = true;
}

void *DeviceArena::region_ptr(std::size_t offset) const noexcept {
  if (!committed_) {
    return nullptr;
  }
  return static_cast<std::byte *>(current_.base) + offset;
}

std::size_t DeviceArena::region_size(std::size_t offset) const noexcept {
  for (std::size_t i = 0; i < region_count_; ++i) {
    if (regions_[i].offset == offset) {
      return regions_[i].size;
    }
  }
  return 0;
}

void DeviceArena::release() noexcept {
  abort_replacement();
  free_superseded();
  if (committed_ && !attached_) {
    free_backing(&current_);
  }
  current_ = Backing{};
  committed_ = false;
  attached_ = false;
  reset_layout();
}

void DeviceArena::abandon_after_device_failure() noexcept {
  current_ = Backing{};
  staged_ = Backing{};
  superseded_ = Backing{};
  staged_size_ = 0;
  committed_ = false;
  attached_ = false;
  reset_layout();
}

bool DeviceArena::stage_replacement(std::size_t size, std::size_t base_align) {
  assert(!has_staged_replacement() && "a replacement is already staged");
  if (has_staged_replacement() || !is_power_of_two(base_align)) {
    return false;
  }
  Backing backing;
  if (!allocate_backing(size, base_align, &backing)) {
    return false;
  }
  staged_ = backing;
  staged_size_ = size;
  return true;
}

void DeviceArena::publish_replacement() noexcept {
  assert(has_staged_replacement() && "nothing staged to publish");
  assert(superseded_.raw == nullptr && "free the superseded backing before publishing again");
  if (!has_staged_replacement()) {
    return;
  }
  if (committed_ && !attached_) {
    superseded_ = current_;
  }
  current_ = staged_;
  staged_ = Backing{};
  reset_layout();
  regions_[0] = Region{0, staged_size_};
  region_count_ = 1;
  cursor_ = staged_size_;
  staged_size_ = 0;
  committed_ = true;
  attached_ = false;
}

void DeviceArena::abort_replacement() noexcept {
  if (has_staged_replacement()) {
    free_backing(&staged_);
  }
  staged_size_ = 0;
}

void DeviceArena::free_superseded() noexcept {
  if (superseded_.raw != nullptr) {
    free_backing(&superseded_);
  }
}

bool DeviceArena::allocate_backing(std::size_t bytes, std::size_t base_align,
                                   Backing *out) noexcept {
  // The allocator contract guarantees kDefaultBaseAlignment; a stricter alignment needs room
  // to forward-align.
  std::size_t request = bytes == 0 ? 1 : bytes;
  const std::size_t slack = base_align > kDefaultBaseAlignment ? base_align - 1 : 0;
  if (request > static_cast<std::size_t>(-1) - slack) {
    return false;
  }
  request += slack;
  void *raw = allocate_or_null(allocator_, request);
  if (raw == nullptr) {
    return false;
  }
  ++alloc_count_;
  const auto address = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (address + (base_align - 1)) & ~std::uintptr_t{base_align - 1};
  assert((slack != 0 || aligned == address) && "allocator broke its alignment contract");
  *out = Backing{raw, reinterpret_cast<void *>(aligned)};
  return true;
}

void DeviceArena::free_backing(Backing *backing) noexcept {
  if (backing->raw != nullptr && allocator_.deallocate(allocator_.context, backing->raw) == 0) {
    ++free_count_;
  }
  *backing = Backing{};
}

void DeviceArena::reset_layout() noexcept {
  region_count_ = 0;
  cursor_ = 0;
}

}  // namespace replayrt
