// SimStream: the simulator backend of the Stream interface.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "platform/device.h"
#include "platform/sim/sim_graph.h"
#include "platform/sim/sim_memory.h"
#include "platform/sim/spin_mutex.h"
#include "platform/sticky_failure.h"

namespace replayrt::sim {

// When the executor of a stream takes queued work (the idle policy in SimStream's comment).
struct ExecutorIdlePolicy {
  // How long the executor leaves work it sees untaken, for a host thread about to synchronize.
  std::chrono::nanoseconds host_take_grace = std::chrono::microseconds(2);
  // How often the executor of a host-driven stream looks for work no host thread took.
  std::chrono::nanoseconds host_driven_poll = std::chrono::microseconds(100);
  // Polls in a row that find nothing queued before a host-driven executor parks untimed.
  std::uint32_t host_driven_idle_polls = 100;
  // Batches in a row that the executor takes (no host thread took one in between) before a
  // host-driven stream is no longer host-driven.
  std::uint32_t host_driven_executor_batches = 16;
};

// A stream of the simulator: Stream's contract (platform/device.h), executed by one executor
// thread per stream that plays the device.
//
// Execution: enqueue calls append to a queue under the stream's mutex (a SpinMutex). One runner
// at a time takes the whole queue at once and runs it in order: the executor, or a host thread
// in synchronize() that finds queued work nobody has taken (it runs that work itself instead of
// waiting for the executor, as a caller of a task runtime's wait does; the host still observes
// completion only through the stream, and work is never reordered). wait_idle() and the
// destructor take untaken work the same way. The executor leaves work it sees for the
// policy's host_take_grace before it takes it, so a host that synchronizes right after it
// enqueues runs the work on its own thread without a hand-off; it does so only while the
// stream is host-driven (below) and the untaken work records no event (a record queued during
// the grace ends it).
//
// The executor's idle policy: after a batch, or after a host thread took the work it was
// waiting for, it spins for new work for up to kDefaultSpinBudget, then parks. Once a host
// thread has taken a batch, the stream is host-driven: the executor parks in a timed wait,
// waking every host_driven_poll to take work no host thread took, and an enqueue other than an
// event record does not wake it (no system call on the enqueue path). An event record wakes
// it, since host and device waits on events go through no stream call that could take the
// work; so does query(), and so does a host thread that ends a batch with an event record
// queued behind it (a record queued while a host thread runs a batch leaves the wake to that
// thread). Work enqueued on a host-driven stream that nothing waits for through the stream or
// an event therefore starts within host_driven_poll. The executor's taking
// host_driven_executor_batches batches in a row, or host_driven_idle_polls polls in a row with
// nothing queued, end host-driven mode; the executor then parks untimed, costs nothing while
// idle, and the next enqueue wakes it.
// Batches run in order:
// copies and memsets through SimMemory (outside capture, enqueue does not check device ranges;
// a range that is not live when the copy runs is the copy's failure, with SimMemory's
// RRT_ERR_INVALID_ARGUMENT), launches by calling the entry on the executor thread with the
// invocation bytes copied at enqueue, on the runner's thread. synchronize() and wait_idle()
// (after running what they could take) wait as the stream's HostWaitPolicy says (by default:
// spin for up to kHostWaitSpinBudget, then block); the destructor spins briefly, then blocks.
// Device work (a launch's kernels) may therefore run on a thread that called synchronize(),
// wait_idle() or the destructor: it must not wait for that thread to do anything else.
// query() compares the operations queued with those executed, without waiting.
//
// Failures: the first failing copy, memset or launch becomes the stream's sticky failure
// (a StickyFailure). While it is pending, copies, memsets and launches are skipped; event
// records still complete and carry it; event waits still wait, and never take another
// stream's failure over. It is reported once, by synchronize() or by a host synchronize of an
// event whose record carried it, and reporting clears it. An exception out of the executor's
// work (a launch entry or a kernel that throws, or host memory running out) is caught on the
// executor: it becomes the sticky failure RRT_ERR_KERNEL_FAILED ("device work on the stream
// threw an exception"), and an event record it interrupted completes without a failure.
//
// Events: record_event takes the event's next record number at enqueue; wait_event binds at
// enqueue to the event's latest record number. Both accept only SimEvents
// (RRT_ERR_INVALID_ARGUMENT otherwise).
//
// Capture: while capturing, a copy or memset resolves each device range (which must lie inside
// one live allocation) and a launch resolves each referenced address (which must lie inside a
// live allocation) into a CapturedAddress; an enqueue that fails this returns
// RRT_ERR_INVALID_ARGUMENT naming the address and records nothing. Host pointers are recorded
// as given. end_capture(nullptr) returns RRT_ERR_INVALID_ARGUMENT and keeps capturing. An
// enqueue refused during the capture, or fail_enqueue(), makes end_capture return
// RRT_ERR_INVALID_STATE naming the first refusal and discard what was recorded. Outside a
// capture, fail_enqueue() stores the sticky failure at once (work queued before it that has
// not executed yet is skipped too).
//
// Replay: accepts only a SimGraph captured on a stream of the same SimDevice
// (RRT_ERR_INVALID_ARGUMENT otherwise), checks its addresses (SimGraph::check_addresses), then
// appends copies of its operations to the queue under one acquisition of the stream's mutex.
// Event records and waits in the graph take or bind their record numbers then, in graph order.
//
// Lifetime: created by SimDevice::create_stream; the device must outlive the stream.
// Destruction waits for queued work (ignoring any failure), abandons a capture in progress and
// joins the executor. No call may run concurrently with the destructor.
// Thread safety: every member is thread-safe.
class SimStream final : public Stream {
 public:
  // Starts the executor thread; throws std::system_error when the thread cannot be started.
  // Host waits (synchronize, wait_idle) wait as `host_wait` says; the executor takes work as
  // `idle` says.
  explicit SimStream(SimMemory &memory, HostWaitPolicy host_wait = {},
                     ExecutorIdlePolicy idle = {});
  ~SimStream() override;

