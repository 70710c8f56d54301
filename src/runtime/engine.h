// Engine: the runtime of one context. It owns the device, the DeviceContext (memory and
// latch), the kernels, the prepared callables, the device's executor, the program pipeline and
// the kernel launcher, and carries the context's lifecycle: every public call goes through its
// lifecycle gate.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include <replayrt/values.h>

#include "common/function_ref.h"
#include "common/status.h"
#include "context/device_context.h"
#include "platform/device.h"
#include "platform/launch/kernel_registry.h"
#include "runtime/callable_spec.h"
#include "runtime/callable_table.h"
#include "runtime/generation_registry.h"
#include "runtime/kernel_launcher.h"
#include "runtime/launch_order.h"
#include "runtime/launch_profile.h"
#include "runtime/lifecycle_gate.h"
#include "runtime/program_pipeline.h"

namespace replayrt {

// Lifecycle: created (mode-less) → program_init | kernel_init → ready → finalize →
// finalized (a program context may be initialized again). kernel_init commits the capacity
// plan first and latches KERNEL only when the commit succeeded, so a failed kernel init
// leaves nothing allocated and the engine still created (it may be initialized again).
//
// Every public call that reads or changes what finalize releases holds a ticket of the
// lifecycle gate: it is refused (RRT_ERR_INVALID_STATE, having done nothing) unless the engine
// is ready. finalize closes the gate, waits for the calls it admitted before (including one
// waiting for device work, such as a prepare waiting for its slot's last replay), then drains
// the streams and releases. So no launch, run or replay lands on memory finalize releases.
//
// Program mode: runs go through the ProgramPipeline. Kernel mode: prepare_callable places
// the callable in the frozen capacity once; launches go through the KernelLauncher.
//
// Ordering, both modes: launches, eager runs and replays (outside captures) are ordered by
// the LaunchOrder, whose lock also orders them with free_caller_buffer.
//
// Thread safety: launches, replays, runs on distinct slots, callable preparation and kernel
// registration may come from several threads, and finalize may race with them as above. init
// must not race with anything.
class Engine {
 public:
  static constexpr std::int32_t kMaxCallables = CallableTable::kCapacity;
  // Bytes of host-side image a callable may have (RRT_ERR_CALLABLE_BYTES_EXCEEDED beyond).
  static constexpr std::uint64_t kMaxCallableImageBytes = std::uint64_t{64} << 20;

  // A mode-less engine on `device`, whose executor the device creates; `device_workers` is
  // the simulator executor's workers per invocation (0 means 1). Kernel init claims its
  // context generation from `generations`, which must outlive the engine.
  static Status create(std::unique_ptr<Device> device, unsigned device_workers,
                       GenerationRegistry &generations, std::unique_ptr<Engine> *out);
  ~Engine();
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;
  Engine(Engine &&) = delete;
  Engine &operator=(Engine &&) = delete;

  Status program_init();
  // `context_generation` 0 claims one the registry picks; any other value is claimed as given
  // (RRT_ERR_INVALID_ARGUMENT if already claimed). With profiling on, `profile_tasks` (> 0)
  // fixes the collector shape now; 0 leaves the first allocation to the first prepared
  // callable.
  Status kernel_init(const CapacityPlan &plan, std::uint64_t context_generation,
                     std::uint32_t profile_tasks);
  // Closes the lifecycle gate and waits for every call it admitted, then waits for the work
  // queued on `caller_streams` (a capturing stream: the work queued before its capture began)
  // and on the engine's own streams, abandons prepared runs, drops every callable and releases
  // every context-owned buffer. The mode stays latched. Returns the first failure still
  // pending on one of those streams (they are synchronized, which clears it); the engine is
  // finalized all the same. The caller must not hold a ticket (call from a public entry).
  Status finalize(std::span<Stream *const> caller_streams);
  // True while the engine accepts work (initialized and not finalized).
  bool is_ready() const noexcept { return gate_.is_open(); }

