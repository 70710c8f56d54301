#include "runtime/validated_device_ranges.h"

namespace replayrt {

bool ValidatedDeviceRanges::covers(std::span<const TensorArg> tensors,
                                   std::uint64_t epoch) const noexcept {
  if (epoch == Device::kUntrackedFreeEpoch || epoch != epoch_) {
    return false;
  }
  std::size_t seen = 0;
  for (const TensorArg &tensor : tensors) {
    if (tensor.space != RRT_SPACE_DEVICE) {
      continue;
    }
    if (seen == count_ || ranges_[seen].address != tensor.addr ||
        ranges_[seen].bytes != tensor.bytes) {
      return false;
    }
    ++seen;
  }
  return seen == count_;
}

void ValidatedDeviceRanges::remember(std::span<const TensorArg> tensors,
                                     std::uint64_t epoch) noexcept {
  std::size_t count = 0;
  for (const TensorArg &tensor : tensors) {
    if (tensor.space != RRT_SPACE_DEVICE) {
      continue;
    }
    if (count == kCapacity) {
      forget();
      return;
    }
    ranges_[count++] = AddressRange{tensor.addr, tensor.bytes};
  }
  count_ = count;
  epoch_ = epoch;
}

void ValidatedDeviceRanges::forget() noexcept {
  count_ = 0;
  epoch_ = Device::kUntrackedFreeEpoch;
}

}  // namespace replayrt
