#include "platform/sim/spin_wait.h"

namespace replayrt {

void wait_until_at_least(const std::atomic<std::uint64_t> &counter, std::uint64_t target,
                         std::chrono::nanoseconds budget) noexcept {
  const auto reached = [&] { return counter.load(std::memory_order_acquire) >= target; };
  if (spin_until(reached, budget)) {
    return;
  }
  for (;;) {
    const std::uint64_t seen = counter.load(std::memory_order_acquire);
    if (seen >= target) {
      return;
    }
    counter.wait(seen, std::memory_order_acquire);
  }
}

}  // namespace replayrt
