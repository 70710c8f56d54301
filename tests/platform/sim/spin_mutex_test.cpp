#include "platform/sim/spin_mutex.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/liveness_bound.h"

namespace replayrt {
namespace {

TEST(SpinMutexTest, TryLockFailsWhileHeldAndSucceedsOnceReleased) {
  SpinMutex mutex;
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_FALSE(mutex.try_lock());
  mutex.unlock();
  EXPECT_TRUE(mutex.try_lock());
  mutex.unlock();
}

// Plain (non-atomic) increments under the lock: a lost update shows as a short count, and
// ThreadSanitizer reports the race if the lock does not order the sections.
TEST(SpinMutexTest, ContendedSectionsNeverOverlap) {
  constexpr int kThreads = 4;
  constexpr int kIncrements = 20000;
  SpinMutex mutex;
  std::uint64_t count = 0;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        const std::lock_guard<SpinMutex> lock(mutex);
        count = count + 1;
      }
    });
  }
  for (std::thread &thread : threads) {
    thread.join();
  }
  EXPECT_EQ(count, std::uint64_t{kThreads} * kIncrements);
}

// The waiter outlasts its spin budget many times over and blocks; the owner's unlock must wake
// it. A waiter still asleep after a generous liveness bound (not a timing goal) fails the test
// and is left behind detached, holding the state it shares.
TEST(SpinMutexTest, AnUnlockWakesAWaiterThatBlocked) {
  struct Shared {
    SpinMutex mutex;
    std::atomic<bool> waiting{false};
    std::atomic<bool> acquired{false};
  };
  const auto shared = std::make_shared<Shared>();
  shared->mutex.lock();
  std::thread waiter([shared] {
    shared->waiting.store(true);
    shared->mutex.lock();
    shared->acquired.store(true);
    shared->mutex.unlock();
  });
  while (!shared->waiting.load()) {
    std::this_thread::yield();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(shared->acquired.load());
  shared->mutex.unlock();
  const auto deadline = std::chrono::steady_clock::now() + testing::liveness_bound();
  while (!shared->acquired.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!shared->acquired.load()) {
    waiter.detach();
    FAIL() << "the waiter never acquired the released mutex";
  }
  waiter.join();
}

}  // namespace
}  // namespace replayrt
