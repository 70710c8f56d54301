#include "platform/sim/spin_mutex.h"

#include "platform/sim/spin_wait.h"

namespace replayrt {

void SpinMutex::lock_contended() noexcept {
  const auto acquired = [&] {
    return state_.load(std::memory_order_relaxed) == kUnlocked && try_lock();
  };
  if (spin_until(acquired, kSpinMutexSpinBudget)) {
    return;
  }
  // Whoever takes the lock from here on marks it contended, so the unlock that ends its turn
  // wakes the next blocked waiter.
  while (state_.exchange(kLockedWithWaiters, std::memory_order_acquire) != kUnlocked) {
    state_.wait(kLockedWithWaiters, std::memory_order_relaxed);
  }
}

}  // namespace replayrt