  // Device services, in any state of the engine (they need no ticket). The caller owns the
  // streams and events it creates and destroys them (streams after before_stream_destroy)
  // before the engine.
  DeviceProperties device_properties() const { return device_->properties(); }
  Status create_stream(std::unique_ptr<Stream> *out) { return device_->create_stream(out); }
  // Device::wrap_native_stream.
  Status wrap_native_stream(void *native_stream, std::unique_ptr<Stream> *out) {
    return device_->wrap_native_stream(native_stream, out);
  }
  Status create_event(std::unique_ptr<Event> *out) { return device_->create_event(out); }
  // Device::register_foreign.
  Status register_foreign(void *ptr, std::size_t bytes) {
    return device_->register_foreign(ptr, bytes);
  }
  // Device::unregister_foreign, in order with every launch, run and replay as
  // free_caller_buffer frees: work admitted before it has completed when the memory goes back
  // to its owner, and work admitted after it finds the memory unregistered. Needs no ticket.
  Status unregister_foreign(void *ptr, std::span<Stream *const> caller_streams);
  // True when [ptr, ptr + bytes) lies inside one live allocation of the device (always, for
  // an empty range).
  bool holds_device_range(const void *ptr, std::size_t bytes) const;
  // Synchronous copies between host memory and a live device range.
  Status copy_host_to_device(void *dst, const void *src, std::size_t bytes) {
    return device_->copy_host_to_device(dst, src, bytes);
  }
  Status copy_device_to_host(void *dst, const void *src, std::size_t bytes) {
    return device_->copy_device_to_host(dst, src, bytes);
  }

  // A caller allocation of `bytes` (> 0) of the device's memory, outside every growth point.
  // Free it with free_caller_buffer, or with release_caller_buffer once no work can use it.
  Status allocate_caller_buffer(std::size_t bytes, void **out) {
    return device_->try_allocate(bytes, out);
  }
  // Frees a caller allocation that no queued or admitted work can reach any more (the engine
  // is finalized and the caller's streams are gone), without ordering; a free the device
  // refuses is not reported.
  void release_caller_buffer(void *buffer) { (void)device_->free(buffer); }

  // Turns profiling on; before any init.
  void enable_profiling() noexcept { context_.enable_profiling(); }
  // The context's counters and regions (DeviceContext::statistics).
  ContextStatistics statistics() const { return context_.statistics(); }
  // True once an init latched the mode (it stays latched after finalize).
  bool is_latched() const noexcept { return context_.latch().is_latched(); }

  // The device's own memory counters (Device::memory_counters): every allocation of the
  // device, the context's and the caller's alike.
  MemoryCounters device_memory_counters() const { return device_->memory_counters(); }

  KernelRegistry &kernels() noexcept { return kernels_; }
  // Frees `buffer`, a caller allocation of the device, in order with every launch, run and
  // replay: none is admitted while the free waits for the work queued on `caller_streams` and
  // on the engine's own streams (reporting no failure) and then frees. Work admitted before the
  // free has completed when the memory goes; work admitted after it finds the buffer gone (a
  // launch or run is refused with RRT_ERR_INVALID_ARGUMENT, a replay as stale). The device's
  // free errors are returned as they are. Needs no ticket: a finalized engine frees too.
  Status free_caller_buffer(void *buffer, std::span<Stream *const> caller_streams);
  bool is_kernel() const noexcept { return context_.latch().is_kernel(); }

  Status prepare_callable(const CallableSpec &spec, std::int32_t *out_id);

  Status run_prepare(std::int32_t callable_id, const RunArgsView &args,
                     std::unique_ptr<ProgramRun> *out);
  // ProgramPipeline::launch.
  Status run_launch(ProgramRun &run, Stream *stream);
  // ProgramPipeline::wait in the gate's current session (none while the context is finalized).
  Status run_wait(ProgramRun &run);
  // Waits if needed and releases the slot (unless finalize released it). The run may be
  // destroyed afterwards.
  Status run_finalize(ProgramRun &run);

