#include "platform/device.h"

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

}  // namespace replayrt
