#include "capi/api_guard.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace replayrt::capi {

namespace {

thread_local rrt_error_detail_t last_error = {RRT_OK, RRT_GROWTH_NONE, 0, 0, {}};

// The uncut message of the last failure is "<function>: <body>". `function` is a string
// literal; the body is a literal too (`static_body`) or the copy in `owned_body`. Null
// `function`: no failure yet, or the copy could not be made (last_error.message stands in).
struct LastMessage {
  const char *function = nullptr;
  const char *static_body = nullptr;
  std::string owned_body;
};
thread_local LastMessage last_message;

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
  last_message.function = nullptr;
  last_message.static_body = nullptr;
  try {
    last_message.owned_body = status.message();
    last_message.function = function;
  } catch (...) {
    last_message.owned_body.clear();
  }
  return status.code();
}

rrt_status_t record_failure(const char *function, rrt_status_t code, const char *message) noexcept {
  rrt_error_detail_t detail{};
  detail.code = code;
  detail.growth_point = RRT_GROWTH_NONE;
  std::snprintf(detail.message, sizeof detail.message, "%s: %s", function, message);
  last_error = detail;
  last_message.function = function;
  last_message.static_body = message;
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

RRT_API rrt_status_t rrt_last_error_message(char *out, size_t capacity, size_t *length) {
  if (length == nullptr || (out == nullptr && capacity != 0)) {
    return RRT_ERR_INVALID_ARGUMENT;
  }
  const replayrt::capi::LastMessage &last = replayrt::capi::last_message;
  int written = 0;
  if (last.function == nullptr) {
    written = std::snprintf(out, capacity, "%s", replayrt::capi::last_error.message);
  } else {
    const char *body = last.static_body != nullptr ? last.static_body : last.owned_body.c_str();
    written = std::snprintf(out, capacity, "%s: %s", last.function, body);
  }
  *length = written > 0 ? static_cast<size_t>(written) : 0;
  return RRT_OK;
}

}  // extern "C"
