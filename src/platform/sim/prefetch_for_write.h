// A write-intent prefetch: the hint a producer gives the CPU before it writes memory that
// another core read or wrote last, so the coherence round trip for each cache line overlaps the
// producer's other work instead of stalling its stores.
#pragma once

#include <cstddef>
#include <cstdint>

namespace replayrt::sim {

// True when this CPU has a write-intent prefetch that prefetch_for_write issues (x86-64 with
// PRFCHW: CPUID leaf 0x80000001, ECX bit 8); false elsewhere, where prefetch_for_write does
// nothing. Determined once per process.
bool has_prefetch_for_write() noexcept;

// The 64-byte cache lines that [address, address + bytes) touches: `count` lines from the one
// at `first`. A range that runs past the end of the address space ends at its last line.
struct CacheLineSpan {
  std::uintptr_t first = 0;
  std::uintptr_t count = 0;

  bool operator==(const CacheLineSpan &) const = default;
};
CacheLineSpan cache_lines_of(const void *address, std::size_t bytes) noexcept;

// Asks the CPU to bring each cache line of [address, address + bytes) into this core's cache
// in a state a store can write at once, taking it from any other core that holds it (x86
// PREFETCHW). A hint only: it reads and writes no memory, never faults (any address, mapped or
// not, is accepted), and returns without waiting for the lines. Does nothing when
// has_prefetch_for_write() is false or `bytes` is 0.
// Thread safety: may be called from any thread.
void prefetch_for_write(const void *address, std::size_t bytes) noexcept;

}  // namespace replayrt::sim
