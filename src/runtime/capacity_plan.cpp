#include "runtime/capacity_plan.h"

#include <algorithm>
#include <memory>

#include "common/format.h"
#include "context/device_context.h"
#include "runtime/callable.h"
#include "runtime/host_build_bind.h"

namespace replayrt {

namespace {
std::uint64_t resident_bytes(std::uint64_t bytes) {
  constexpr std::uint64_t kAlign = DeviceContext::kResidentAlignment;
  static_assert(kAlign == GraphDefinitionStore::kAlignment);
  return (bytes + kAlign - 1) / kAlign * kAlign;
}
}  // namespace

Status fit_capacity_plan(std::span<const rrt_callable_desc_t *const> descs, PlanFit fit,
                         rrt_capacity_plan_t *plan) {
  static const KernelRegistry builtins;
  rrt_capacity_plan_t grown = *plan;
  std::uint64_t pool = 0;
  std::uint64_t definitions = 0;
  for (std::size_t i = 0; i < descs.size(); ++i) {
    std::unique_ptr<const Callable> callable;
    Status created =
        Callable::create(*descs[i], builtins, &callable, Callable::UnknownKernels::kAsUserKernels);
    if (!created.is_ok()) {
      return descs.size() == 1 ? created : std::move(created).with_context(format("descs[%zu]", i));
    }
    const CallableRequirements &needs = callable->requirements();
    grown.gm_heap_bytes = std::max(grown.gm_heap_bytes, needs.gm_heap);
    if (callable->bind() == RRT_BIND_DEVICE_BUILD) {
      // The runtime image lives in runtime_pool; HOST tensors stage through retained staging.
      grown.gm_sm_bytes = std::max(grown.gm_sm_bytes, needs.scheduler_state);
      grown.retained_staging_bytes = std::max(grown.retained_staging_bytes, needs.staged_all_host);
      const std::uint64_t image = resident_bytes(needs.image);
      pool += image;
      grown.runtime_pool_bytes = std::max(grown.runtime_pool_bytes, image);
    } else {
      // The definition lives in the graph-definition store, the scheduler seed and state in
      // runtime_pool; HOST tensors stage through host staging.
      grown.host_staging_bytes = std::max(grown.host_staging_bytes, needs.staged_all_host);
      const std::uint64_t scheduler = resident_bytes(host_build_pool_bytes(*callable));
      const std::uint64_t definition = resident_bytes(needs.image);
      pool += scheduler;
      definitions += definition;
      grown.runtime_pool_bytes = std::max(grown.runtime_pool_bytes, scheduler);
      grown.graph_definition_bytes = std::max(grown.graph_definition_bytes, definition);
    }
  }
  if (fit == PlanFit::kSideBySide) {
    grown.runtime_pool_bytes = std::max(plan->runtime_pool_bytes, pool);
    grown.graph_definition_bytes = std::max(plan->graph_definition_bytes, definitions);
  }
  *plan = grown;
  return Status::ok();
}

}  // namespace replayrt