  Status enqueue_copy_host_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status enqueue_copy_device_to_host(void *dst, const void *src, std::size_t bytes) override;
  Status enqueue_copy_device_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status enqueue_memset(void *dst, int value, std::size_t bytes) override;
  Status enqueue_launch(const LaunchRequest &request) override;

  Status record_event(Event &event) override;
  Status wait_event(Event &event) override;

  Status synchronize() override;
  Status wait_idle() override;
  bool query() const override;

  Status begin_capture() override;
  Status end_capture(std::unique_ptr<Graph> *out) override;
  bool is_capturing() const override;
  void fail_enqueue(const Status &why) override;

  Status replay(const Graph &graph) override;

 private:
  struct DeviceRange {
    const void *address = nullptr;
    std::size_t bytes = 0;
    const char *role = "";  // names the range in error messages
  };

  // Queues `operation` or, while capturing, records it after resolving `ranges` (each must lie
  // inside one live allocation) and `referenced` (each must lie inside a live allocation).
  Status submit(SimOperation operation, std::span<const DeviceRange> ranges,
                std::span<const void *const> referenced);
  Status submit_event_operation(Event &event, SimOperation::Kind kind);
  // Requires mutex_. Keeps the first refusal of the capture in progress.
  void fail_capture_locked(const Status &why);
  // Requires mutex_. Appends a CapturedAddress for each range and referenced address to
  // capture_addresses_; on failure appends nothing.
  Status resolve_locked(std::span<const DeviceRange> ranges,
                        std::span<const void *const> referenced);
  // Gives a queued event record its record number, or binds a queued wait. Called with mutex_
  // held, so record numbers follow queue order.
  static void bind_event_locked(SimOperation &operation);
  // Requires mutex_. Counts `count` newly queued operations; true when the executor must be
  // woken (after unlocking): no batch is running (its runner hands the work on when it ends),
  // and the executor parks untimed, or parks timed and `records_event`.
  bool publish_locked(std::size_t count, bool records_event);
  // Requires mutex_. Prefetches for write the queue slot the next enqueue fills, when the queue
  // has room for it: the queue's storage alternates with the executor's batch, so the executor
  // read those cache lines last, and an enqueue that writes them stalls on fetching each one
  // unless the fetch started at the previous enqueue.
  void prefetch_next_slot_locked() const noexcept;
  // Requires mutex_. True when the executor is parked and must be woken for queued work: it
  // parks untimed, or it parks timed and the queued work records an event (which nothing but
  // the executor takes; see the class comment).
  bool must_wake_executor_locked(bool queue_records_event) const;

