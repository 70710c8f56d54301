// ValidatedDeviceRanges: remembers the DEVICE tensors of the last run arguments that passed the
// live-allocation check, so a launch repeating them skips the device's allocation lookups.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "platform/device.h"
#include "runtime/bound_run.h"

namespace replayrt {

// The record is the address and byte count of every DEVICE tensor, in order, and the device's
// free epoch read before the check that passed them. No allocation stops being live without
// advancing the epoch (Device::free_epoch), so while it is unchanged those ranges still lie in
// live allocations. A device that does not count frees (kUntrackedFreeEpoch) is never covered.
// Arguments with more than kCapacity DEVICE tensors are not remembered.
//
// Use: read the epoch, then ask covers(); if not covered, check the ranges and on success
// remember() them with the epoch read before the check. A free that completes before the epoch
// is read is seen; one that races the whole launch is ordered by the caller (KernelLauncher
// holds the admission lock that rrt_device_free takes).
//
// Thread safety: none; the owner serializes every call.
class ValidatedDeviceRanges {
 public:
  static constexpr std::size_t kCapacity = 32;

  // True when `tensors` has the remembered DEVICE ranges, in the same order, and `epoch` is the
  // remembered epoch (and not kUntrackedFreeEpoch).
  bool covers(std::span<const TensorArg> tensors, std::uint64_t epoch) const noexcept;
  // Remembers the DEVICE ranges of `tensors`, which passed the check after `epoch` was read;
  // forgets instead when they are more than kCapacity.
  void remember(std::span<const TensorArg> tensors, std::uint64_t epoch) noexcept;
  void forget() noexcept;

 private:
  std::array<AddressRange, kCapacity> ranges_{};
  std::size_t count_ = 0;
  std::uint64_t epoch_ = Device::kUntrackedFreeEpoch;
};

}  // namespace replayrt
