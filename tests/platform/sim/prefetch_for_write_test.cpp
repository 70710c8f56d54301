#include "platform/sim/prefetch_for_write.h"

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace replayrt::sim {
namespace {

// A prefetch is a hint: whatever it is given, it changes no byte of memory.
TEST(PrefetchForWriteTest, LeavesTheBytesOfTheRangeAsTheyWere) {
  std::vector<unsigned char> buffer(4096);
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    buffer[i] = static_cast<unsigned char>(i * 7U);
  }
  const std::vector<unsigned char> before = buffer;
  for (const std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{63}}) {
    for (const std::size_t bytes :
         {std::size_t{0}, std::size_t{1}, std::size_t{64}, std::size_t{65}, std::size_t{4000}}) {
      prefetch_for_write(buffer.data() + offset, bytes);
    }
  }
  EXPECT_EQ(buffer, before);
}

const void *at(std::uintptr_t address) {
  return reinterpret_cast<const void *>(address);
}

TEST(PrefetchForWriteTest, CacheLinesCoverEveryByteOfTheRange) {
  EXPECT_EQ(cache_lines_of(at(0x1000), 0).count, 0U);
  EXPECT_EQ(cache_lines_of(at(0x1000), 1), (CacheLineSpan{0x1000, 1}));
  EXPECT_EQ(cache_lines_of(at(0x1000), 64), (CacheLineSpan{0x1000, 1}));
  EXPECT_EQ(cache_lines_of(at(0x1000), 65), (CacheLineSpan{0x1000, 2}));
  EXPECT_EQ(cache_lines_of(at(0x103F), 2), (CacheLineSpan{0x1000, 2}));
  EXPECT_EQ(cache_lines_of(at(0x1010), 368), (CacheLineSpan{0x1000, 6}));
  EXPECT_EQ(cache_lines_of(at(0x1010), 369), (CacheLineSpan{0x1000, 7}));
}

// A range that runs past the end of the address space ends at its last line instead of
// wrapping around to the bottom.
TEST(PrefetchForWriteTest, CacheLinesStopAtTheEndOfTheAddressSpace) {
  const std::uintptr_t last_line = UINTPTR_MAX & ~std::uintptr_t{63};
  EXPECT_EQ(cache_lines_of(at(UINTPTR_MAX), 1), (CacheLineSpan{last_line, 1}));
  EXPECT_EQ(cache_lines_of(at(UINTPTR_MAX), SIZE_MAX), (CacheLineSpan{last_line, 1}));
  EXPECT_EQ(cache_lines_of(at(UINTPTR_MAX - 100), 1024), (CacheLineSpan{last_line - 64, 2}));
}

// Ranges nothing is mapped at, and ranges that run past the end of the address space, do not
// fault.
TEST(PrefetchForWriteTest, AcceptsAnyAddressWithoutFaulting) {
  prefetch_for_write(nullptr, 4096);
  prefetch_for_write(at(64), 1);
  prefetch_for_write(at(UINTPTR_MAX - 100), 1024);
  prefetch_for_write(at(UINTPTR_MAX), SIZE_MAX);
  SUCCEED();
}

#if defined(__x86_64__) && defined(__linux__)
// The value of the first /proc/cpuinfo line whose key is `key` ("" when there is none).
std::string first_cpuinfo_value(const std::string &key) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos && line.rfind(key, 0) == 0 &&
        line.find_first_not_of(" \t", key.size()) == colon) {
      return line.substr(colon + 1);
    }
  }
  return "";
}
#endif

// Linux lists CPUID leaf 0x80000001's ECX bit 8 (PRFCHW) among a CPU's flags as
// "3dnowprefetch". It also lists the flag on AMD CPUs that have 3DNow! or long mode without the
// bit, so only on Intel CPUs does the flag's absence mean the bit is clear.
TEST(PrefetchForWriteTest, SupportAgreesWithTheFlagTheKernelReports) {
#if defined(__x86_64__) && defined(__linux__)
  std::istringstream flags(first_cpuinfo_value("flags"));
  std::string flag;
  bool listed = false;
  while (flags >> flag) {
    listed = listed || flag == "3dnowprefetch";
  }
  if (has_prefetch_for_write()) {
    EXPECT_TRUE(listed);
  }
  if (first_cpuinfo_value("vendor_id").find("GenuineIntel") != std::string::npos) {
    EXPECT_EQ(has_prefetch_for_write(), listed);
  }
#elif !defined(__x86_64__)
  EXPECT_FALSE(has_prefetch_for_write());
#else
  GTEST_SKIP() << "no /proc/cpuinfo to compare with";
#endif
}

}  // namespace
}  // namespace replayrt::sim
