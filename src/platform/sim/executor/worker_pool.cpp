#include "platform/sim/executor/worker_pool.h"

#include "platform/sim/spin_wait.h"

namespace replayrt::sim {

std::thread WorkerPool::start_thread(std::function<void()> body) {
  return std::thread(std::move(body));
}

WorkerPool::WorkerPool(unsigned helpers, ThreadStarter start) : idle_(helpers) {
  threads_.reserve(helpers);
  try {
    for (unsigned i = 0; i < helpers; ++i) {
      threads_.push_back(start([this, i] { helper_loop(i + 1); }));
    }
  } catch (...) {
    // No destructor runs for a pool that was never built: the started helpers stop here.
    stop_helpers();
    throw;
  }
}

WorkerPool::~WorkerPool() {
  stop_helpers();
}

void WorkerPool::stop_helpers() noexcept {
  stopping_.store(true, std::memory_order_release);
  invitations_.fetch_add(1, std::memory_order_acq_rel);
  invitations_.notify_all();
  for (std::thread &thread : threads_) {
    thread.join();
  }
}

unsigned WorkerPool::run(Job job, void *context) {
  std::unique_lock<std::mutex> lock(run_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || threads_.empty()) {
    job(context, 0, Team(nullptr));
    return 1;
  }
  job_ = job;
  context_ = context;
  joined_.store(0, std::memory_order_relaxed);
  ++runs_;
  run_word_.store((runs_ << kRunShift) | kOpen, std::memory_order_release);
  job(context, 0, Team(this));
  std::uint64_t word = run_word_.fetch_and(~kOpen, std::memory_order_acq_rel) & ~kOpen;
  if ((word & kCallsMask) != 0 &&
      !spin_until([&] { return (run_word_.load(std::memory_order_acquire) & kCallsMask) == 0; })) {
    while (((word = run_word_.load(std::memory_order_acquire)) & kCallsMask) != 0) {
      run_word_.wait(word, std::memory_order_acquire);
    }
  }
  return 1 + joined_.load(std::memory_order_relaxed);
}

void WorkerPool::invite() noexcept {
  if (idle_.load(std::memory_order_relaxed) == 0 ||
      invitation_pending_.exchange(true, std::memory_order_acq_rel)) {
    return;
  }
  invitations_.fetch_add(1, std::memory_order_release);
  invitations_.notify_all();
}

bool WorkerPool::try_join() noexcept {
  std::uint64_t word = run_word_.load(std::memory_order_acquire);
  while ((word & kOpen) != 0) {
    if (run_word_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel)) {
      return true;
    }
  }
  return false;
}

void WorkerPool::leave() noexcept {
  const std::uint64_t after = run_word_.fetch_sub(1, std::memory_order_acq_rel) - 1;
  if ((after & (kOpen | kCallsMask)) == 0) {
    run_word_.notify_all();
  }
}

void WorkerPool::helper_loop(unsigned worker) {
  std::uint64_t seen = 0;
  std::uint64_t last_run_joined = 0;
  for (;;) {
    wait_until_at_least(invitations_, seen + 1);
    seen = invitations_.load(std::memory_order_acquire);
    invitation_pending_.store(false, std::memory_order_release);
    if (stopping_.load(std::memory_order_acquire)) {
      return;
    }
    if (!try_join()) {
      continue;
    }
    const std::uint64_t run = run_word_.load(std::memory_order_relaxed) >> kRunShift;
    if (run != last_run_joined) {
      last_run_joined = run;
      joined_.fetch_add(1, std::memory_order_relaxed);
    }
    idle_.fetch_sub(1, std::memory_order_relaxed);
    job_(context_, worker, Team(this));
    idle_.fetch_add(1, std::memory_order_relaxed);
    leave();
  }
}

}  // namespace replayrt::sim
