#include "runtime/lifecycle_gate.h"

#include <utility>

namespace replayrt {

// The handshake lives in one atomic word, so it needs no store-buffering argument: every
// enter()'s fetch_add and close_and_drain()'s fetch_or are read-modify-writes of word_, which
// the modification order totally orders. An enter() ordered before the close counts a ticket
// that the drain's loads see, and the drain waits until that ticket's fetch_sub; an enter()
// ordered after it sees the closed bit and backs out. A ticket leaves with release, and the
// drain reads the word with acquire, so everything an admitted call did happens before what
// finalize does after the drain returns. open() stores the session, then opens with release;
// enter() is acquire, so an admitted call sees the session and whatever init published.

LifecycleGate::Ticket::Ticket(Ticket &&other) noexcept
    : gate_(std::exchange(other.gate_, nullptr)), session_(other.session_) {}

LifecycleGate::Ticket &LifecycleGate::Ticket::operator=(Ticket &&other) noexcept {
  if (this != &other) {
    leave();
    gate_ = std::exchange(other.gate_, nullptr);
    session_ = other.session_;
  }
  return *this;
}

void LifecycleGate::Ticket::leave() noexcept {
  if (gate_ != nullptr) {
    std::exchange(gate_, nullptr)->leave();
  }
}

Status LifecycleGate::enter(Ticket *ticket) {
  const std::uint64_t before = word_.fetch_add(kTicket, std::memory_order_acquire);
  if ((before & kClosed) != 0) {
    leave();
    if (session() == 0) {
      return Status::error(RRT_ERR_INVALID_STATE,
                           "the context is not initialized (call rrt_program_init or "
                           "rrt_kernel_init first)");
    }
    return Status::error(RRT_ERR_INVALID_STATE, "the context is finalized");
  }
  *ticket = Ticket();
  ticket->gate_ = this;
  ticket->session_ = session_.load(std::memory_order_relaxed);
  return Status::ok();
}

void LifecycleGate::leave() noexcept {
  const std::uint64_t before = word_.fetch_sub(kTicket, std::memory_order_release);
  if (before == (kClosed | kTicket)) {
    word_.notify_all();
  }
}

void LifecycleGate::open() noexcept {
  if (is_open()) {
    return;
  }
  session_.fetch_add(1, std::memory_order_relaxed);
  word_.fetch_and(~kClosed, std::memory_order_release);
}

void LifecycleGate::close_and_drain() noexcept {
  std::uint64_t word = word_.fetch_or(kClosed, std::memory_order_acquire) | kClosed;
  while (word != kClosed) {
    word_.wait(word, std::memory_order_acquire);
    word = word_.load(std::memory_order_acquire);
  }
}

bool LifecycleGate::is_open() const noexcept {
  return (word_.load(std::memory_order_acquire) & kClosed) == 0;
}

}  // namespace replayrt
