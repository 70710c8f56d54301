#include "platform/sim/executor/worker_pool.h"

#include "platform/sim/spin_wait.h"

namespace replayrt::sim {

WorkerPool::WorkerPool(unsigned helpers) {
  threads_.reserve(helpers);
  for (unsigned i = 0; i < helpers; ++i) {
    threads_.emplace_back([this, i] { helper_loop(i + 1); });
  }
}

WorkerPool::~WorkerPool() {
  stopping_.store(true, std::memory_order_release);
  started_.fetch_add(1, std::memory_order_acq_rel);
  started_.notify_all();
  for (std::thread &thread : threads_) {
    thread.join();
  }
}

unsigned WorkerPool::run(Job job, void *context) {
  std::unique_lock<std::mutex> lock(run_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || threads_.empty()) {
    job(context, 0);
    return 1;
  }
  job_ = job;
  context_ = context;
  const std::uint64_t target = finished_.load(std::memory_order_relaxed) + threads_.size();
  started_.fetch_add(1, std::memory_order_release);
  started_.notify_all();
  job(context, 0);
  wait_until_at_least(finished_, target);
  return helpers() + 1;
}

void WorkerPool::helper_loop(unsigned worker) {
  std::uint64_t seen = 0;
  for (;;) {
    wait_until_at_least(started_, seen + 1);
    seen = started_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) {
      return;
    }
    job_(context_, worker);
    finished_.fetch_add(1, std::memory_order_release);
    finished_.notify_all();
  }
}

}  // namespace replayrt::sim
