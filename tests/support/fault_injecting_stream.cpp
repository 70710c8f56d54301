#include "support/fault_injecting_stream.h"

#include <new>
#include <string>
#include <utility>

namespace replayrt {

void EnqueueFaults::arm(std::uint64_t n, Fault fault) {
  const std::lock_guard<std::mutex> lock(mutex_);
  fails_at_ = n == 0 || fault == Fault::kNone ? 0 : attempts_ + n;
  fault_ = fault;
}

void EnqueueFaults::clear() {
  const std::lock_guard<std::mutex> lock(mutex_);
  fails_at_ = 0;
  fault_ = Fault::kNone;
}

std::uint64_t EnqueueFaults::attempts() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return attempts_;
}

std::uint64_t EnqueueFaults::injected() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return injected_;
}

EnqueueFaults::Fault EnqueueFaults::next() {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++attempts_;
  if (fails_at_ == 0 || attempts_ != fails_at_) {
    return Fault::kNone;
  }
  fails_at_ = 0;
  ++injected_;
  return std::exchange(fault_, Fault::kNone);
}

Status FaultInjectingStream::admit(const char *what) {
  const EnqueueFaults::Fault fault = faults_->next();
  if (fault == EnqueueFaults::Fault::kNone) {
    return Status::ok();
  }
  if (fault == EnqueueFaults::Fault::kThrowBadAlloc) {
    throw std::bad_alloc();
  }
  Status injected =
      Status::error(RRT_ERR_INTERNAL, std::string("injected failure of a stream ") + what);
  if (inner_->is_capturing()) {
    inner_->fail_enqueue(injected);
  }
  return injected;
}

Status FaultInjectingStream::enqueue_copy_host_to_device(void *dst, const void *src,
                                                         std::size_t bytes) {
  RRT_RETURN_IF_ERROR(admit("host-to-device copy"));
  return inner_->enqueue_copy_host_to_device(dst, src, bytes);
}

Status FaultInjectingStream::enqueue_copy_device_to_host(void *dst, const void *src,
                                                         std::size_t bytes) {
  RRT_RETURN_IF_ERROR(admit("device-to-host copy"));
  return inner_->enqueue_copy_device_to_host(dst, src, bytes);
}

Status FaultInjectingStream::enqueue_copy_device_to_device(void *dst, const void *src,
                                                           std::size_t bytes) {
  RRT_RETURN_IF_ERROR(admit("device-to-device copy"));
  return inner_->enqueue_copy_device_to_device(dst, src, bytes);
}

Status FaultInjectingStream::enqueue_memset(void *dst, int value, std::size_t bytes) {
  RRT_RETURN_IF_ERROR(admit("memset"));
  return inner_->enqueue_memset(dst, value, bytes);
}

Status FaultInjectingStream::enqueue_launch(const LaunchRequest &request) {
  RRT_RETURN_IF_ERROR(admit("launch"));
  return inner_->enqueue_launch(request);
}

Status FaultInjectingStream::enqueue_native(const NativeWork &work) {
  RRT_RETURN_IF_ERROR(admit("native work"));
  return inner_->enqueue_native(work);
}

Status FaultInjectingStream::record_event(Event &event) {
  RRT_RETURN_IF_ERROR(admit("event record"));
  return inner_->record_event(event);
}

Status FaultInjectingStream::wait_event(Event &event) {
  RRT_RETURN_IF_ERROR(admit("event wait"));
  return inner_->wait_event(event);
}

Status FaultInjectingStream::replay(const Graph &graph) {
  RRT_RETURN_IF_ERROR(admit("replay"));
  return inner_->replay(graph);
}

bool FaultInjectingStream::is_capturing() const {
  const bool capturing = inner_->is_capturing();
  if (capture_check_hook_) {
    std::exchange(capture_check_hook_, nullptr)();
  }
  return capturing;
}

}  // namespace replayrt
