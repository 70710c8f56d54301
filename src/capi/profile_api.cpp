// Reading profiling collectors.
#include <algorithm>
#include <cstring>

#include "capi/api_guard.h"
#include "capi/handles.h"

using replayrt::Status;
using replayrt::capi::guarded;
using replayrt::capi::require_non_null;

namespace {

Status copy_out(const replayrt::LaunchProfile &profile, rrt_task_timing_t *out, uint32_t capacity,
                uint32_t *count) {
  static_assert(sizeof(rrt_task_timing_t) == sizeof(replayrt::TaskTiming));
  const std::size_t written = std::min<std::size_t>(capacity, profile.tasks.size());
  if (written != 0) {
    std::memcpy(out, profile.tasks.data(), written * sizeof(rrt_task_timing_t));
  }
  *count = static_cast<uint32_t>(profile.tasks.size());
  return Status::ok();
}

Status check_outputs(const rrt_task_timing_t *out, uint32_t capacity, const uint32_t *count) {
  RRT_RETURN_IF_ERROR(require_non_null(count, "count"));
  if (capacity != 0) {
    RRT_RETURN_IF_ERROR(require_non_null(out, "out"));
  }
  return Status::ok();
}

}  // namespace

extern "C" {

RRT_API rrt_status_t rrt_run_profile(rrt_run_t run, rrt_task_timing_t *out, uint32_t capacity,
                                     uint32_t *count) {
  return guarded("rrt_run_profile", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(run, "run"));
    RRT_RETURN_IF_ERROR(check_outputs(out, capacity, count));
    replayrt::LaunchProfile profile;
    RRT_RETURN_IF_ERROR(run->context->engine->run_profile(*run->run, &profile));
    return copy_out(profile, out, capacity, count);
  });
}

RRT_API rrt_status_t rrt_context_profile(rrt_context_t ctx, rrt_task_timing_t *out,
                                         uint32_t capacity, uint32_t *count) {
  return guarded("rrt_context_profile", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    RRT_RETURN_IF_ERROR(check_outputs(out, capacity, count));
    replayrt::LaunchProfile profile;
    RRT_RETURN_IF_ERROR(ctx->engine->kernel_profile(&profile));
    return copy_out(profile, out, capacity, count);
  });
}

}  // extern "C"
