// The growth points: every place where runtime-time growth could re-base a device address.
#pragma once

#include <cstdint>
#include <span>

#include <replayrt/values.h>

namespace replayrt {

// Values equal rrt_growth_point_t.
enum class GrowthPoint : std::int32_t {
  kNone = RRT_GROWTH_NONE,
  kArenaGmHeap = RRT_GROWTH_ARENA_GM_HEAP,
  kArenaGmSm = RRT_GROWTH_ARENA_GM_SM,
  kArenaRuntimePool = RRT_GROWTH_ARENA_RUNTIME_POOL,
  kRetainedStaging = RRT_GROWTH_RETAINED_STAGING,
  kGraphDefinition = RRT_GROWTH_GRAPH_DEFINITION,
  kHostStaging = RRT_GROWTH_HOST_STAGING,
  kDfxCollectors = RRT_GROWTH_DFX_COLLECTORS,
  kLaunchAllocation = RRT_GROWTH_LAUNCH_ALLOCATION,
};

inline constexpr int kGrowthPointCount = RRT_GROWTH_POINT_COUNT;

struct GrowthPointInfo {
  GrowthPoint point;
  const char *name;      // stable identifier, as used in error details
  const char *upstream;  // the dossier's G-number(s)
  const char *buffer;    // what the growth would re-base
};

// Every growth point, in id order. A new growth point also needs its rrt_growth_point_t
// value, a block the context creates with it, and a kernel-mode refusal scenario in the
// registry test, which fails until both the block and the scenario exist.
std::span<const GrowthPointInfo> growth_point_registry() noexcept;

// "gm_heap", "retained_staging", ...; "none" for kNone and unknown values.
const char *growth_point_name(GrowthPoint point) noexcept;

inline constexpr int growth_point_index(GrowthPoint point) noexcept {
  return static_cast<int>(point);
}

}  // namespace replayrt
