#include "runtime/lifecycle_gate.h"

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace replayrt {
namespace {

using Ticket = LifecycleGate::Ticket;

constexpr auto kLifecycleGateBlockedFor = std::chrono::milliseconds(200);

bool mentions(const Status &status, const char *text) {
  return status.message().find(text) != std::string::npos;
}

// Runs gate.close_and_drain() on another thread; the future is ready once the drain returns.
std::future<void> close_and_drain_on_another_thread(LifecycleGate &gate) {
  return std::async(std::launch::async, [&gate] { gate.close_and_drain(); });
}

// Spins until close_and_drain() on another thread has closed the gate.
void wait_until_closed(const LifecycleGate &gate) {
  while (gate.is_open()) {
    std::this_thread::yield();
  }
}

TEST(LifecycleGate, EnterBeforeTheFirstOpenIsRefusedAsNotInitialized) {
  LifecycleGate gate;
  EXPECT_FALSE(gate.is_open());
  EXPECT_EQ(gate.session(), 0u);
  Ticket ticket;
  const Status refused = gate.enter(&ticket);
  EXPECT_EQ(refused.code(), RRT_ERR_INVALID_STATE);
  EXPECT_TRUE(mentions(refused, "not initialized")) << refused.message();
  EXPECT_FALSE(ticket.is_held());
}

TEST(LifecycleGate, SessionsNumberTheOpeningsAndAClosedGateRefusesAsFinalized) {
  LifecycleGate gate;
  gate.open();
  EXPECT_TRUE(gate.is_open());
  EXPECT_EQ(gate.session(), 1u);
  {
    Ticket ticket;
    ASSERT_TRUE(gate.enter(&ticket).is_ok());
    EXPECT_TRUE(ticket.is_held());
    EXPECT_EQ(ticket.session(), 1u);
  }

  gate.close_and_drain();
  EXPECT_FALSE(gate.is_open());
  EXPECT_EQ(gate.session(), 1u);
  Ticket refused_ticket;
  const Status refused = gate.enter(&refused_ticket);
  EXPECT_EQ(refused.code(), RRT_ERR_INVALID_STATE);
  EXPECT_TRUE(mentions(refused, "finalized")) << refused.message();
  EXPECT_FALSE(mentions(refused, "not initialized")) << refused.message();
  EXPECT_FALSE(refused_ticket.is_held());

  gate.open();
  EXPECT_EQ(gate.session(), 2u);
  Ticket ticket;
  ASSERT_TRUE(gate.enter(&ticket).is_ok());
  EXPECT_EQ(ticket.session(), 2u);
}

TEST(LifecycleGate, OpenOnAnOpenGateKeepsTheSession) {
  LifecycleGate gate;
  gate.open();
  gate.open();
  EXPECT_TRUE(gate.is_open());
  EXPECT_EQ(gate.session(), 1u);
  Ticket ticket;
  ASSERT_TRUE(gate.enter(&ticket).is_ok());
  gate.open();
  EXPECT_EQ(gate.session(), 1u);
  EXPECT_EQ(ticket.session(), 1u);
}

TEST(LifecycleGate, CloseAndDrainOnAClosedGateWithNoTicketReturnsAtOnce) {
  LifecycleGate never_opened;
  never_opened.close_and_drain();
  EXPECT_FALSE(never_opened.is_open());
  EXPECT_EQ(never_opened.session(), 0u);

  LifecycleGate gate;
  gate.open();
  gate.close_and_drain();
  gate.close_and_drain();
  EXPECT_FALSE(gate.is_open());
  EXPECT_EQ(gate.session(), 1u);
}

// A refused enter() counts a ticket for a moment and backs out; it must not leave one behind
// for the next drain to wait on.
TEST(LifecycleGate, RefusedEntersLeaveNoTicketForTheNextDrain) {
  LifecycleGate gate;
  for (int i = 0; i < 3; ++i) {
    Ticket ticket;
    EXPECT_FALSE(gate.enter(&ticket).is_ok());
  }
  gate.open();
  gate.close_and_drain();
  for (int i = 0; i < 3; ++i) {
    Ticket ticket;
    EXPECT_FALSE(gate.enter(&ticket).is_ok());
  }
  gate.open();
  std::future<void> drained = close_and_drain_on_another_thread(gate);
  ASSERT_EQ(drained.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "a drain waited for a ticket no one holds";
}

// The drain closes the gate at once (later enters are refused) but returns only when the
// ticket admitted before the close has left.
TEST(LifecycleGate, CloseAndDrainWaitsForATicketHeldOnAnotherThread) {
  LifecycleGate gate;
  gate.open();
  Ticket ticket;
  ASSERT_TRUE(gate.enter(&ticket).is_ok());

  std::future<void> drained = close_and_drain_on_another_thread(gate);
  wait_until_closed(gate);
  Ticket late;
  const Status refused = gate.enter(&late);
  EXPECT_EQ(refused.code(), RRT_ERR_INVALID_STATE);
  EXPECT_TRUE(mentions(refused, "finalized")) << refused.message();
  EXPECT_EQ(drained.wait_for(kLifecycleGateBlockedFor), std::future_status::timeout)
      << "close_and_drain returned while an admitted ticket was held";

  ticket = Ticket();
  EXPECT_FALSE(ticket.is_held());
  drained.get();
  EXPECT_FALSE(gate.is_open());
}

// Many threads enter while the gate closes. Each enter is either admitted, and then the drain
// cannot have returned while the ticket is held, or refused, and then every later enter of
// that thread is refused too. What a thread writes under a ticket happens before the drain
// returns: the test reads it without joining first (TSan checks the ordering).
TEST(LifecycleGate, EntersRacingACloseAreAdmittedBeforeTheDrainReturnsOrRefused) {
  constexpr int kThreads = 4;
  constexpr int kEnters = 10000;
  LifecycleGate gate;
  gate.open();
  std::atomic<bool> drain_returned{false};
  std::atomic<int> admitted_total{0};
  std::atomic<int> violations{0};
  std::atomic<int> unexpected_refusals{0};
  // Written only under a ticket, by its own thread.
  std::array<int, kThreads> admitted_under_ticket{};
  std::array<int, kThreads> admitted{};
  std::array<int, kThreads> refused{};

  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      bool was_refused = false;
      for (int i = 0; i < kEnters; ++i) {
        Ticket ticket;
        const Status status = gate.enter(&ticket);
        if (status.is_ok()) {
          if (was_refused || drain_returned.load(std::memory_order_acquire) ||
              ticket.session() != 1) {
            violations.fetch_add(1, std::memory_order_relaxed);
          }
          ++admitted_under_ticket[t];
          admitted_total.fetch_add(1, std::memory_order_relaxed);
          std::this_thread::yield();
          if (drain_returned.load(std::memory_order_acquire)) {
            violations.fetch_add(1, std::memory_order_relaxed);
          }
          ++admitted[t];
        } else {
          if (status.code() != RRT_ERR_INVALID_STATE || !mentions(status, "finalized")) {
            unexpected_refusals.fetch_add(1, std::memory_order_relaxed);
          }
          was_refused = true;
          ++refused[t];
        }
      }
    });
  }
  // Close once the threads are inside the gate, so the close races their enters.
  while (admitted_total.load(std::memory_order_relaxed) < kThreads) {
    std::this_thread::yield();
  }
  gate.close_and_drain();
  drain_returned.store(true, std::memory_order_release);
  std::array<int, kThreads> seen_after_drain{};
  for (int t = 0; t < kThreads; ++t) {
    seen_after_drain[t] = admitted_under_ticket[t];
  }
  for (std::thread &thread : threads) {
    thread.join();
  }

  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(unexpected_refusals.load(), 0);
  int total = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(seen_after_drain[t], admitted[t]) << "thread " << t;
    total += admitted[t] + refused[t];
  }
  EXPECT_EQ(total, kThreads * kEnters);
  EXPECT_GE(admitted_total.load(), kThreads);
}

