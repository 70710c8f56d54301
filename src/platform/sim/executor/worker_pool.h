// WorkerPool: the simulated device's worker team (the "cores" one invocation's tasks run on).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace replayrt::sim {

// run(fn, context) calls fn(context, 0) on the calling thread and fn(context, i) on helper
// thread i (1..helpers()), and returns when every call has returned. One run() uses the
// helpers at a time; a run() that finds them busy (another stream's invocation) calls only
// fn(context, 0), on the caller, so every invocation makes progress without waiting.
// Idle helpers spin briefly, then park.
//
// Thread safety: run() may be called from several threads. The destructor must not race with
// run().
class WorkerPool {
 public:
  using Job = void (*)(void *context, unsigned worker);

  explicit WorkerPool(unsigned helpers);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;
  WorkerPool(WorkerPool &&) = delete;
  WorkerPool &operator=(WorkerPool &&) = delete;

  unsigned helpers() const noexcept { return static_cast<unsigned>(threads_.size()); }
  // The number of workers run() used (1 + helpers, or 1 when the helpers were busy).
  unsigned run(Job job, void *context);

 private:
  void helper_loop(unsigned worker);

  std::vector<std::thread> threads_;
  std::mutex run_mutex_;
  Job job_ = nullptr;
  void *context_ = nullptr;
  std::atomic<std::uint64_t> started_{0};   // jobs published to the helpers
  std::atomic<std::uint64_t> finished_{0};  // helper calls returned, over all jobs
  std::atomic<bool> stopping_{false};
};

}  // namespace replayrt::sim
