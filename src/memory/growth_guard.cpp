#include "memory/growth_guard.h"

#include "common/format.h"

namespace replayrt {

namespace {
bool refuses_as_launch_allocation(const GrowthRequest &request) {
  return !request.published && request.context.in_launch;
}
}  // namespace

GrowthDecision decide_growth(const GrowthRequest &request) noexcept {
  const bool kernel = request.context.mode == ExecutionMode::kKernel;
  if (request.required == 0 || (request.published && request.required <= request.capacity)) {
    return GrowthDecision::kKeep;
  }
  if (kernel) {
    if (request.published || request.context.in_launch) {
      return GrowthDecision::kRefuse;
    }
    return GrowthDecision::kFirstAllocate;
  }
  return request.published ? GrowthDecision::kGrow : GrowthDecision::kFirstAllocate;
}

Status refuse_growth(const GrowthRequest &request) {
  const unsigned long long requested = request.required;
  const unsigned long long capacity = request.capacity;
  if (refuses_as_launch_allocation(request)) {
    return Status::capacity_refusal(
        GrowthPoint::kLaunchAllocation, request.required, request.capacity,
        format("kernel-mode capacity refusal at launch_allocation: %s needs a first allocation "
               "of %llu bytes while a launch is encoded; a kernel-mode launch allocates no "
               "device memory, so plan this buffer at kernel init",
               growth_point_name(request.point), requested));
  }
  return Status::capacity_refusal(
      request.point, request.required, request.capacity,
      format("kernel-mode capacity refusal at %s: requested %llu bytes, frozen capacity %llu "
             "bytes; growing would move an address a captured graph may hold",
             growth_point_name(request.point), requested, capacity));
}

const char *growth_decision_name(GrowthDecision decision) noexcept {
  switch (decision) {
    case GrowthDecision::kKeep:
      return "keep";
    case GrowthDecision::kFirstAllocate:
      return "first_allocate";
    case GrowthDecision::kGrow:
      return "grow";
    case GrowthDecision::kRefuse:
      return "refuse";
  }
  return "unknown";
}

}  // namespace replayrt
