#include "platform/device.h"

#include <string>

#include "common/format.h"

namespace replayrt {

std::size_t Device::first_range_outside_allocations(std::span<const AddressRange> ranges) const {
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto start = reinterpret_cast<std::uintptr_t>(ranges[i].address);
    const auto owner = find_allocation(ranges[i].address);
    if (!owner || ranges[i].bytes > owner->size - (start - owner->base)) {
      return i;
    }
  }
  return ranges.size();
}

Status Device::try_allocate(std::size_t bytes, void **out) {
  *out = allocate(bytes);
  if (*out == nullptr) {
    return Status::error(RRT_ERR_OUT_OF_MEMORY, format("the %s device cannot allocate %zu bytes",
                                                       properties().name, bytes));
  }
  return Status::ok();
}

Status Device::wrap_native_stream(void * /*native_stream*/, std::unique_ptr<Stream> * /*out*/) {
  return Status::error(RRT_ERR_UNSUPPORTED,
                       std::string(properties().name) + " devices have no native streams");
}

void Device::set_host_wait_policy(const HostWaitPolicy & /*policy*/) {}

Status Device::register_foreign(void * /*ptr*/, std::size_t /*bytes*/) {
  return Status::error(RRT_ERR_UNSUPPORTED, std::string(properties().name) +
                                                " devices cannot admit foreign allocations");
}

Status Device::unregister_foreign(void * /*ptr*/) {
  return Status::error(RRT_ERR_UNSUPPORTED, std::string(properties().name) +
                                                " devices cannot admit foreign allocations");
}

Status Stream::enqueue_native(const NativeWork & /*work*/) {
  return Status::error(RRT_ERR_UNSUPPORTED, "this stream's backend runs no native work");
}

}  // namespace replayrt
