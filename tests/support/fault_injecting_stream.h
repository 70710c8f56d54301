// FaultInjectingStream: a test double that wraps any Stream and makes a chosen enqueue fail.
// Part of the testing library (replayrt_testing_support); it does not ship in libreplayrt.so.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "platform/device.h"

namespace replayrt {

// The enqueue countdown that every stream of one FaultInjectingDevice shares: the Nth enqueue
// from arming on, over all of them, fails (returns a status, or throws as a host allocation
// would). Thread-safe.
class EnqueueFaults {
 public:
  enum class Fault { kNone, kReturnStatus, kThrowBadAlloc };

  // `n` 0 disarms.
  void arm(std::uint64_t n, Fault fault);
  void clear();
  std::uint64_t attempts() const;
  std::uint64_t injected() const;
  // Counts an enqueue attempt; the fault it meets (the armed one fires once and disarms).
  Fault next();

 private:
  mutable std::mutex mutex_;
  std::uint64_t attempts_ = 0;
  std::uint64_t fails_at_ = 0;  // 0: disarmed
  Fault fault_ = Fault::kNone;
  std::uint64_t injected_ = 0;
};

// Forwards every call to the wrapped stream, except that an enqueue (a copy in any direction,
// a memset, a launch, native work, an event record or wait, a replay) the shared countdown
// picks fails without reaching the stream. A returned failure is RRT_ERR_INTERNAL and, like a
// backend's own failed enqueue, fails the stream's capture when the stream is capturing; it
// never becomes the stream's sticky failure. A thrown std::bad_alloc touches nothing, as an
// allocation that failed before the stream was reached.
class FaultInjectingStream final : public Stream {
 public:
  FaultInjectingStream(std::unique_ptr<Stream> inner, std::shared_ptr<EnqueueFaults> faults)
      : inner_(std::move(inner)), faults_(std::move(faults)) {}

  Status enqueue_copy_host_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status enqueue_copy_device_to_host(void *dst, const void *src, std::size_t bytes) override;
  Status enqueue_copy_device_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status enqueue_memset(void *dst, int value, std::size_t bytes) override;
  Status enqueue_launch(const LaunchRequest &request) override;
  Status enqueue_native(const NativeWork &work) override;
  void fail_enqueue(const Status &why) override { inner_->fail_enqueue(why); }
  void *native_handle() const noexcept override { return inner_->native_handle(); }
  void *share_native_handle() noexcept override { return inner_->share_native_handle(); }
  Status record_event(Event &event) override;
  Status wait_event(Event &event) override;
  Status synchronize() override { return inner_->synchronize(); }
  Status wait_idle() override { return inner_->wait_idle(); }
  bool query() const override { return inner_->query(); }
  Status begin_capture() override { return inner_->begin_capture(); }
  Status end_capture(std::unique_ptr<Graph> *out) override { return inner_->end_capture(out); }
  bool is_capturing() const override;
  bool capture_is_foreign() const override { return inner_->capture_is_foreign(); }
  Status replay(const Graph &graph) override;

  // Runs `hook` once, inside the next is_capturing() call, after the answer was read: what
  // another thread does between a caller's check and its next step. Set it before the stream
  // is shared.
  void on_next_capture_check(std::function<void()> hook) { capture_check_hook_ = std::move(hook); }

 private:
  // OK, or the injected failure of an enqueue described by `what`.
  Status admit(const char *what);

  std::unique_ptr<Stream> inner_;
  std::shared_ptr<EnqueueFaults> faults_;
  mutable std::function<void()> capture_check_hook_;
};

}  // namespace replayrt
