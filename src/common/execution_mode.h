// The execution identity of a context.
#pragma once

#include <cstdint>

#include <replayrt/values.h>

namespace replayrt {

// Values are pinned (PROGRAM = 0, KERNEL = 1) and equal rrt_mode_t; they travel in the
// invocation header.
enum class ExecutionMode : std::uint32_t {
  kProgram = RRT_MODE_PROGRAM,
  kKernel = RRT_MODE_KERNEL,
};

}  // namespace replayrt
