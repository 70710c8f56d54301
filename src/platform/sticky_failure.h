// StickyFailure: a stream's failure, until it is reported.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "common/status.h"

namespace replayrt {

// The first failure of a stream's device work is stored here and stays until it is reported;
// while it is pending the stream skips its copies, memsets and launches. Every failure gets a
// serial number. An event record carries the serial of the failure pending when it executed
// (0 for none), so a host wait on the event can report that failure.
//
// A failure is reported exactly once: report() reports whatever is pending, report(serial)
// only the failure with that serial if it is still pending (a failure already reported
// through another path returns OK). Reporting clears it, so later work runs again.
//
// Streams and the event records they executed share one StickyFailure by shared pointer, so
// it outlives a destroyed stream. Thread safety: every member is thread-safe.
class StickyFailure {
 public:
  // Stores `failure` unless one is pending.
  void fail(Status failure);
  // fail() for work that threw; never allocates when the message cannot be made.
  void fail_on_exception() noexcept;

  bool is_pending() const noexcept { return pending_.load(std::memory_order_acquire); }
  // The pending failure's serial; 0 when none is pending.
  std::uint64_t pending_serial() const noexcept;

  Status report();
  Status report(std::uint64_t serial);

 private:
  Status take_locked();

  static constexpr const char *kThrewMessage = "device work on the stream threw an exception";

  mutable std::mutex mutex_;
  Status failure_;
  // Set when work threw and its failure could not be stored (host out of memory); failure_
  // is then OK and the failure is made when it is reported.
  bool detail_lost_ = false;
  std::uint64_t serial_ = 0;  // of the pending failure, or of the last one reported
  std::atomic<bool> pending_{false};
};

}  // namespace replayrt
