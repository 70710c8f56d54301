// The allocator every memory-owning object receives instead of calling a backend itself.
#pragma once

#include <cstddef>

namespace replayrt {

// A C-shaped allocator: two function pointers and the context they receive.
//
// allocate returns a 1024-byte-aligned device address, or null when the device cannot
// satisfy the request. It may also throw (an injected test allocator does); every caller in
// the memory core treats a throw exactly like a null return and changes nothing.
// deallocate returns 0 on success and nonzero for an address allocate did not return; it
// never throws.
struct DeviceAllocator {
  void *context = nullptr;
  void *(*allocate)(void *context, std::size_t bytes) = nullptr;
  int (*deallocate)(void *context, void *ptr) noexcept = nullptr;
};

// Calls allocator.allocate and folds a throw into a null return.
void *allocate_or_null(const DeviceAllocator &allocator, std::size_t bytes) noexcept;

class Device;

// An allocator that allocates from and frees to `device`, which must outlive it.
DeviceAllocator device_allocator(Device &device) noexcept;

}  // namespace replayrt
