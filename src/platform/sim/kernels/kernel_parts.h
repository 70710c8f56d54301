// How the simulator's built-ins divide one task into parts for several device workers
// (HostKernelParts, platform/launch/kernel_registry.h): a task is a number of units of equal
// cost (output columns, rows, attention heads), and it divides only when its work is large
// enough that the parts outweigh handing them to another worker.
#pragma once

#include <cstddef>
#include <cstdint>

namespace replayrt::sim_kernels {

// Work (multiply-adds, or per-element operations of comparable cost) below which a task runs
// whole: a worker that joins takes microseconds to arrive.
inline constexpr std::uint64_t kMinDividedWork = std::uint64_t{1} << 17;
// The work one part is sized for, and the most parts one task divides into.
inline constexpr std::uint64_t kPartWork = std::uint64_t{1} << 15;
inline constexpr std::uint64_t kMaxParts = 64;

// a * b, or the largest value when that overflows.
std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) noexcept;

// The parts a task of `units` units and `work` in all divides into: 1 below kMinDividedWork,
// otherwise about work / kPartWork, at most kMaxParts and at most one per unit.
std::uint64_t part_count(std::uint64_t units, std::uint64_t work) noexcept;

// The units [begin, end) that parts [first, end) of `count` cover: part p covers
// [p * units / count, (p + 1) * units / count), so the parts cover every unit once.
struct UnitRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};
UnitRange units_of_parts(std::uint64_t units, std::uint64_t first, std::uint64_t end,
                         std::uint64_t count) noexcept;

}  // namespace replayrt::sim_kernels
