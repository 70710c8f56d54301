#include "capi/api_guard.h"

#include <cstdio>
#include <cstring>

namespace replayrt::capi {

namespace {
thread_local rrt_error_detail_t last_error = {RRT_OK, RRT_GROWTH_NONE, 0, 0, {}};
}  // namespace

rrt_status_t record_failure(const char *function, const Status &status) noexcept {
  rrt_error_detail_t detail{};
  detail.code = status.code();
  detail.growth_point = static_cast<rrt_growth_point_t>(status.growth_point());
  detail.requested_bytes = status.requested_bytes();
  detail.capacity_bytes = status.capacity_bytes();
  std::snprintf(detail.message, sizeof detail.message, "%s: %s", function,
                status.message().c_str());
  last_error = detail;
  return status.code();
}

rrt_status_t record_failure(const char *function, rrt_status_t code, const char *message) noexcept {
  rrt_error_detail_t detail{};
  detail.code = code;
  detail.growth_point = RRT_GROWTH_NONE;
  std::snprintf(detail.message, sizeof detail.message, "%s: %s", function, message);
  last_error = detail;
  return code;
}

Status require_non_null(const void *ptr, const char *what) {
  if (ptr != nullptr) {
    return Status::ok();
  }
  return Status::error(RRT_ERR_INVALID_ARGUMENT, std::string(what) + " is null");
}

}  // namespace replayrt::capi

extern "C" {

RRT_API rrt_status_t rrt_last_error(rrt_error_detail_t *out) {
  if (out == nullptr) {
    return RRT_ERR_INVALID_ARGUMENT;
  }
  *out = replayrt::capi::last_error;
  return out->code;
}

}  // extern "C"
