// The simulator's spin-then-park policy. Waking a parked thread costs far more than observing
// a flag another thread is about to set, so the simulated device's workers and host waits on
// simulated work spin briefly before they block (as CUDA's spin/auto scheduling does). A
// spinning waiter yields its processor between bursts of polling: when there are more
// runnable threads than processors, the thread it waits for may be queued behind it, and a
// waiter that kept the processor for its whole budget would delay exactly the work it is
// waiting for. The budgets are policy; bench/README.md records what they cost and save.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "platform/device.h"

namespace replayrt {

// How long a waiter spins before it blocks.
inline constexpr std::chrono::nanoseconds kDefaultSpinBudget = std::chrono::microseconds(50);
// How long a host thread waiting for simulated device work (a stream or event synchronize)
// spins before it blocks under the default HostWaitPolicy (kSpinThenBlock, the budget of a
// context whose wait_spin_us is 0). It is longer than kDefaultSpinBudget: the waiting host thread
// has nothing else to do, and parking adds a wake-up to the end of every wait long enough to park.
inline constexpr std::chrono::nanoseconds kHostWaitSpinBudget = std::chrono::microseconds(250);

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until pred() is true or `budget` has passed; returns the last pred() value. Between
// bursts of polling it yields the processor to any other runnable thread.
template <class Pred>
bool spin_until(Pred pred, std::chrono::nanoseconds budget = kDefaultSpinBudget) {
  if (pred()) {
    return true;
  }
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      cpu_relax();
      if (pred()) {
        return true;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return pred();
    }
    std::this_thread::yield();
  }
}

// Blocks until `counter` >= `target`: spins for `budget`, then parks in counter.wait().
// Whoever advances the counter calls counter.notify_all() afterwards.
void wait_until_at_least(const std::atomic<std::uint64_t> &counter, std::uint64_t target,
                         std::chrono::nanoseconds budget = kDefaultSpinBudget) noexcept;

// A host thread's wait until `counter` >= `target`, as `policy` says (HostWaitPolicy,
// platform/device.h): kSpinThenBlock is wait_until_at_least with the policy's budget; kSpin
// polls without yielding or parking; kYield polls with a scheduler yield between checks;
// kBlock parks in counter.wait() at once. Whoever advances the counter calls
// counter.notify_all() afterwards.
void host_wait_until_at_least(const std::atomic<std::uint64_t> &counter, std::uint64_t target,
                              const HostWaitPolicy &policy) noexcept;

}  // namespace replayrt
