#include "common/status.h"

#include <cassert>
#include <utility>

namespace replayrt {

namespace {
const std::string &empty_message() {
  static const std::string kEmpty;
  return kEmpty;
}

// Built during static initialization, so reporting a failure without a detail never allocates.
const std::string kNoDetailMessage =
    "the host ran out of memory while describing this failure; nothing changed";
}  // namespace

Status::Status(rrt_status_t code, std::unique_ptr<Detail> detail) noexcept
    : code_(code), detail_(std::move(detail)) {}

Status::Status(const Status &other)
    : code_(other.code_),
      detail_(other.detail_ ? std::make_unique<Detail>(*other.detail_) : nullptr) {}

Status &Status::operator=(const Status &other) {
  if (this != &other) {
    code_ = other.code_;
    detail_ = other.detail_ ? std::make_unique<Detail>(*other.detail_) : nullptr;
  }
  return *this;
}

Status Status::error(rrt_status_t code, std::string message) {
  assert(code < 0 && "Status::error needs an error code");
  auto detail = std::make_unique<Detail>();
  detail->message = std::move(message);
  return {code, std::move(detail)};
}

Status Status::invalid_argument(std::string message) {
  return error(RRT_ERR_INVALID_ARGUMENT, std::move(message));
}

Status Status::error_without_detail(rrt_status_t code) noexcept {
  return {code, nullptr};
}

Status Status::capacity_refusal(GrowthPoint point, std::uint64_t requested_bytes,
                                std::uint64_t capacity_bytes, std::string message) {
  auto detail = std::make_unique<Detail>();
  detail->message = std::move(message);
  detail->growth_point = point;
  detail->requested_bytes = requested_bytes;
  detail->capacity_bytes = capacity_bytes;
  return {RRT_ERR_INTERNAL, std::move(detail)};
}

const std::string &Status::message() const noexcept {
  if (detail_) {
    return detail_->message;
  }
  return code_ == RRT_OK ? empty_message() : kNoDetailMessage;
}

bool Status::is_capacity_refusal() const noexcept {
  return detail_ && detail_->growth_point != GrowthPoint::kNone;
}

GrowthPoint Status::growth_point() const noexcept {
  return detail_ ? detail_->growth_point : GrowthPoint::kNone;
}

std::uint64_t Status::requested_bytes() const noexcept {
  return detail_ ? detail_->requested_bytes : 0;
}

std::uint64_t Status::capacity_bytes() const noexcept {
  return detail_ ? detail_->capacity_bytes : 0;
}

Status Status::with_context(const std::string &context) && {
  if (detail_) {
    detail_->message = context + ": " + detail_->message;
  }
  return std::move(*this);
}

}  // namespace replayrt
