#include "common/growth_point.h"

#include <array>

namespace replayrt {

namespace {
constexpr std::array<GrowthPointInfo, kGrowthPointCount> kRegistry = {{
    {GrowthPoint::kArenaGmHeap, "gm_heap", "G1", "arena bank region holding run intermediates"},
    {GrowthPoint::kArenaGmSm, "gm_sm", "G1", "arena bank region holding device scheduler state"},
    {GrowthPoint::kArenaRuntimePool, "runtime_pool", "G1, G7",
     "arena bank region holding runtime images and scheduler seeds"},
    {GrowthPoint::kRetainedStaging, "retained_staging", "G2",
     "per-slot buffer staging HOST tensors of device-build runs"},
    {GrowthPoint::kGraphDefinition, "graph_definition", "G3",
     "device blocks holding host-built task-graph definitions"},
    {GrowthPoint::kHostStaging, "host_staging", "G4",
     "device copies of HOST tensors of host-build runs"},
    {GrowthPoint::kDfxCollectors, "dfx_collectors", "G5",
     "profiling collector pools with a latched shape"},
    {GrowthPoint::kLaunchAllocation, "launch_allocation", "G8",
     "any device allocation requested while a kernel-mode launch is encoded"},
}};

constexpr bool registry_is_in_id_order() {
  for (std::size_t i = 0; i < kRegistry.size(); ++i) {
    if (static_cast<std::size_t>(kRegistry[i].point) != i) {
      return false;
    }
  }
  return true;
}
static_assert(registry_is_in_id_order(), "growth point registry must be indexed by id");
}  // namespace

std::span<const GrowthPointInfo> growth_point_registry() noexcept {
  return kRegistry;
}

const char *growth_point_name(GrowthPoint point) noexcept {
  const int index = growth_point_index(point);
  if (index < 0 || index >= kGrowthPointCount) {
    return "none";
  }
  return kRegistry[static_cast<std::size_t>(index)].name;
}

}  // namespace replayrt
