// Conversions between the C ABI's rrt_capacity_plan_t and the core's CapacityPlan.
#pragma once

#include <replayrt/replayrt.h>

#include "context/capacity_plan.h"

namespace replayrt::capi {

inline CapacityPlan decode_capacity_plan(const rrt_capacity_plan_t &plan) noexcept {
  return CapacityPlan{plan.gm_heap_bytes,          plan.gm_sm_bytes,
                      plan.runtime_pool_bytes,     plan.retained_staging_bytes,
                      plan.graph_definition_bytes, plan.host_staging_bytes};
}

inline rrt_capacity_plan_t encode_capacity_plan(const CapacityPlan &plan) noexcept {
  return rrt_capacity_plan_t{plan.gm_heap_bytes,          plan.gm_sm_bytes,
                             plan.runtime_pool_bytes,     plan.retained_staging_bytes,
                             plan.graph_definition_bytes, plan.host_staging_bytes};
}

}  // namespace replayrt::capi
