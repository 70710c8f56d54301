// SpinMutex: a mutex for short critical sections that two threads of the simulator take back to
// back (a stream's enqueue and its runner's take of the queue). A contended std::mutex sends
// both the waiter and the holder into the kernel (a futex wait, then a futex wake), which costs
// microseconds; the holder of these sections releases within tens of nanoseconds, so a waiter
// first polls, yields the processor between bursts (the holder may be queued behind it), and
// blocks only after kSpinMutexSpinBudget.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace replayrt {

// How long lock() polls and yields before it blocks.
inline constexpr std::chrono::nanoseconds kSpinMutexSpinBudget = std::chrono::microseconds(20);

// Satisfies Lockable (lock, try_lock, unlock), so std::lock_guard, std::unique_lock and
// std::condition_variable_any accept it. Not recursive; unlock() must be called by the owner.
// unlock() makes a system call only when a waiter has blocked.
class SpinMutex {
 public:
  SpinMutex() = default;
  SpinMutex(const SpinMutex &) = delete;
  SpinMutex &operator=(const SpinMutex &) = delete;
  SpinMutex(SpinMutex &&) = delete;
  SpinMutex &operator=(SpinMutex &&) = delete;

  bool try_lock() noexcept {
    std::uint32_t expected = kUnlocked;
    return state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  void lock() noexcept {
    if (!try_lock()) {
      lock_contended();
    }
  }
  void unlock() noexcept {
    if (state_.exchange(kUnlocked, std::memory_order_release) == kLockedWithWaiters) {
      state_.notify_one();
    }
  }

 private:
  static constexpr std::uint32_t kUnlocked = 0;
  static constexpr std::uint32_t kLocked = 1;
  // Locked, and a waiter may be blocked in state_.wait(): unlock() must wake one.
  static constexpr std::uint32_t kLockedWithWaiters = 2;

  void lock_contended() noexcept;

  std::atomic<std::uint32_t> state_{kUnlocked};
};

}  // namespace replayrt
