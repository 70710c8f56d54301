#include "runtime/plan_fit.h"

#include <algorithm>
#include <memory>

#include "common/align.h"
#include "common/format.h"
#include "context/device_context.h"
#include "runtime/bind.h"
#include "runtime/callable.h"

namespace replayrt {

namespace {
std::uint64_t resident_bytes(std::uint64_t bytes) {
  static_assert(DeviceContext::kResidentAlignment == GraphDefinitionStore::kAlignment);
  return align_up(bytes, DeviceContext::kResidentAlignment);
}
}  // namespace

Status fit_capacity_plan(std::span<const CallableSpec> specs, PlanFit fit, CapacityPlan *plan,
                         std::uint32_t *max_tasks, const KernelRegistry *kernels) {
  static const KernelRegistry builtins({});
  const KernelRegistry &table = kernels != nullptr ? *kernels : builtins;
  const Callable::UnknownKernels unknown = kernels != nullptr
                                               ? Callable::UnknownKernels::kReject
                                               : Callable::UnknownKernels::kAsUserKernels;
  CapacityPlan grown = *plan;
  std::uint32_t tasks = max_tasks != nullptr ? *max_tasks : 0;
  std::uint64_t pool = 0;
  std::uint64_t definitions = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    std::unique_ptr<const Callable> callable;
    Status created = Callable::create(specs[i], table, &callable, unknown);
    if (!created.is_ok()) {
      return specs.size() == 1 ? created : std::move(created).with_context(format("descs[%zu]", i));
    }
    const Footprint needs = bind_strategy(callable->bind()).footprint(*callable);
    tasks = std::max(tasks, static_cast<std::uint32_t>(callable->tasks().size()));
    grown.gm_heap_bytes = std::max(grown.gm_heap_bytes, needs.gm_heap);
    grown.gm_sm_bytes = std::max(grown.gm_sm_bytes, needs.gm_sm);
    std::uint64_t &staging = needs.staging == StagingKind::kRetained ? grown.retained_staging_bytes
                                                                     : grown.host_staging_bytes;
    staging = std::max(staging, needs.staging_all_host);
    const std::uint64_t resident = resident_bytes(needs.runtime_pool);
    pool += resident;
    grown.runtime_pool_bytes = std::max(grown.runtime_pool_bytes, resident);
    if (needs.graph_definition != 0) {
      const std::uint64_t definition = resident_bytes(needs.graph_definition);
      definitions += definition;
      grown.graph_definition_bytes = std::max(grown.graph_definition_bytes, definition);
    }
  }
  if (fit == PlanFit::kSideBySide) {
    grown.runtime_pool_bytes = std::max(plan->runtime_pool_bytes, pool);
    grown.graph_definition_bytes = std::max(plan->graph_definition_bytes, definitions);
  }
  *plan = grown;
  if (max_tasks != nullptr) {
    *max_tasks = tasks;
  }
  return Status::ok();
}

}  // namespace replayrt
