// Engine: the runtime of one context. It owns the device, the DeviceContext (memory and
// latch), the kernels, the prepared callables and the device's executor, and carries out the
// program-mode run pipeline and kernel-mode launches.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <replayrt/replayrt.h>

#include "common/status.h"
#include "context/device_context.h"
#include "platform/device.h"
#include "platform/launch/kernel_registry.h"
#include "platform/launch/profile_records.h"
#include "runtime/bind.h"
#include "runtime/bound_run.h"
#include "runtime/callable.h"
#include "runtime/callable_table.h"

namespace replayrt {

// What a profiled launch left behind: its device-wall record and per-task timings.
struct LaunchProfile {
  LaunchRecord launch{};
  std::vector<TaskTiming> tasks;
};

class Engine;

// One program-mode run: prepared into a pipeline slot (and the arena bank of the same index),
// then launched, waited for and finalized. Created by Engine::run_prepare; every method of
// the engine that takes it requires the engine that created it.
class ProgramRun {
 public:
  enum class State { kPrepared, kLaunched, kCompleted, kFailed, kAbandoned };

  State state() const noexcept { return state_; }
  int slot() const noexcept { return slot_; }

 private:
  friend class Engine;

  int slot_ = -1;
  std::int32_t callable_id_ = -1;
  const BindStrategy *strategy_ = nullptr;
  std::shared_ptr<const Callable> callable_;
  std::shared_ptr<const PreparedExecutable> executable_;
  BoundRun bound_;
  // The allocations of the run's DEVICE tensors when it was prepared, checked at launch.
  std::vector<CapturedAddress> device_tensors_;
  State state_ = State::kPrepared;
  Stream *stream_ = nullptr;
  bool captured_ = false;
  std::uint64_t epoch_ = 0;
};

// Lifecycle: created (mode-less) → program_init | kernel_init → ready → finalize →
// finalized (a program context may be initialized again). kernel_init commits the capacity
// plan first and latches KERNEL only when the commit succeeded, so a failed kernel init
// leaves nothing allocated and the engine still created (it may be initialized again).
//
// Pipeline (program mode): run_prepare takes a free slot (kPipelineDepth of them; none free
// is RRT_ERR_INVALID_STATE) and binds the run there with the callable's bind strategy,
// growing that slot's blocks as needed. A successor may prepare while its predecessor
// executes.
//
// Kernel mode: prepare_callable places the callable in the frozen capacity once;
// kernel_launch binds into slot 0 inside a LaunchScope, so any growth or allocation is
// refused, and enqueues copies, the launch and copy-backs on the caller's stream.
//
// Ordering, both modes: launches, eager runs and replays (outside captures) are ordered by a
// context-wide tail event: work on one stream waits for the previous stream's last ordered
// work, so two of them never share gm_heap, gm_sm or staging at once. The wait carries
// completion only, never the other stream's failure. A program-mode prepare first waits for
// the last run or replay that used its slot, since its bind may upload into the slot.
//
// Thread safety: launches, replays, runs on distinct slots, callable preparation and kernel
// registration may come from several threads. Launches, run launches, replays and caller
// frees (free_caller_buffer) are admitted one at a time under the launch mutex, so a launch
// checks its addresses and enqueues with no free in between. init and finalize must not race
// with anything; a finalize that finds a call in progress returns RRT_ERR_INVALID_STATE and
// changes nothing, and a prepare, run prepare, run launch, launch or replay that starts while
// finalize runs is refused (RRT_ERR_INVALID_STATE) before it touches anything.
class Engine {
 public:
  static constexpr std::int32_t kMaxCallables = CallableTable::kCapacity;
  // Bytes of host-side image a callable may have (RRT_ERR_CALLABLE_BYTES_EXCEEDED beyond).
  static constexpr std::uint64_t kMaxCallableImageBytes = std::uint64_t{64} << 20;

  // A mode-less engine on `device`, whose executor the device creates; `device_workers` is
  // the simulator executor's workers per invocation (0 means 1).
  static Status create(std::unique_ptr<Device> device, unsigned device_workers,
                       std::unique_ptr<Engine> *out);
  ~Engine();
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;
  Engine(Engine &&) = delete;
  Engine &operator=(Engine &&) = delete;

  Status program_init();
  // `context_generation` 0 claims a process-unique one the runtime picks; any other value is
  // claimed as given (RRT_ERR_INVALID_ARGUMENT if already claimed). With profiling on,
  // `profile_tasks` (> 0) fixes the collector shape now; 0 leaves the first allocation to the
  // first prepared callable.
  Status kernel_init(const rrt_capacity_plan_t &plan, std::uint64_t context_generation,
                     std::uint32_t profile_tasks);
  // Waits for the engine's own streams, abandons prepared runs, drops every callable and
  // releases every context-owned buffer. The mode stays latched. RRT_ERR_INVALID_STATE, with
  // nothing changed, while another thread is inside a launch, replay, run or prepare.
  Status finalize();
  // OK when the engine accepts work; INVALID_STATE with a reason otherwise.
  Status check_ready() const;

