// LifecycleGate: admits an engine's public calls while the engine is ready, and lets finalize
// refuse new calls and wait for the ones it admitted.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/status.h"

namespace replayrt {

// States: never opened → open (session 1) → closed → open (session 2) → ... A public call
// holds a Ticket for as long as it reads or changes what finalize releases; enter() admits it
// only while the gate is open. close_and_drain() refuses every later enter() and returns once
// every ticket admitted before it has left, so after it returns no admitted call is running
// and none can start until the next open().
//
// A session numbers the gate's openings: a ticket carries the session it was admitted in, so
// an object created under one session (a prepared run) can tell that a finalize released its
// resources since.
//
// Thread safety: enter(), tickets and close_and_drain() may race freely; open() must not race
// with anything (it is called by init, which has that contract).
class LifecycleGate {
 public:
  // A call admitted by the gate; leaving (destruction) lets a draining close finish.
  class Ticket {
   public:
    Ticket() noexcept = default;
    ~Ticket() { leave(); }
    Ticket(const Ticket &) = delete;
    Ticket &operator=(const Ticket &) = delete;
    Ticket(Ticket &&other) noexcept;
    Ticket &operator=(Ticket &&other) noexcept;

    bool is_held() const noexcept { return gate_ != nullptr; }
    std::uint64_t session() const noexcept { return session_; }

   private:
    friend class LifecycleGate;

    void leave() noexcept;

    LifecycleGate *gate_ = nullptr;
    std::uint64_t session_ = 0;
  };

  LifecycleGate() noexcept = default;
  LifecycleGate(const LifecycleGate &) = delete;
  LifecycleGate &operator=(const LifecycleGate &) = delete;
  LifecycleGate(LifecycleGate &&) = delete;
  LifecycleGate &operator=(LifecycleGate &&) = delete;

  // Admits a call into *ticket (empty on entry) while the gate is open. Otherwise
  // RRT_ERR_INVALID_STATE saying why (never initialized, or finalized), and *ticket stays
  // empty.
  Status enter(Ticket *ticket);
  // Opens a closed gate and starts a new session. A no-op on an open gate.
  void open() noexcept;
  // Closes the gate, then waits for every ticket admitted before the close to leave. A no-op
  // (returning at once) on a closed gate with no ticket held. Must not be called while the
  // calling thread holds a ticket.
  void close_and_drain() noexcept;

  bool is_open() const noexcept;
  // The current session: 0 before the first open().
  std::uint64_t session() const noexcept { return session_.load(std::memory_order_acquire); }

 private:
  // Bit 0 is set while the gate is closed; the rest counts the tickets held, in units of 2.
  static constexpr std::uint64_t kClosed = 1;
  static constexpr std::uint64_t kTicket = 2;

  void leave() noexcept;

  std::atomic<std::uint64_t> word_{kClosed};
  std::atomic<std::uint64_t> session_{0};
};

}  // namespace replayrt