  // Requires mutex_. Moves the queue into batch_ and makes the caller the runner, unless
  // another thread is the runner or the queue is empty (then false).
  bool take_batch_locked();
  // Requires mutex_. The runner gives up its role.
  void end_batch_locked();
  // The runner's work: runs batch_ in order, counting each operation as completed, and empties
  // it. The caller then gives up the runner role (under mutex_).
  void run_batch();
  // A host thread's part of synchronize(): runs queued work nobody has taken until the
  // operations up to `target` completed or another thread is the runner.
  void run_untaken_work(std::uint64_t target);

  void run_executor();
  // The executor's spin for work: true when it saw untaken work that it may take (at once, or
  // when no host thread took it within the policy's host_take_grace, or when an event record
  // joined it during the grace); false after kDefaultSpinBudget without any.
  bool wait_for_untaken_work();
  // Requires mutex_ (held by `lock`). Parks the executor until there is queued work and no
  // runner, or the stream is stopping (the idle policy in the class comment).
  void park_locked(std::unique_lock<SpinMutex> &lock);
  // Runs execute(); an exception becomes the sticky failure (see the class comment).
  void execute_contained(SimOperation &operation) noexcept;
  void execute(SimOperation &operation);
  Status execute_device_work(const SimOperation &operation);

  SimMemory &memory_;
  const HostWaitPolicy host_wait_;
  const ExecutorIdlePolicy idle_;

  mutable SpinMutex mutex_;
  mutable std::condition_variable_any wake_;
  // How the executor waits in park_locked (publish_locked says when an enqueue wakes it).
  enum class ExecutorWait : std::uint8_t { kRunning, kTimed, kUntimed };

  std::vector<SimOperation> queue_;                      // guarded by mutex_
  ExecutorWait executor_wait_ = ExecutorWait::kRunning;  // guarded by mutex_
  // Written with mutex_ held; the executor's spin reads them alone. host_driven_: the mode in
  // the class comment; untaken_record_: the queue holds an event record.
  std::atomic<bool> host_driven_{false};
  std::atomic<bool> untaken_record_{false};
  std::uint32_t executor_batches_in_a_row_ = 0;  // guarded by mutex_
  bool stopping_ = false;                        // guarded by mutex_
  std::atomic<bool> capturing_{false};  // written under mutex_; is_capturing() reads it alone
  std::vector<SimOperation> capture_operations_;    // guarded by mutex_
  std::vector<CapturedAddress> capture_addresses_;  // guarded by mutex_
  Status capture_failure_;                          // guarded by mutex_; the first refusal

  // Operations ever queued (written with mutex_ held) and ever executed or skipped (written by
  // the executor).
  std::atomic<std::uint64_t> enqueued_{0};
  std::atomic<std::uint64_t> completed_{0};

  // The sticky failure, shared with the event records that carry it.
  std::shared_ptr<StickyFailure> failure_ = std::make_shared<StickyFailure>();

  // A thread is the runner (it owns batch_). Written with mutex_ held; the executor's spin
  // reads it alone.
  std::atomic<bool> running_{false};
  // Operations ever moved into a batch (written with mutex_ held); the executor spins on it.
  std::atomic<std::uint64_t> taken_{0};
  // The runner's batch, swapped with queue_ under mutex_.
  std::vector<SimOperation> batch_;
  std::thread executor_;
};

}  // namespace replayrt::sim
