// SimEvent: the simulator backend of the Event interface.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

#include "platform/device.h"
#include "platform/sim/spin_wait.h"

namespace replayrt::sim {

// The state an event shares with the stream operations that record or wait on it.
//
// Records are numbered: a stream enqueuing a record takes the next sequence number
// (begin_record) and, when the record executes, marks it complete together with the failure
// it carries (complete_record). A wait binds to the latest sequence number at its enqueue and
// is satisfied once a record with that number or a later one has executed. When records of
// one event run on several streams at once, "later" means a higher sequence number, whichever
// stream it ran on. The carried failure is that of the highest-numbered executed record.
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
  // Marks record `sequence` executed, carrying `failure` (OK for none), and wakes waiters.
  // A record older than one already executed changes nothing.
  void complete_record(std::uint64_t sequence, const Status &failure);
  bool is_complete(std::uint64_t sequence) const noexcept;
  // Blocks until record `sequence` (or a later one) has executed: spins for up to `budget`,
  // then parks.
  void wait_for(std::uint64_t sequence,
                std::chrono::nanoseconds budget = kDefaultSpinBudget) const noexcept;
  // The failure carried by the highest-numbered executed record; OK for none.
  Status carried_failure() const;

 private:
  std::atomic<std::uint64_t> recorded_{0};
  // Written only with mutex_ held, so failure_ always belongs to record completed_.
  std::atomic<std::uint64_t> completed_{0};
  mutable std::mutex mutex_;
  Status failure_;
};

// An event of the simulator. Any SimStream of any SimDevice may record or wait on it.
// Created by SimDevice::create_event. Destroying it while records or waits on it are queued
// is allowed: those operations keep its state alive.
// Thread safety: every member is thread-safe.
class SimEvent final : public Event {
 public:
  SimEvent();
  ~SimEvent() override;

  // A host wait: spins for up to kHostWaitSpinBudget, then parks.
  Status synchronize() override;
  bool query() const override;

  const std::shared_ptr<SimEventState> &state() const noexcept { return state_; }

 private:
  std::shared_ptr<SimEventState> state_;
};

}  // namespace replayrt::sim
