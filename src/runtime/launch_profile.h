// LaunchProfile: what a profiled launch, run or replay left behind.
#pragma once

#include <vector>

#include "platform/launch/profile_records.h"

namespace replayrt {

// Its device-wall record and per-task timings.
struct LaunchProfile {
  LaunchRecord launch{};
  std::vector<TaskTiming> tasks;
};

}  // namespace replayrt
