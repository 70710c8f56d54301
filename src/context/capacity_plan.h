// CapacityPlan: the bytes a kernel-mode context freezes at init, per region.
#pragma once

#include <cstdint>

namespace replayrt {

// Slot 0's regions, sized once by kernel init (DeviceContext::commit_capacity_plan) and never
// moved after: a kernel-mode request beyond one of them is refused. A zero leaves the region
// to its first allocation.
struct CapacityPlan {
  std::uint64_t gm_heap_bytes = 0;
  std::uint64_t gm_sm_bytes = 0;
  std::uint64_t runtime_pool_bytes = 0;  // resident callable images, side by side
  std::uint64_t retained_staging_bytes = 0;
  std::uint64_t graph_definition_bytes = 0;  // resident host-build definitions, side by side
  std::uint64_t host_staging_bytes = 0;
};

}  // namespace replayrt
