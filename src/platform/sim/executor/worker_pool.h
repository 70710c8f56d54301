// WorkerPool: the simulated device's worker team (the "cores" one invocation's tasks run on).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace replayrt::sim {

// run(job, context) calls job(context, 0, team) on the calling thread and returns when that
// call has returned and every helper call of the run has returned. Helpers join a run only
// when it invites them: team.invite() (from any call of the run) wakes the idle helpers, and
// each calls job(context, i, team) on helper thread i (1..helpers()) if the run is still in
// progress when it wakes. A run that never invites wakes no helper, so a run whose work
// has no parallelism costs no more than a call of job on the caller.
//
// The job's contract: the caller's call (worker 0) returns only when the run's work is done,
// and never waits for a helper to start. A helper's call may return while work remains (when
// it found none ready); it may then be called again in the same run after another invite.
//
// One run() uses the helpers at a time; a run() that finds them busy (another stream's
// invocation) calls only job(context, 0, team) with a team whose invite does nothing, so every
// invocation makes progress without waiting. Idle helpers spin briefly, then park.
//
// Thread safety: run() may be called from several threads; invite() from any call of the
// run its team belongs to. The destructor must not race with run().
class WorkerPool {
 public:
  // The run a job call belongs to.
  class Team {
   public:
    // Asks the idle helpers to join the run. Cheap when no helper is idle or an invitation
    // is already on its way; does nothing for a run without helpers.
    void invite() const noexcept {
      if (pool_ != nullptr) {
        pool_->invite();
      }
    }
    // 1 + the helpers this run may use (1 for a run without helpers).
    unsigned size() const noexcept { return pool_ != nullptr ? pool_->helpers() + 1 : 1; }

   private:
    friend class WorkerPool;
    explicit Team(WorkerPool *pool) noexcept : pool_(pool) {}
    WorkerPool *pool_;
  };

  using Job = void (*)(void *context, unsigned worker, const Team &team);

  // Starts one helper thread running `body`. Tests substitute one that fails.
  using ThreadStarter = std::thread (*)(std::function<void()> body);
  static std::thread start_thread(std::function<void()> body);

  // Starts `helpers` helper threads with `start`. When one cannot be started, the helpers
  // started before it are stopped and joined and the starter's exception (std::system_error
  // from std::thread) propagates.
  explicit WorkerPool(unsigned helpers, ThreadStarter start = &start_thread);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;
  WorkerPool(WorkerPool &&) = delete;
  WorkerPool &operator=(WorkerPool &&) = delete;

  unsigned helpers() const noexcept { return static_cast<unsigned>(threads_.size()); }
  // Returns the number of workers that ran a call of the job: 1 + the helpers that joined.
  unsigned run(Job job, void *context);

 private:
  // The run word: the run's number above kOpen, kOpen while helpers may join, and below it
  // the number of helper calls in progress.
  static constexpr std::uint64_t kOpen = std::uint64_t{1} << 31;
  static constexpr std::uint64_t kCallsMask = kOpen - 1;
  static constexpr unsigned kRunShift = 32;

  // Asks every started helper to stop and joins it.
  void stop_helpers() noexcept;
  void invite() noexcept;
  void helper_loop(unsigned worker);
  // True (with one helper call counted) when a run is open.
  bool try_join() noexcept;
  void leave() noexcept;

  std::vector<std::thread> threads_;
  std::mutex run_mutex_;
  // Written by run() while no helper call is in progress; read by helpers that joined.
  Job job_ = nullptr;
  void *context_ = nullptr;
  std::uint64_t runs_ = 0;  // guarded by run_mutex_
  std::atomic<std::uint64_t> run_word_{0};
  std::atomic<unsigned> joined_{0};              // helpers that joined the current run
  std::atomic<std::uint64_t> invitations_{0};    // helpers wait for this to advance
  std::atomic<bool> invitation_pending_{false};  // an invitation no helper has woken for yet
  std::atomic<unsigned> idle_;                   // helpers not in a job call
  std::atomic<bool> stopping_{false};
};

}  // namespace replayrt::sim
