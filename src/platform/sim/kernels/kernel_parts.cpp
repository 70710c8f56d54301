#include "platform/sim/kernels/kernel_parts.h"

#include <algorithm>
#include <limits>

namespace replayrt::sim_kernels {

std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<std::uint64_t>::max()
                                                : product;
}

std::uint64_t part_count(std::uint64_t units, std::uint64_t work) noexcept {
  if (work < kMinDividedWork || units < 2) {
    return 1;
  }
  return std::min({work / kPartWork, kMaxParts, units});
}

UnitRange units_of_parts(std::uint64_t units, std::uint64_t first, std::uint64_t end,
                         std::uint64_t count) noexcept {
  // count <= kMaxParts and units counts elements in memory, so the products do not overflow.
  return UnitRange{static_cast<std::size_t>(first * units / count),
                   static_cast<std::size_t>(end * units / count)};
}

}  // namespace replayrt::sim_kernels
