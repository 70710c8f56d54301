// Rounding sizes and offsets up to an alignment.
#pragma once

#include <cstdint>

namespace replayrt {

// The alignment the C ABI promises for every device address the runtime hands out: allocation
// bases, staging slices, resident images and definitions. A backend's base alignment is at
// least this.
inline constexpr std::uint64_t kDeviceAddressAlignment = 1024;

// The smallest multiple of `align` (> 0) that is >= `value`. The caller keeps `value` at
// least `align` below the type's maximum.
constexpr std::uint64_t align_up(std::uint64_t value, std::uint64_t align) noexcept {
  return (value + align - 1) / align * align;
}

}  // namespace replayrt