  Device &device() noexcept { return *device_; }
  DeviceContext &context() noexcept { return context_; }
  const DeviceContext &context() const noexcept { return context_; }
  KernelRegistry &kernels() noexcept { return kernels_; }
  // Frees `buffer`, a caller allocation of the device, in order with every launch, run and
  // replay: none is admitted while the free waits for the work queued on `caller_streams` and
  // on the engine's own streams (reporting no failure) and then frees. Work admitted before the
  // free has completed when the memory goes; work admitted after it finds the buffer gone (a
  // launch or run is refused with RRT_ERR_INVALID_ARGUMENT, a replay as stale). The device's
  // free errors are returned as they are.
  Status free_caller_buffer(void *buffer, std::span<Stream *const> caller_streams);
  bool is_kernel() const noexcept { return context_.latch().is_kernel(); }

  Status prepare_callable(const rrt_callable_desc_t &desc, std::int32_t *out_id);

  Status run_prepare(std::int32_t callable_id, const RunArgsView &args,
                     std::unique_ptr<ProgramRun> *out);
  // `stream` null: the own stream of the run's slot. A run whose DEVICE tensor's allocation
  // was freed after prepare is refused (RRT_ERR_INVALID_ARGUMENT) and stays prepared.
  Status run_launch(ProgramRun &run, Stream *stream);
  Status run_wait(ProgramRun &run);
  // Waits if needed and releases the slot. The run may be destroyed afterwards.
  Status run_finalize(ProgramRun &run);

  Status kernel_launch(std::int32_t callable_id, const RunArgsView &args, Stream &caller);

  // Kernel mode with profiling: by default the launches one capture holds write their task
  // records one after another (a graph needs the sum of their tasks). After this call every
  // launch writes its records from the first one on, overwriting the capture's earlier
  // launches' (the ABI 1.1 rule), so a replay reports its graph's last launch and the collectors
  // need only the largest callable's tasks. Call before the first launch.
  void profile_each_launch_from_the_first_record() noexcept {
    each_launch_from_the_first_record_ = true;
  }

  // Profiling (RRT_ERR_INVALID_STATE when off): the profile of a completed program-mode run
  // (before it is finalized), or of the most recent kernel-mode launch or replay (a replay's
  // covers every kernel-mode launch its capture holds, in launch order; after
  // profile_each_launch_from_the_first_record, only its last one).
  Status run_profile(const ProgramRun &run, LaunchProfile *out) const;
  Status kernel_profile(LaunchProfile *out) const;

  // Replays `graph` (captured on a stream of this engine's device) on `stream`.
  // `profile_tasks`: the task records its capture's kernel-mode launches hold
  // (take_capture_profile_tasks when the capture ended).
  Status replay(const Graph &graph, Stream &stream, std::uint32_t profile_tasks = 0);

  // Stream lifecycle hooks, called before a stream starts capturing or is destroyed.
  void before_capture(Stream &stream);
  void before_stream_destroy(Stream &stream);
  // Called when a capture on `stream` ends (made a graph or not): the task records its
  // kernel-mode launches hold, which the capture's next launches no longer add to.
  std::uint32_t take_capture_profile_tasks(Stream &stream);

 private:
  enum class Lifecycle { kCreated, kReady, kFinalizing, kFinalized };

  // Counts a public call in progress for finalize's race check.
  class InFlight {
   public:
    explicit InFlight(const Engine &engine) noexcept;
    ~InFlight();
    InFlight(const InFlight &) = delete;
    InFlight &operator=(const InFlight &) = delete;
    InFlight(InFlight &&) = delete;
    InFlight &operator=(InFlight &&) = delete;

   private:
    const Engine &engine_;
  };

  explicit Engine(std::unique_ptr<Device> device);

  using CallableRecord = CallableTable::Record;

  // The record of a prepared callable; CALLABLE_NOT_RESIDENT otherwise.
  Status find_callable(std::int32_t id, const CallableRecord **out) const;
  static BindRequest bind_request(std::int32_t id, const CallableRecord &record,
                                  const RunArgsView &args);
  Status enqueue_bound(const PreparedExecutable &executable, const BoundRun &bound, Stream &stream);
  // Requires launch_mutex_. Orders `stream` after the previous serialized stream's work.
  Status serialize_before(Stream &stream);

  std::unique_ptr<Device> device_;
  DeviceContext context_;
  KernelRegistry kernels_;
  std::unique_ptr<Executor> executor_;
  // Runs launched without a stream go to their slot's own stream, so a failed run never
  // skips the next run of the other slot.
  std::array<std::unique_ptr<Stream>, DeviceContext::kPipelineDepth> own_streams_;
  std::array<std::unique_ptr<Event>, DeviceContext::kPipelineDepth> slot_done_;
  // Recorded after every eager run of the slot and every program-mode replay.
  std::array<std::unique_ptr<Event>, DeviceContext::kPipelineDepth> slot_used_;
  std::unique_ptr<Event> serial_tail_;

  std::atomic<Lifecycle> lifecycle_{Lifecycle::kCreated};
  std::atomic<std::uint64_t> epoch_{0};
  mutable std::atomic<std::uint64_t> in_flight_{0};

  CallableTable callables_;

  mutable std::mutex launch_mutex_;
  Stream *last_serialized_stream_ = nullptr;
  BoundRun launch_scratch_;
  // Kernel mode with profiling, under launch_mutex_: per capturing stream, the task records
  // its captured launches hold (the next one's profile_offset; with
  // each_launch_from_the_first_record_, the last launch's tasks); and how many records the
  // most recent launch or replay writes.
  std::map<const Stream *, std::uint32_t> capture_profile_tasks_;
  std::uint32_t last_profile_tasks_ = 0;
  bool each_launch_from_the_first_record_ = false;
};

}  // namespace replayrt
