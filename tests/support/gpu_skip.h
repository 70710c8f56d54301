// Skipping GPU tests on machines without a GPU, and refusing to skip when one is required.
#pragma once

#include <cstdlib>
#include <cstring>

namespace replayrt::testing_support {

// True when REPLAYRT_REQUIRE_GPU=1: a GPU test that would skip for lack of a device fails.
inline bool gpu_required() {
  const char *value = std::getenv("REPLAYRT_REQUIRE_GPU");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

}  // namespace replayrt::testing_support
