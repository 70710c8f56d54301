// How long a test waits for something that must happen (a wake-up, a hand-off, a launch that must
// return) before it decides that it never will. A liveness bound, not a timing goal: 20 s by
// default, which no loaded machine reaches. REPLAYRT_TEST_LIVENESS_BOUND_MS, a positive number of
// milliseconds, replaces it; the negative controls' runner sets a shorter one, since the defects
// it puts back make exactly these waits run out. Any other value keeps the default.
#pragma once

#include <chrono>
#include <cstdlib>

namespace replayrt::testing {

inline std::chrono::milliseconds liveness_bound() {
  constexpr std::chrono::milliseconds kDefault{20'000};
  const char *value = std::getenv("REPLAYRT_TEST_LIVENESS_BOUND_MS");
  if (value == nullptr || *value == '\0') {
    return kDefault;
  }
  char *end = nullptr;
  const long long milliseconds = std::strtoll(value, &end, 10);
  if (*end != '\0' || milliseconds <= 0) {
    return kDefault;
  }
  return std::chrono::milliseconds(milliseconds);
}

}  // namespace replayrt::testing
