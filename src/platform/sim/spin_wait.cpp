#include "platform/sim/spin_wait.h"

namespace replayrt {

static_assert(HostWaitPolicy{}.spin_budget == kHostWaitSpinBudget,
              "the default host wait policy spins for kHostWaitSpinBudget");

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

void host_wait_until_at_least(const std::atomic<std::uint64_t> &counter, std::uint64_t target,
                              const HostWaitPolicy &policy) noexcept {
  const auto reached = [&] { return counter.load(std::memory_order_acquire) >= target; };
  switch (policy.kind) {
    case HostWaitPolicy::Kind::kSpin:
      while (!reached()) {
        cpu_relax();
      }
      return;
    case HostWaitPolicy::Kind::kYield:
      while (!reached()) {
        std::this_thread::yield();
      }
      return;
    case HostWaitPolicy::Kind::kBlock:
      for (;;) {
        const std::uint64_t seen = counter.load(std::memory_order_acquire);
        if (seen >= target) {
          return;
        }
        counter.wait(seen, std::memory_order_acquire);
      }
    case HostWaitPolicy::Kind::kSpinThenBlock:
      break;
  }
  wait_until_at_least(counter, target, policy.spin_budget);
}

}  // namespace replayrt