  Status kernel_launch(std::int32_t callable_id, const RunArgsView &args, Stream &caller);

  // KernelLauncher::profile_each_launch_from_the_first_record. Call before the first launch.
  void profile_each_launch_from_the_first_record() noexcept {
    launcher_->profile_each_launch_from_the_first_record();
  }

  // Profiling (RRT_ERR_INVALID_STATE when off): the profile of a completed program-mode run
  // (before it is finalized), or of the most recent kernel-mode launch or replay
  // (KernelLauncher::profile).
  Status run_profile(const ProgramRun &run, LaunchProfile *out);
  Status kernel_profile(LaunchProfile *out);

  // Replays `graph` (captured on a stream of this engine's device) on `stream`.
  // `profile_tasks`: the task records its capture's kernel-mode launches hold
  // (end_capture's *profile_tasks).
  Status replay(const Graph &graph, Stream &stream, std::uint32_t profile_tasks = 0);

  // Begins a capture on `stream`: refused (changing nothing) unless the engine is ready, or
  // when the stream's ordered work cannot be ended (LaunchOrder::forget). Otherwise its ordered
  // work ends, `prepare` (if any) runs, and the stream begins capturing, all under the
  // admission lock, so no launch on another thread is ordered on the stream in between (its
  // record of the next stream's wait would land in the capture). The captured launches
  // profile from the first record. A failed Stream::begin_capture is returned; the stream's
  // ordered work has ended all the same. `prepare` must not call the engine.
  Status begin_capture(Stream &stream, FunctionRef<void()> prepare = nullptr);
  // Called before `stream` is destroyed, in any state of the engine.
  void before_stream_destroy(Stream &stream);
  // Ends the capture on `stream` (Stream::end_capture) under the admission lock, so a launch,
  // run launch or replay that found the stream capturing under that lock lands wholly in the
  // capture, never partly or wholly outside it, unordered. Once the capture is over (a graph
  // made or not), *profile_tasks is the task records its kernel-mode launches hold, which the
  // stream's next capture no longer adds to; while it goes on (the simulator after a host
  // allocation failure) *profile_tasks is unchanged. Needs no lifecycle ticket: a capture may
  // end after a finalize.
  Status end_capture(Stream &stream, std::unique_ptr<Graph> *out, std::uint32_t *profile_tasks);

 private:
  // Tests reach the device and the context through it (tests/support/engine_inspector.h);
  // every other caller, the C ABI included, uses the calls above.
  friend class EngineInspector;

  Engine(std::unique_ptr<Device> device, GenerationRegistry &generations,
         std::unique_ptr<Event> order_tail);

  using CallableRecord = CallableTable::Record;

  // Waits for the work queued on `caller_streams` and on the engine's own streams, reporting
  // no failure. The caller holds the admission lock.
  Status wait_for_queued_work(std::span<Stream *const> caller_streams);
  // The record of a prepared callable; CALLABLE_NOT_RESIDENT otherwise.
  Status find_callable(std::int32_t id, const CallableRecord **out) const;
  // Places a prepared callable's executable (and, in kernel mode, its resident image) into
  // `record` under `id`.
  Status fill_record(const std::shared_ptr<const Callable> &callable, std::int32_t id,
                     CallableRecord *record);

  std::unique_ptr<Device> device_;
  GenerationRegistry &generations_;
  DeviceContext context_;
  KernelRegistry kernels_;
  std::unique_ptr<Executor> executor_;
  LifecycleGate gate_;
  CallableTable callables_;
  LaunchOrder order_;
  std::unique_ptr<ProgramPipeline> pipeline_;
  std::unique_ptr<KernelLauncher> launcher_;
};

}  // namespace replayrt
