#include "runtime/launch_order.h"

#include "platform/record_or_wait.h"

namespace replayrt {

Status LaunchOrder::wait_for_previous(Stream &stream) {
  if (last_ == &stream) {
    return Status::ok();
  }
  if (last_ != nullptr && last_->is_capturing()) {
    // Everything ordered before the last stream's work was older still, so once that work has
    // completed there is nothing left to wait for.
    return end_capturing_last();
  }
  if (last_ != nullptr) {
    RRT_RETURN_IF_ERROR(last_->record_event(*tail_));
  }
  return stream.wait_event(*tail_);
}

Status LaunchOrder::end_previous_capture(const Stream &stream) {
  if (last_ == nullptr || last_ == &stream || !last_->is_capturing()) {
    return Status::ok();
  }
  return end_capturing_last();
}

Status LaunchOrder::record_tail() {
  if (last_ != nullptr && last_->is_capturing()) {
    return end_capturing_last();
  }
  return last_ != nullptr ? last_->record_event(*tail_) : Status::ok();
}

Status LaunchOrder::end_capturing_last() {
  const Status waited = last_->wait_idle();
  if (!waited.is_ok()) {
    return Status::error(waited.code(),
                         "this work must follow the context's last launch, run or replay, "
                         "whose stream is capturing now and cannot be waited for: " +
                             waited.message());
  }
  last_ = nullptr;
  return Status::ok();
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
