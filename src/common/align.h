// Rounding sizes and offsets up to an alignment.
#pragma once

#include <cstdint>

namespace replayrt {

// `value` rounded up to a multiple of `alignment` (a power of two).
constexpr std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) noexcept {
  return (value + alignment - 1) & ~(alignment - 1);
}

}  // namespace replayrt
