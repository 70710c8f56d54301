#include "platform/sim/executor/worker_pool.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <system_error>
#include <thread>

#include <gtest/gtest.h>

namespace replayrt::sim {
namespace {

using Clock = std::chrono::steady_clock;

// Spins until `reached` or 10 s have passed; false on the timeout.
template <class Pred>
bool eventually(Pred reached) {
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (!reached()) {
    if (Clock::now() >= give_up) {
      return false;
    }
    std::this_thread::yield();
  }
  return true;
}

// What the test jobs record about the calls of one run.
struct Calls {
  std::atomic<unsigned> on_caller{0};
  std::atomic<unsigned> on_helpers{0};
  std::atomic<unsigned> helpers_in_progress{0};
  std::atomic<unsigned> helpers_returned{0};
  std::atomic<bool> saw_a_helper{false};
  unsigned invite_until_helpers = 0;  // the caller's job waits for this many helper calls
};

// The caller lingers, so a helper woken without an invitation would join the run.
void never_invites(void *context, unsigned worker, const WorkerPool::Team & /*team*/) {
  auto &calls = *static_cast<Calls *>(context);
  (worker == 0 ? calls.on_caller : calls.on_helpers).fetch_add(1);
  if (worker == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// The caller invites and waits until `invite_until_helpers` helper calls started; helpers
// linger so that a run returning before they do would be seen.
void invites(void *context, unsigned worker, const WorkerPool::Team &team) {
  auto &calls = *static_cast<Calls *>(context);
  if (worker == 0) {
    calls.on_caller.fetch_add(1);
    EXPECT_TRUE(eventually([&] {
      team.invite();
      return calls.on_helpers.load() >= calls.invite_until_helpers;
    }));
    return;
  }
  calls.helpers_in_progress.fetch_add(1);
  calls.on_helpers.fetch_add(1);
  calls.saw_a_helper.store(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  calls.helpers_in_progress.fetch_sub(1);
  calls.helpers_returned.fetch_add(1);
}

TEST(WorkerPoolTest, ARunThatNeverInvitesCallsTheJobOnlyOnTheCaller) {
  WorkerPool pool(3);
  for (int round = 0; round < 20; ++round) {
    Calls calls;
    EXPECT_EQ(pool.run(&never_invites, &calls), 1U);
    EXPECT_EQ(calls.on_caller.load(), 1U);
    EXPECT_EQ(calls.on_helpers.load(), 0U);
  }
  // Parked helpers are not woken by runs that do not invite.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  Calls calls;
  EXPECT_EQ(pool.run(&never_invites, &calls), 1U);
  EXPECT_EQ(calls.on_helpers.load(), 0U);
}

TEST(WorkerPoolTest, InvitedHelpersJoinAndTheRunReturnsOnlyAfterTheirCallsReturned) {
  for (int round = 0; round < 10; ++round) {
    Calls calls;
    calls.invite_until_helpers = 2;
    unsigned workers = 0;
    unsigned in_progress = 0;
    unsigned returned = 0;
    {
      // One pool per round: a helper still running after run() returned touches `calls`
      // only, which outlives the pool.
      WorkerPool pool(2);
      workers = pool.run(&invites, &calls);
      in_progress = calls.helpers_in_progress.load();
      returned = calls.helpers_returned.load();
    }
    EXPECT_EQ(in_progress, 0U) << "round " << round;
    EXPECT_EQ(returned, calls.on_helpers.load()) << "round " << round;
    EXPECT_GE(calls.on_helpers.load(), 2U);
    EXPECT_EQ(workers, 3U) << "round " << round;
  }
}

TEST(WorkerPoolTest, AHelperThatReturnedEarlyJoinsAgainWhenInvitedAgain) {
  struct Rejoin {
    std::atomic<unsigned> helper_calls{0};
  } rejoin;
  const WorkerPool::Job job = [](void *context, unsigned worker, const WorkerPool::Team &team) {
    auto &state = *static_cast<Rejoin *>(context);
    if (worker != 0) {
      state.helper_calls.fetch_add(1);
      return;
    }
    for (unsigned wanted = 1; wanted <= 3; ++wanted) {
      EXPECT_TRUE(eventually([&] {
        team.invite();
        return state.helper_calls.load() >= wanted;
      }));
    }
  };
  WorkerPool pool(1);
  EXPECT_EQ(pool.run(job, &rejoin), 2U);
  EXPECT_GE(rejoin.helper_calls.load(), 3U);
}

TEST(WorkerPoolTest, ARunThatFindsTheHelpersBusyRunsAloneAndItsInvitesDoNothing) {
  WorkerPool pool(1);
  struct Busy {
    std::atomic<bool> holding{false};
    std::atomic<bool> release{false};
    Calls inner;
    unsigned inner_workers = 0;
  } busy;
  const WorkerPool::Job inner = [](void *context, unsigned worker, const WorkerPool::Team &team) {
    auto &calls = *static_cast<Calls *>(context);
    (worker == 0 ? calls.on_caller : calls.on_helpers).fetch_add(1);
    EXPECT_EQ(team.size(), 1U);
    team.invite();
  };
  const WorkerPool::Job outer = [](void *context, unsigned worker, const WorkerPool::Team &) {
    auto &state = *static_cast<Busy *>(context);
    if (worker != 0) {
      return;
    }
    state.holding.store(true);
    EXPECT_TRUE(eventually([&] { return state.release.load(); }));
  };
  std::thread holder([&] { pool.run(outer, &busy); });
  ASSERT_TRUE(eventually([&] { return busy.holding.load(); }));
  busy.inner_workers = pool.run(inner, &busy.inner);
  busy.release.store(true);
  holder.join();
  EXPECT_EQ(busy.inner_workers, 1U);
  EXPECT_EQ(busy.inner.on_caller.load(), 1U);
  EXPECT_EQ(busy.inner.on_helpers.load(), 0U);
}

}  // namespace
// Starts threads until `fail_at` have been asked for, then fails as the system does when it
// has no thread left (std::system_error, resource_unavailable_try_again).
struct FailingThreadStarter {
  static inline std::atomic<int> started{0};
  static inline int fail_at = 0;
  static std::thread start(std::function<void()> body) {
    if (started.fetch_add(1) + 1 == fail_at) {
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
    }
    return std::thread(std::move(body));
  }
};

// A helper that cannot be started fails the construction with the system's error, after the
// helpers started before it have stopped: nothing is left running and nothing terminates.
TEST(WorkerPoolTest, AHelperThatCannotStartFailsTheConstructionAndStopsTheOthers) {
  FailingThreadStarter::started = 0;
  FailingThreadStarter::fail_at = 3;
  EXPECT_THROW(WorkerPool(4, &FailingThreadStarter::start), std::system_error);
  EXPECT_EQ(FailingThreadStarter::started.load(), 3);
  FailingThreadStarter::fail_at = 0;
  WorkerPool pool(2, &FailingThreadStarter::start);
  EXPECT_EQ(pool.helpers(), 2u);
}

}  // namespace replayrt::sim
