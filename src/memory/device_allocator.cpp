#include "memory/device_allocator.h"

#include "platform/device.h"

namespace replayrt {

void *allocate_or_null(const DeviceAllocator &allocator, std::size_t bytes) noexcept {
  try {
    return allocator.allocate(allocator.context, bytes);
  } catch (...) {
    return nullptr;
  }
}

namespace {
void *device_allocate(void *context, std::size_t bytes) {
  return static_cast<Device *>(context)->allocate(bytes);
}

int device_deallocate(void *context, void *ptr) noexcept {
  try {
    return static_cast<Device *>(context)->free(ptr).is_ok() ? 0 : -1;
  } catch (...) {
    return -1;
  }
}
}  // namespace

DeviceAllocator device_allocator(Device &device) noexcept {
  return DeviceAllocator{&device, &device_allocate, &device_deallocate};
}

}  // namespace replayrt
