#include "runtime/launch_order.h"

#include "platform/record_or_wait.h"

namespace replayrt {

Status LaunchOrder::wait_for_previous(Stream &stream) {
  if (last_ == &stream) {
    return Status::ok();
  }
  if (last_ != nullptr) {
    RRT_RETURN_IF_ERROR(last_->record_event(*tail_));
  }
  return stream.wait_event(*tail_);
}

Status LaunchOrder::record_tail() {
  return last_ != nullptr ? last_->record_event(*tail_) : Status::ok();
}

void LaunchOrder::wait_for_tail() const {
  tail_->wait();
}

Status LaunchOrder::forget(Stream &stream) {
  if (last_ == &stream) {
    RRT_RETURN_IF_ERROR(stream.record_event(*tail_));
    last_ = nullptr;
  }
  return Status::ok();
}

void LaunchOrder::forget_before_destroy(Stream &stream) noexcept {
  if (last_ == &stream) {
    (void)record_or_wait_idle(stream, *tail_);
    last_ = nullptr;
  }
}

}  // namespace replayrt
