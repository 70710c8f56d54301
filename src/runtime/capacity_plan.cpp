#include "runtime/capacity_plan.h"

#include <algorithm>
#include <memory>

#include "common/format.h"
#include "runtime/callable.h"

namespace replayrt {

namespace {
constexpr std::uint64_t kResidentAlignment = 1024;

std::uint64_t resident_bytes(std::uint64_t bytes) {
  return (bytes + kResidentAlignment - 1) / kResidentAlignment * kResidentAlignment;
}
}  // namespace

Status fit_capacity_plan(std::span<const rrt_callable_desc_t *const> descs, PlanFit fit,
                         rrt_capacity_plan_t *plan) {
  static const KernelRegistry builtins;
  rrt_capacity_plan_t grown = *plan;
  std::uint64_t images = 0;
  for (std::size_t i = 0; i < descs.size(); ++i) {
    std::unique_ptr<const Callable> callable;
    Status created = Callable::create(*descs[i], builtins, &callable,
                                      Callable::UnknownKernels::kAsUserKernels);
    if (!created.is_ok()) {
      return descs.size() == 1 ? created
                               : std::move(created).with_context(format("descs[%zu]", i));
    }
    const CallableRequirements &needs = callable->requirements();
    grown.gm_heap_bytes = std::max(grown.gm_heap_bytes, needs.gm_heap);
    grown.gm_sm_bytes = std::max(grown.gm_sm_bytes, needs.scheduler_state);
    grown.retained_staging_bytes = std::max(grown.retained_staging_bytes, needs.staged_all_host);
    images += resident_bytes(needs.image);
    grown.runtime_pool_bytes = std::max(grown.runtime_pool_bytes, resident_bytes(needs.image));
  }
  if (fit == PlanFit::kSideBySide) {
    grown.runtime_pool_bytes = std::max(plan->runtime_pool_bytes, images);
  }
  *plan = grown;
  return Status::ok();
}

}  // namespace replayrt
