// The library-wide queries: the names of the error table and of the growth points, and the ABI
// version.
#include <replayrt/replayrt.h>

#include "capi/api_guard.h"
#include "common/raw_enum.h"

extern "C" {

RRT_API const char *rrt_status_name(rrt_status_t status) {
  switch (status) {
    case RRT_OK:
      return "RRT_OK";
    case RRT_ERR_INTERNAL:
      return "RRT_ERR_INTERNAL";
    case RRT_ERR_UNSUPPORTED:
      return "RRT_ERR_UNSUPPORTED";
    case RRT_ERR_PREPARED_INCOMPATIBLE:
      return "RRT_ERR_PREPARED_INCOMPATIBLE";
    case RRT_ERR_INVALID_STATE:
      return "RRT_ERR_INVALID_STATE";
    case RRT_ERR_INVALID_ARGUMENT:
      return "RRT_ERR_INVALID_ARGUMENT";
    case RRT_ERR_CALLABLE_COUNT_EXCEEDED:
      return "RRT_ERR_CALLABLE_COUNT_EXCEEDED";
    case RRT_ERR_CALLABLE_BYTES_EXCEEDED:
      return "RRT_ERR_CALLABLE_BYTES_EXCEEDED";
    case RRT_ERR_CALLABLE_NOT_RESIDENT:
      return "RRT_ERR_CALLABLE_NOT_RESIDENT";
    case RRT_ERR_OUT_OF_MEMORY:
      return "RRT_ERR_OUT_OF_MEMORY";
    case RRT_ERR_STALE_ADDRESS:
      return "RRT_ERR_STALE_ADDRESS";
    case RRT_ERR_KERNEL_FAILED:
      return "RRT_ERR_KERNEL_FAILED";
    default:
      return "RRT_ERR_UNKNOWN";
  }
}

RRT_API const char *rrt_growth_point_name(rrt_growth_point_t point) {
  // A C caller may pass any int: read it as one (raw_enum), never as the enumeration.
  switch (replayrt::raw_enum(point)) {
    case RRT_GROWTH_NONE:
      return "RRT_GROWTH_NONE";
    case RRT_GROWTH_ARENA_GM_HEAP:
      return "RRT_GROWTH_ARENA_GM_HEAP";
    case RRT_GROWTH_ARENA_GM_SM:
      return "RRT_GROWTH_ARENA_GM_SM";
    case RRT_GROWTH_ARENA_RUNTIME_POOL:
      return "RRT_GROWTH_ARENA_RUNTIME_POOL";
    case RRT_GROWTH_RETAINED_STAGING:
      return "RRT_GROWTH_RETAINED_STAGING";
    case RRT_GROWTH_GRAPH_DEFINITION:
      return "RRT_GROWTH_GRAPH_DEFINITION";
    case RRT_GROWTH_HOST_STAGING:
      return "RRT_GROWTH_HOST_STAGING";
    case RRT_GROWTH_DFX_COLLECTORS:
      return "RRT_GROWTH_DFX_COLLECTORS";
    case RRT_GROWTH_LAUNCH_ALLOCATION:
      return "RRT_GROWTH_LAUNCH_ALLOCATION";
    default:
      return "RRT_GROWTH_UNKNOWN";
  }
}

RRT_API rrt_status_t rrt_abi_version(uint32_t *major, uint32_t *minor) {
  return replayrt::capi::guarded("rrt_abi_version", [&]() -> replayrt::Status {
    RRT_RETURN_IF_ERROR(replayrt::capi::require_non_null(major, "major"));
    RRT_RETURN_IF_ERROR(replayrt::capi::require_non_null(minor, "minor"));
    *major = RRT_ABI_VERSION_MAJOR;
    *minor = RRT_ABI_VERSION_MINOR;
    return replayrt::Status::ok();
  });
}

}  // extern "C"
