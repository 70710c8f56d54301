#include "platform/sim/prefetch_for_write.h"

#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace replayrt::sim {
namespace {

// Prefetches touch whole lines; 64 bytes is the line size of every x86-64 CPU.
constexpr std::uintptr_t kCacheLine = 64;

#if defined(__x86_64__)

bool cpu_has_prfchw() noexcept {
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  constexpr unsigned kExtendedFeatures = 0x80000001U;
  constexpr unsigned kPrfchwBit = 1U << 8U;
  return __get_cpuid(kExtendedFeatures, &eax, &ebx, &ecx, &edx) != 0 && (ecx & kPrfchwBit) != 0;
}

// One PREFETCHW per line from `first` on; called only where cpu_has_prfchw() holds. Written as
// volatile assembly: compilers may delete a loop whose body is only __builtin_prefetch, and
// they emit PREFETCHW for it only in code compiled for PRFCHW.
void prefetchw_lines(std::uintptr_t first, std::uintptr_t lines) noexcept {
  for (std::uintptr_t line = 0; line < lines; ++line) {
    asm volatile("prefetchw (%0)" : : "r"(first + line * kCacheLine));
  }
}

#endif

}  // namespace

CacheLineSpan cache_lines_of(const void *address, std::size_t bytes) noexcept {
  if (bytes == 0) {
    return {};
  }
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  // The range's last byte, or the address space's when the range runs past it.
  const std::uintptr_t last_byte =
      bytes - 1 > UINTPTR_MAX - start ? UINTPTR_MAX : start + (bytes - 1);
  const std::uintptr_t first_line = start & ~(kCacheLine - 1);
  const std::uintptr_t last_line = last_byte & ~(kCacheLine - 1);
  return {first_line, (last_line - first_line) / kCacheLine + 1};
}

bool has_prefetch_for_write() noexcept {
#if defined(__x86_64__)
  static const bool has = cpu_has_prfchw();
  return has;
#else
  return false;
#endif
}

void prefetch_for_write(const void *address, std::size_t bytes) noexcept {
#if defined(__x86_64__)
  if (bytes == 0 || !has_prefetch_for_write()) {
    return;
  }
  const CacheLineSpan lines = cache_lines_of(address, bytes);
  prefetchw_lines(lines.first, lines.count);
#else
  static_cast<void>(address);
  static_cast<void>(bytes);
#endif
}

}  // namespace replayrt::sim
