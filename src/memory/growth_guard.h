// The growth guard: the one decision every growth point takes before any side effect.
//
// A growth point (see common/growth_point.h) is any place where runtime-time growth could
// re-base a device address. Each one describes the buffer it is about to size in a
// GrowthRequest and acts on the returned decision:
//
//   kKeep          serve the request from the buffer as it is; allocate and free nothing
//   kFirstAllocate the buffer is empty; allocate it (nothing published can move)
//   kGrow          allocate a larger buffer, then free the old one (program mode only)
//   kRefuse        return refuse_growth(request) and change nothing at all
//
// Rules. A zero request keeps the buffer. A kernel-mode context refuses to grow a published
// buffer: a captured graph may hold its address. It may still take the first allocation of
// an empty buffer, except while a launch is being encoded: a launch makes no device
// allocation at all, so an allocation then is refused and charged to
// GrowthPoint::kLaunchAllocation. Program mode grows on demand. Nothing releases a published
// buffer before teardown.
//
// The functions are pure and thread-safe.
#pragma once

#include <cstdint>

#include "common/execution_mode.h"
#include "common/growth_point.h"
#include "common/status.h"

namespace replayrt {

enum class GrowthDecision { kKeep, kFirstAllocate, kGrow, kRefuse };

// The state of the context the request is made in.
struct GrowthContext {
  ExecutionMode mode = ExecutionMode::kProgram;
  bool in_launch = false;  // a kernel-mode launch is being encoded on this thread
};

struct GrowthRequest {
  GrowthPoint point = GrowthPoint::kNone;
  GrowthContext context;
  bool published = false;      // the buffer holds an address a launch may reference
  std::uint64_t capacity = 0;  // bytes the buffer holds now (0 when not published)
  std::uint64_t required = 0;  // bytes this call needs
};

GrowthDecision decide_growth(const GrowthRequest &request) noexcept;

// The refusal for a request decide_growth refused: RRT_ERR_INTERNAL naming the growth point
// (or kLaunchAllocation), the requested bytes and the frozen capacity.
Status refuse_growth(const GrowthRequest &request);

const char *growth_decision_name(GrowthDecision decision) noexcept;

}  // namespace replayrt
