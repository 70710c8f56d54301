// ProgramPipeline: the program-mode run pipeline of one context: runs prepared into pipeline
// slots, launched in order with the context's other work, waited for and finalized.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "context/device_context.h"
#include "platform/device.h"
#include "runtime/bind.h"
#include "runtime/bound_run.h"
#include "runtime/callable_table.h"
#include "runtime/launch_order.h"
#include "runtime/launch_profile.h"

namespace replayrt {

// One program-mode run: prepared into a pipeline slot (and the arena bank of the same index),
// then launched, waited for and finalized. Created by ProgramPipeline::prepare; every method
// of the pipeline that takes it requires the pipeline that created it.
class ProgramRun {
 public:
  enum class State { kPrepared, kLaunched, kCompleted, kFailed, kAbandoned };

  State state() const noexcept { return state_; }
  int slot() const noexcept { return slot_; }
  // The lifecycle session (LifecycleGate) the run was prepared in.
  std::uint64_t session() const noexcept { return session_; }

 private:
  friend class ProgramPipeline;

  int slot_ = -1;
  const BindStrategy *strategy_ = nullptr;
  std::shared_ptr<const Callable> callable_;
  std::shared_ptr<const PreparedExecutable> executable_;
  BoundRun bound_;
  // The allocations of the run's DEVICE tensors when it was prepared, checked at launch.
  std::vector<CapturedAddress> device_tensors_;
  State state_ = State::kPrepared;
  Stream *stream_ = nullptr;
  bool captured_ = false;
  std::uint64_t session_ = 0;
};

// prepare takes a free slot (kPipelineDepth of them; none free is RRT_ERR_INVALID_STATE),
// first waits for the last run or replay that used the slot (the bind may upload into it),
// and binds the run there with the callable's bind strategy, growing that slot's blocks as
// needed. A successor may prepare while its predecessor executes.
//
// The engine calls every method but wait() with a lifecycle ticket held, passing its session:
// a run from an earlier session (its context was finalized since) is abandoned, its slot
// already released.
//
// Thread safety: runs on distinct slots may be prepared, launched and finalized from several
// threads; one run is used by one thread at a time. launch() takes the launch order's lock,
// and prepare() holds it while it waits for its slot's last use (again) and binds, so a replay
// is admitted wholly before the bind may move the slot's blocks (and waited for) or after it
// (and finds the old addresses stale).
class ProgramPipeline {
 public:
  // Creates the slots' own streams and events on `device`. Every reference must outlive the
  // pipeline.
  static Status create(Device &device, DeviceContext &context, Executor &executor,
                       LaunchOrder &order, std::unique_ptr<ProgramPipeline> *out);
  ~ProgramPipeline();
  ProgramPipeline(const ProgramPipeline &) = delete;
  ProgramPipeline &operator=(const ProgramPipeline &) = delete;
  ProgramPipeline(ProgramPipeline &&) = delete;
  ProgramPipeline &operator=(ProgramPipeline &&) = delete;

  Status prepare(std::int32_t callable_id, const CallableTable::Record &record,
                 const RunArgsView &args, std::uint64_t session, std::unique_ptr<ProgramRun> *out);
  // `stream` null: the own stream of the run's slot. A run whose DEVICE tensor's allocation
  // was freed after prepare is refused (RRT_ERR_INVALID_ARGUMENT) and stays prepared. An
  // enqueue that fails leaves the run failed, with what was enqueued before it still queued;
  // the slot's next prepare waits for that work as for a launched run's.
  Status launch(ProgramRun &run, Stream *stream, std::uint64_t session);
  // Waits for a launched run; needs no ticket (the slot's events outlive finalize), only the
  // gate's current session. RRT_ERR_INVALID_STATE for a run of an earlier session: its
  // context's finalize waited for it, and the slot's events now mark later runs.
  Status wait(ProgramRun &run, std::uint64_t session);
  // Waits if needed and releases the slot, unless `run` is from an earlier session than
  // `session` (0: the context is finalized), whose finalize released it. The run may be
  // destroyed afterwards.
  Status finalize(ProgramRun &run, std::uint64_t session);
  // The profile of a completed run (before it is finalized).
  Status profile(const ProgramRun &run, std::uint64_t session, LaunchProfile *out) const;

  // Requires the launch order's lock. A program-mode replay on `stream` may use either
  // slot's blocks: the next prepare of each slot waits for it. Runs after the replay reached
  // the stream, so it cannot fail: where a slot's mark cannot be recorded, it waits until the
  // stream is idle instead (record_or_wait_idle).
  void record_replay(Stream &stream) noexcept;
  // Synchronizes every own stream; the first failure pending on one of them.
  Status synchronize_own_streams();
  // Waits until every own stream is idle (reporting no failure).
  Status wait_own_streams_idle();

 private:
  ProgramPipeline(Device &device, DeviceContext &context, Executor &executor,
                  LaunchOrder &order) noexcept
      : device_(device), context_(context), executor_(executor), order_(order) {}

  // Waits, without `lock` (the admission lock, not held on entry), until the last use of
  // `slot` (and, when the bind would rebuild the profiling collectors, of every slot) has
  // completed, then returns OK holding `lock` with that still true: a replay admitted during
  // the wait, which records its use under the lock, is waited for in another round. A rebuild
  // while the other slot holds a run is refused (RRT_ERR_PREPARED_INCOMPATIBLE) without
  // waiting. No wait ever holds the lock.
  Status wait_until_unused(int slot, std::uint32_t tasks, std::unique_lock<std::mutex> &lock);
  // The run's enqueues on `target`: ordering, the bound run, and (outside a capture) the
  // slot's done and use events. Requires the launch order's lock. May throw (host memory).
  Status enqueue_run(ProgramRun &run, Stream &target);
  // After enqueue_run failed or threw part-way: the run is failed. Inside a capture,
  // enqueue_bound has spoiled the capture. Outside one, the slot's next prepare is made to wait
  // for whatever was enqueued, by recording the slot's use or, if that fails too, by waiting
  // until `target` is idle. When `target` is the slot's own stream, which only runs reach, it is
  // synchronized too: a backend whose failed enqueue is sticky (CUDA) would otherwise skip the
  // slot's next run and report this run's failure, which the launch already returned, as that
  // run's.
  void settle_failed_launch(ProgramRun &run, Stream &target);

  Device &device_;
  DeviceContext &context_;
  Executor &executor_;
  LaunchOrder &order_;
  // Runs launched without a stream go to their slot's own stream, so a failed run never
  // skips the next run of the other slot.
  std::array<std::unique_ptr<Stream>, DeviceContext::kPipelineDepth> own_streams_;
  std::array<std::unique_ptr<Event>, DeviceContext::kPipelineDepth> slot_done_;
  // Recorded after every eager run of the slot and every program-mode replay.
  std::array<std::unique_ptr<Event>, DeviceContext::kPipelineDepth> slot_used_;
};

}  // namespace replayrt
