// LaunchOrder: the context-wide order of kernel-mode launches, eager runs and replays across
// streams, and the admission lock that orders them with caller frees.
#pragma once

#include <memory>
#include <mutex>

#include "common/status.h"
#include "platform/device.h"

namespace replayrt {

// Ordered work (launches, eager runs and replays outside captures) on one stream waits for
// the previous ordered stream's last work through a tail event, so two of them never share
// gm_heap, gm_sm or staging at once. The wait carries completion only, never the other
// stream's failure.
//
// Thread safety: mutex() is the admission lock: a launch, run launch or replay holds it from
// checking its addresses to its last enqueue, and a caller free holds it while it waits and
// frees, so the two never interleave; a run prepare holds it while it binds, which may move
// the runtime's own blocks. Every other member requires the caller to hold it,
// except wait_for_tail().
class LaunchOrder {
 public:
  // `tail` is an event of the device whose streams are ordered.
  explicit LaunchOrder(std::unique_ptr<Event> tail) noexcept : tail_(std::move(tail)) {}

  std::mutex &mutex() const noexcept { return mutex_; }

  // True when `stream` enqueued the last ordered work (so its next work is ordered already).
  bool is_last(const Stream &stream) const noexcept { return last_ == &stream; }
  // Makes `stream`'s next work wait for the tail: the last ordered work of the previous
  // stream (or where forget() ended one). Does nothing when `stream` is the last one.
  // When the previous stream has begun capturing since its ordered work (only a capture the
  // engine does not begin can: its owner's, on a wrapped native stream), a record there would
  // be captured, not queued: the calling thread waits for that stream's work queued before the
  // capture instead, and the stream is forgotten. Where the stream cannot wait while captured
  // (an owner's capture), that is RRT_ERR_INVALID_STATE and nothing changes.
  Status wait_for_previous(Stream &stream);
  // The first step of wait_for_previous(), which enqueues nothing: when the previous stream
  // has begun capturing since, waits for its work or refuses as that says; OK with nothing
  // done otherwise. A caller whose refusal must leave its own state unchanged takes it first.
  Status end_previous_capture(const Stream &stream);
  // Records that `stream` enqueued the last ordered work.
  void mark_last(Stream &stream) noexcept { last_ = &stream; }
  // Records the tail event after the last ordered work, so wait_for_tail() returns once it
  // completed. Nothing to record when nothing was ordered. A last stream that has begun
  // capturing since is waited for and forgotten as in wait_for_previous().
  Status record_tail();
  // Blocks until the work the last record_tail() marked has completed.
  void wait_for_tail() const;
  // `stream` begins capturing: its ordered work ends here (the tail records after it), and
  // its next work is ordered like another stream's. A failed record is returned and changes
  // nothing (the stream stays the last one).
  Status forget(Stream &stream);
  // `stream` is about to be destroyed: as forget(), but when the tail cannot be recorded (a
  // status or a thrown host allocation failure) it waits until the stream's queued work has
  // completed instead (record_or_wait_idle), so the next ordered work still follows that work.
  // Never throws.
  void forget_before_destroy(Stream &stream) noexcept;
  // Forgets every stream (the context was finalized and its streams drained).
  void reset() noexcept { last_ = nullptr; }

 private:
  // The last stream is capturing: waits for its work queued before the capture, then forgets
  // it. A failed wait changes nothing.
  Status end_capturing_last();

  mutable std::mutex mutex_;
  std::unique_ptr<Event> tail_;
  Stream *last_ = nullptr;
};

}  // namespace replayrt
