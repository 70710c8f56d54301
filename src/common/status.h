// Internal status type. Every fallible internal call returns a Status (or writes an
// out-parameter and returns one); exceptions stop at the C ABI boundary.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <replayrt/values.h>

#include "common/growth_point.h"

namespace replayrt {

// A result code from the public error table plus, on failure, a message and (for kernel-mode
// capacity refusals) the growth point, requested bytes and frozen capacity. The success path
// carries no allocation; a failure allocates its detail once.
class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(const Status &other);
  Status &operator=(const Status &other);
  Status(Status &&) noexcept = default;
  Status &operator=(Status &&) noexcept = default;
  ~Status() = default;

  static Status ok() noexcept { return {}; }
  // `code` must be negative (an error from the public table).
  static Status error(rrt_status_t code, std::string message);
  // error(RRT_ERR_INVALID_ARGUMENT, message): the validators' one failure.
  static Status invalid_argument(std::string message);
  // A failure whose detail cannot be allocated (the host is out of memory): `code` with a
  // fixed message, made without allocating. For the noexcept paths that report failures.
  static Status error_without_detail(rrt_status_t code) noexcept;
  // A kernel-mode refusal: code RRT_ERR_INTERNAL with the growth point named.
  static Status capacity_refusal(GrowthPoint point, std::uint64_t requested_bytes,
                                 std::uint64_t capacity_bytes, std::string message);

  bool is_ok() const noexcept { return code_ == RRT_OK; }
  rrt_status_t code() const noexcept { return code_; }
  // Empty for RRT_OK; a fixed text for error_without_detail.
  const std::string &message() const noexcept;
  bool is_capacity_refusal() const noexcept;
  // GrowthPoint::kNone unless is_capacity_refusal().
  GrowthPoint growth_point() const noexcept;
  std::uint64_t requested_bytes() const noexcept;
  std::uint64_t capacity_bytes() const noexcept;

  // Prefixes the message with "`context`: ", keeping code and refusal detail. No-op on OK.
  Status with_context(const std::string &context) &&;

 private:
  struct Detail {
    std::string message;
    GrowthPoint growth_point = GrowthPoint::kNone;
    std::uint64_t requested_bytes = 0;
    std::uint64_t capacity_bytes = 0;
  };

  Status(rrt_status_t code, std::unique_ptr<Detail> detail) noexcept;

  rrt_status_t code_ = RRT_OK;
  std::unique_ptr<Detail> detail_;
};

// For a sequence of calls that all run whatever each returns: `first` takes `next` while
// `first` is OK, so it ends as the first failure.
inline void keep_first_failure(Status &first, Status next) noexcept {
  if (first.is_ok()) {
    first = std::move(next);
  }
}

}  // namespace replayrt

// Returns the status of `expr` from the enclosing function if it is not OK.
#define RRT_RETURN_IF_ERROR(expr)                \
  do {                                           \
    ::replayrt::Status rrt_status_tmp_ = (expr); \
    if (!rrt_status_tmp_.is_ok()) {              \
      return rrt_status_tmp_;                    \
    }                                            \
  } while (false)
