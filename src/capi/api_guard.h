// The C ABI boundary: every exported function runs its body through guarded(), which turns a
// Status into a code and the calling thread's last-error detail, and stops every exception.
#pragma once

#include <new>
#include <utility>

#include <replayrt/replayrt.h>

#include "common/status.h"

namespace replayrt::capi {

// Records `status` (which must be an error) as this thread's last error, its message
// prefixed with `function`, and returns its code. The detail holds the message cut to its
// fixed field; the uncut one (rrt_last_error_message) is a copy, and when the copy cannot be
// allocated, the cut one stands in. `function` must be a string literal: it is kept.
rrt_status_t record_failure(const char *function, const Status &status) noexcept;
// Records `code` with the message "`function`: `message`" as this thread's last error and
// returns `code`. Allocates nothing, so it is safe when the host is out of memory. Both strings
// must be literals: they are kept.
rrt_status_t record_failure(const char *function, rrt_status_t code, const char *message) noexcept;

// Runs `body` (returning Status). OK → RRT_OK, leaving the last error as it was. A failure is
// recorded; std::bad_alloc becomes RRT_ERR_INTERNAL ("host out of memory"); any other
// exception RRT_ERR_INTERNAL ("unexpected exception"). The exception paths allocate nothing.
template <class Body>
rrt_status_t guarded(const char *function, Body &&body) noexcept {
  try {
    const Status status = std::forward<Body>(body)();
    return status.is_ok() ? RRT_OK : record_failure(function, status);
  } catch (const std::bad_alloc &) {
    return record_failure(function, RRT_ERR_INTERNAL, "host out of memory");
  } catch (...) {
    return record_failure(function, RRT_ERR_INTERNAL, "unexpected exception");
  }
}

// RRT_ERR_INVALID_ARGUMENT "<what> is null" unless `ptr` is set.
Status require_non_null(const void *ptr, const char *what);

}  // namespace replayrt::capi
