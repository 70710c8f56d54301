// Checks the fuzz targets share: an invariant violation prints what broke and aborts, which
// libFuzzer reports as a crash and saves the input for.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <replayrt/replayrt.h>

namespace replayrt::fuzz {

[[noreturn]] inline void violation(const char *file, int line, const char *what) {
  rrt_error_detail_t detail{};
  (void)rrt_last_error(&detail);
  std::fprintf(stderr, "%s:%d: invariant violated: %s\n  last error: %s (%d) \"%s\"\n", file, line,
               what, rrt_status_name(detail.code), detail.code, detail.message);
  std::abort();
}

#define RRT_FUZZ_CHECK(cond, what)                           \
  do {                                                       \
    if (!(cond)) {                                           \
      ::replayrt::fuzz::violation(__FILE__, __LINE__, what); \
    }                                                        \
  } while (0)

// A failing call's code is the calling thread's last-error code (the header's conventions).
inline void check_failure_recorded(rrt_status_t status, const char *call, const char *file,
                                   int line) {
  if (status == RRT_OK) {
    return;
  }
  rrt_error_detail_t detail{};
  const rrt_status_t recorded = rrt_last_error(&detail);
  if (recorded != status || detail.code != status) {
    char what[200];
    std::snprintf(what, sizeof what, "%s returned %s but rrt_last_error holds %s", call,
                  rrt_status_name(status), rrt_status_name(recorded));
    violation(file, line, what);
  }
}

#define RRT_FUZZ_RECORDED(status, call) \
  ::replayrt::fuzz::check_failure_recorded((status), (call), __FILE__, __LINE__)

inline rrt_stats_t stats_of(rrt_context_t ctx) {
  rrt_stats_t stats{};
  stats.struct_size = sizeof stats;
  if (rrt_context_stats(ctx, &stats) != RRT_OK) {
    violation(__FILE__, __LINE__, "rrt_context_stats failed on a live context");
  }
  return stats;
}

// True when `after` equals `before` in everything but the refusal counters, which a refused
// call increments.
inline bool same_except_refusals(const rrt_stats_t &before, const rrt_stats_t &after) {
  if (before.device_alloc_calls != after.device_alloc_calls ||
      before.device_free_calls != after.device_free_calls ||
      before.live_bytes != after.live_bytes || before.peak_bytes != after.peak_bytes ||
      before.launches != after.launches || before.replays != after.replays) {
    return false;
  }
  for (int i = 0; i < RRT_GROWTH_POINT_COUNT; ++i) {
    const rrt_region_stats_t &a = before.regions[i];
    const rrt_region_stats_t &b = after.regions[i];
    if (a.capacity_bytes != b.capacity_bytes || a.used_bytes != b.used_bytes ||
        a.base_changes != b.base_changes) {
      return false;
    }
  }
  return true;
}

// A byte pattern no successful call writes into an out-parameter.
inline constexpr unsigned char kSentinelByte = 0xA5;

// T is often a handle, itself a pointer: the pattern fills the handle, not what it points to.
template <typename T>
void fill_sentinel(T *value) {
  std::memset(static_cast<void *>(value), kSentinelByte,
              sizeof(T));  // NOLINT(bugprone-sizeof-expression)
}

template <typename T>
bool still_sentinel(const T &value) {
  T expected;
  fill_sentinel(&expected);
  return std::memcmp(&expected, &value, sizeof(T)) == 0;  // NOLINT(bugprone-sizeof-expression)
}

}  // namespace replayrt::fuzz