TEST(LifecycleGate, MovingATicketTransfersItAndItLeavesOnce) {
  LifecycleGate gate;
  gate.open();
  Ticket first;
  ASSERT_TRUE(gate.enter(&first).is_ok());
  Ticket moved(std::move(first));
  EXPECT_FALSE(first.is_held());  // NOLINT(bugprone-use-after-move): a moved-from is empty
  EXPECT_TRUE(moved.is_held());
  EXPECT_EQ(moved.session(), 1u);

  Ticket assigned;
  assigned = std::move(moved);
  EXPECT_FALSE(moved.is_held());  // NOLINT(bugprone-use-after-move): a moved-from is empty
  EXPECT_TRUE(assigned.is_held());

  std::future<void> drained = close_and_drain_on_another_thread(gate);
  wait_until_closed(gate);
  // The moved-from tickets are empty: destroying them lets nothing go.
  first = Ticket();
  moved = Ticket();
  EXPECT_EQ(drained.wait_for(kLifecycleGateBlockedFor), std::future_status::timeout)
      << "close_and_drain returned while the moved-to ticket was held";
  assigned = Ticket();
  drained.get();

  // One leave per admission: a fresh session's drain does not wait.
  gate.open();
  Ticket next;
  ASSERT_TRUE(gate.enter(&next).is_ok());
  EXPECT_EQ(next.session(), 2u);
  next = Ticket();
  std::future<void> again = close_and_drain_on_another_thread(gate);
  ASSERT_EQ(again.wait_for(std::chrono::seconds(30)), std::future_status::ready);
}

// Move-assigning onto a held ticket leaves the ticket it held: two admissions, two leaves.
TEST(LifecycleGate, MoveAssigningOntoAHeldTicketLeavesTheOldOne) {
  LifecycleGate gate;
  gate.open();
  Ticket a;
  Ticket b;
  ASSERT_TRUE(gate.enter(&a).is_ok());
  ASSERT_TRUE(gate.enter(&b).is_ok());
  a = std::move(b);
  EXPECT_TRUE(a.is_held());
  EXPECT_FALSE(b.is_held());  // NOLINT(bugprone-use-after-move): a moved-from is empty

  std::future<void> drained = close_and_drain_on_another_thread(gate);
  wait_until_closed(gate);
  EXPECT_EQ(drained.wait_for(kLifecycleGateBlockedFor), std::future_status::timeout)
      << "close_and_drain returned while a ticket was held";
  a = Ticket();
  drained.get();
}

// enter() into a ticket still held from an earlier admission leaves the old one first.
TEST(LifecycleGate, EnterIntoAHeldTicketReplacesItWithoutLeakingTheOld) {
  LifecycleGate gate;
  gate.open();
  Ticket ticket;
  ASSERT_TRUE(gate.enter(&ticket).is_ok());
  ASSERT_TRUE(gate.enter(&ticket).is_ok());
  ticket = Ticket();
  std::future<void> drained = close_and_drain_on_another_thread(gate);
  ASSERT_EQ(drained.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the first admission of the reused ticket never left";
}

}  // namespace
}  // namespace replayrt
