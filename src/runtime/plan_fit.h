// Sizing a kernel-mode capacity plan from callables, without a context.
#pragma once

#include <cstdint>
#include <span>

#include "common/status.h"
#include "context/capacity_plan.h"
#include "platform/launch/kernel_registry.h"
#include "runtime/callable_spec.h"

namespace replayrt {

enum class PlanFit {
  kOneCallable,  // element-wise max: the plan runs any one of the callables
  kSideBySide,   // resident regions (runtime images) add up, working regions take the max
};

// Grows *plan so a kernel-mode context can prepare and run the callables. With `kernels`
// (a context's table), kernel ids are resolved there exactly as prepare resolves them, so
// the plan holds what prepare will need; an unknown id is RRT_ERR_INVALID_ARGUMENT. Without,
// ids are checked against the built-in kernels and any other non-negative id counts as a user
// kernel that declares nothing (as rrt_kernel_register's kernels are): a kernel registered
// with a descriptor may then need more (its declared reads order fewer tasks, which can
// leave more dependency edges in the image). Validation failures (Callable::create) are
// RRT_ERR_INVALID_ARGUMENT and leave *plan unchanged. Staging is sized for the HOST and ANY
// parameters (a DEVICE parameter needs none). With `max_tasks`, also raises *max_tasks to the
// largest task count of the callables (written only on success).
Status fit_capacity_plan(std::span<const CallableSpec> specs, PlanFit fit, CapacityPlan *plan,
                         std::uint32_t *max_tasks = nullptr,
                         const KernelRegistry *kernels = nullptr);

}  // namespace replayrt
