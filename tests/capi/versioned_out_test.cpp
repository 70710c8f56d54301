// Writing versioned out-structs: a caller compiled against an older header passes a smaller
// struct_size, and nothing past it may be written.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>

#include "capi/validate.h"

namespace replayrt::capi {
namespace {

// A struct as a newer header declares it: `appended` is past an older caller's struct_size.
struct GrownStats {
  std::uint32_t struct_size;
  std::uint64_t counter;
  std::uint64_t appended;
};

constexpr unsigned char kGuard = 0xA5;

TEST(VersionedOutTest, OlderCallerStructIsWrittenOnlyUpToItsSize) {
  constexpr auto kOlderSize = static_cast<std::uint32_t>(offsetof(GrownStats, appended));
  alignas(GrownStats) unsigned char buffer[sizeof(GrownStats)];
  std::memset(buffer, kGuard, sizeof buffer);
  auto *out = reinterpret_cast<GrownStats *>(buffer);
  out->struct_size = kOlderSize;
  write_versioned_out(out, GrownStats{kOlderSize, 41, 42});
  EXPECT_EQ(out->struct_size, kOlderSize);
  EXPECT_EQ(out->counter, 41u);
  for (std::size_t i = kOlderSize; i < sizeof buffer; ++i) {
    EXPECT_EQ(buffer[i], kGuard) << "byte " << i << " is past the caller's struct_size";
  }
}

TEST(VersionedOutTest, CurrentAndNewerCallersGetEveryField) {
  constexpr std::size_t kNewerSize = sizeof(GrownStats) + 16;
  alignas(GrownStats) unsigned char buffer[kNewerSize];
  std::memset(buffer, kGuard, sizeof buffer);
  auto *out = reinterpret_cast<GrownStats *>(buffer);
  out->struct_size = kNewerSize;
  write_versioned_out(out, GrownStats{kNewerSize, 41, 42});
  EXPECT_EQ(out->struct_size, kNewerSize);
  EXPECT_EQ(out->counter, 41u);
  EXPECT_EQ(out->appended, 42u);
  for (std::size_t i = sizeof(GrownStats); i < sizeof buffer; ++i) {
    EXPECT_EQ(buffer[i], kGuard) << "byte " << i << " is past what this version knows";
  }
}

}  // namespace
}  // namespace replayrt::capi
