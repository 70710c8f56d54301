// SimEvent: the simulator backend of the Event interface.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>

#include "platform/device.h"
#include "platform/sim/spin_wait.h"
#include "platform/sticky_failure.h"

namespace replayrt::sim {

// The state an event shares with the stream operations that record or wait on it.
//
// Records are numbered: a stream enqueuing a record takes the next sequence number
// (begin_record) and, when the record executes, marks it complete together with the failure
// it carries: the recording stream's StickyFailure and the serial of the failure pending
// then, 0 for none (complete_record). A wait binds to the latest sequence number at its
// enqueue and is satisfied once the record with that number has executed. Records of one
// event on several streams may execute out of order: a later record executing first
// satisfies only the waits bound to it, and an earlier one still counts as not executed. The
// carried failure is that of the highest-numbered executed record. A wait on the device never
// takes the carried failure over: a failure stays on the stream it happened on, and only a
// host synchronize of the event reports it.
//
// Queued operations and graphs hold this state by shared pointer, so an event may be destroyed
// while records or waits on it are still queued or captured.
// Thread safety: every member is thread-safe.
class SimEventState {
 public:
  // Takes and returns the next sequence number (the first is 1).
  std::uint64_t begin_record() noexcept;
  // The most recent sequence number taken; 0 when the event was never recorded.
  std::uint64_t latest_record() const noexcept;
  // Marks record `sequence` executed, carrying failure `serial` of `origin` (0: none), and
  // wakes waiters. The carried failure changes only when no higher-numbered record has
  // executed yet.
  void complete_record(std::uint64_t sequence, std::shared_ptr<StickyFailure> origin,
                       std::uint64_t serial);
  // True once record `sequence` has executed (always for 0, no record).
  bool is_complete(std::uint64_t sequence) const noexcept;
  // Blocks until record `sequence` has executed: spins for up to `budget`, then parks.
  void wait_for(std::uint64_t sequence,
                std::chrono::nanoseconds budget = kDefaultSpinBudget) const noexcept;
  // A host thread's wait for record `sequence`, as `policy` says.
  void host_wait_for(std::uint64_t sequence, const HostWaitPolicy &policy) const noexcept;
  // Reports the failure carried by the highest-numbered executed record if its stream has not
  // reported it yet (clearing it there); OK otherwise.
  Status report_carried_failure();

 private:
  // True once record `sequence` has executed; the caller holds mutex_.
  bool is_complete_locked(std::uint64_t sequence) const;

  std::atomic<std::uint64_t> recorded_{0};
  // Every record up to this one has executed (written with mutex_ held). Records complete in
  // order unless one event is recorded on several streams at once, so it is usually the
  // whole answer.
  std::atomic<std::uint64_t> executed_through_{0};
  // Counts completions, for waiters to sleep on: each complete_record advances it and wakes
  // them to check their record again.
  std::atomic<std::uint64_t> completions_{0};
  mutable std::mutex mutex_;
  // Executed records above executed_through_ (an earlier one has not executed yet).
  std::set<std::uint64_t> executed_ahead_;
  // An executed record could not be added to executed_ahead_ (no host memory): records above
  // executed_through_ then count as executed once highest_executed_ reaches them.
  bool ahead_untracked_ = false;
  std::uint64_t highest_executed_ = 0;
  std::shared_ptr<StickyFailure> origin_;  // carried by record highest_executed_
  std::uint64_t serial_ = 0;
};

// An event of the simulator. Any SimStream of any SimDevice may record or wait on it.
// Created by SimDevice::create_event. Destroying it while records or waits on it are queued
// is allowed: those operations keep its state alive.
// Thread safety: every member is thread-safe.
class SimEvent final : public Event {
 public:
  // Host waits (synchronize, wait) wait as `host_wait` says.
  explicit SimEvent(HostWaitPolicy host_wait = {});
  ~SimEvent() override;

  // A host wait (by default: spins for up to kHostWaitSpinBudget, then parks). Reports (and so
  // clears) the failure the awaited record carried, unless its stream reported it already.
  Status synchronize() override;
  void wait() override;
  bool query() const override;

  const std::shared_ptr<SimEventState> &state() const noexcept { return state_; }

 private:
  std::shared_ptr<SimEventState> state_;
  HostWaitPolicy host_wait_;
};

}  // namespace replayrt::sim
