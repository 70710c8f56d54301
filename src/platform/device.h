// The platform's Device interface: the narrow contract every backend implements.
//
// Backends: sim (platform/sim, always built) and cuda (optional). Exactly one factory
// (platform/device_factory.h) chooses a backend; nothing above the platform layer names one.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "common/status.h"

namespace replayrt {

// The allocation a device address belongs to. A generation is unique for the life of the
// backend and never reused, so (base, generation) tells the same allocation from a new one
// that happens to get the same base.
struct AllocationInfo {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  std::uint64_t generation = 0;
};

// A device byte range [address, address + bytes).
struct AddressRange {
  const void *address = nullptr;
  std::size_t bytes = 0;
};

struct MemoryCounters {
  std::uint64_t allocation_calls = 0;  // successful allocations
  std::uint64_t free_calls = 0;        // successful frees
  std::uint64_t live_bytes = 0;
  std::uint64_t peak_live_bytes = 0;
};

// A device entry point: a host function that a backend able to run one (the simulator, whose
// executor is such an entry) launches like any device function. It runs on the device (sim: a
// stream's executor thread) with the invocation bytes the launch enqueued, and returns OK or
// the failure that becomes sticky on the stream.
using DeviceEntry = Status (*)(void *entry_context, const std::byte *invocation,
                               std::size_t invocation_bytes);

struct LaunchRequest {
  DeviceEntry entry = nullptr;
  void *entry_context = nullptr;
  // Copied at enqueue (and into the graph at capture); the caller's buffer may be reused at
  // once.
  std::span<const std::byte> invocation;
  // Every device address the launched work may dereference. A capture records each one with
  // the allocation it belongs to, for the replay's stale-address check.
  std::span<const void *const> referenced;
};

// Native work: a host function that enqueues a backend's own device work (CUDA kernels, library
// calls) on the stream's native handle. `enqueue` runs on the calling thread, inside
// Stream::enqueue_native, so the work it enqueues lands in the stream's capture when the
// stream is capturing. It returns 0, or a code that makes the call fail with
// RRT_ERR_KERNEL_FAILED.
struct NativeWork {
  int (*enqueue)(void *native_stream, void *context) = nullptr;
  void *context = nullptr;
  // Every device address the enqueued work may dereference, as in LaunchRequest.
  std::span<const void *const> referenced;
};

// What a backend guarantees about its memory and how it runs kernels.
struct DeviceProperties {
  // Every allocation base is a multiple of it (a power of two).
  std::size_t base_alignment = 0;
  // True when host code may read and write device addresses directly (the simulator, whose
  // device memory is host memory). Otherwise device memory is reached only through the
  // Device's copies and memset.
  bool host_can_dereference = false;
  // True when the device runs DeviceEntry launches and host-function kernels
  // (KernelEntry::host_fn); false when kernels run only as native work
  // (KernelEntry::native_launch, Stream::enqueue_native).
  bool runs_host_kernels = false;
  // The backend's name ("sim", "cuda"), for messages.
  const char *name = "";
};

class KernelRegistry;    // platform/launch/kernel_registry.h
struct BuiltinLauncher;  // platform/launch/kernel_registry.h

// How a host thread waits for device work of a device (a stream or event synchronize, a
// stream's wait_idle, an event wait): rrt_wait_policy_t of the context. kSpinThenBlock spins
// for spin_budget and then parks the thread; kSpin never parks; kYield yields the processor
// between checks and never parks; kBlock parks at once.
struct HostWaitPolicy {
  enum class Kind { kSpinThenBlock, kSpin, kYield, kBlock };
  Kind kind = Kind::kSpinThenBlock;
  std::chrono::nanoseconds spin_budget = std::chrono::microseconds(250);
};

// How an Executor runs the kernels of a bound launch.
struct ExecutorConfig {
  // The kernels that task-graph images name by id. Must outlive the executor.
  const KernelRegistry *kernels = nullptr;
  // Simulator: device worker threads per invocation (0 means 1). Backends whose device has no
  // host-side worker team ignore it.
  unsigned sim_workers = 1;
};

// A device address a graph captured, with the allocation it belonged to at capture.
struct CapturedAddress {
  std::uintptr_t address = 0;
  std::uintptr_t base = 0;
  std::uint64_t generation = 0;
};

class Event;
class Executor;
class Graph;
class Stream;

// Device memory and execution. Shared preconditions: a device range [ptr, ptr + bytes) must
// lie inside one live allocation, else the call returns RRT_ERR_INVALID_ARGUMENT and does
// nothing. Copies and memset here are synchronous. Every member is thread-safe.
class Device {
 public:
  Device() = default;
  virtual ~Device() = default;
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  Device(Device &&) = delete;
  Device &operator=(Device &&) = delete;

  virtual DeviceProperties properties() const = 0;
  // The backend's launchers of the built-in kernels, in builtin_kernel_specs() order
  // (platform/launch/builtin_kernels.h); valid for the device's life. A KernelRegistry built
  // from them runs the built-ins on this device.
  virtual std::span<const BuiltinLauncher> builtin_launchers() const = 0;

  // An allocation of at least `bytes` (> 0) bytes aligned to properties().base_alignment, or
  // null when the device cannot provide it. A fault-injecting wrapper may also throw.
  virtual void *allocate(std::size_t bytes) = 0;
  // allocate(), saying why it failed: RRT_ERR_OUT_OF_MEMORY when memory ran out, or the
  // backend's status for another cause (CUDA: a device fault reported by cudaMalloc is
  // RRT_ERR_KERNEL_FAILED naming it). *out is null on failure. Default: allocate(), any failure
  // RRT_ERR_OUT_OF_MEMORY.
  virtual Status try_allocate(std::size_t bytes, void **out);
  // Frees an allocation base. An unknown pointer, an interior pointer or a second free returns
  // RRT_ERR_INVALID_ARGUMENT and changes nothing. The block is filled with a poison byte at
  // once, unordered with streams: the caller orders the free after every queued use of the
  // block (the engine waits for the streams that used it), or that work may see the poison.
  virtual Status free(void *ptr) = 0;

  virtual Status copy_host_to_device(void *dst, const void *src, std::size_t bytes) = 0;
  virtual Status copy_device_to_host(void *dst, const void *src, std::size_t bytes) = 0;
  virtual Status copy_device_to_device(void *dst, const void *src, std::size_t bytes) = 0;
  virtual Status memset(void *dst, int value, std::size_t bytes) = 0;

  // The live allocation containing `address`, if any.
  virtual std::optional<AllocationInfo> find_allocation(const void *address) const = 0;
  // The index of the first range that does not lie inside one live allocation, or
  // ranges.size() when all do. A backend may answer for the whole batch at once.
  virtual std::size_t first_range_outside_allocations(std::span<const AddressRange> ranges) const;
  // What free_epoch() returns on a backend that does not count frees.
  static constexpr std::uint64_t kUntrackedFreeEpoch = UINT64_MAX;
  // A count that advances before any call that ends an allocation (free, unregister_foreign)
  // returns, so a caller that read the same value before and after a check of live ranges knows
  // no allocation ended in between. Read without a lock. Default: kUntrackedFreeEpoch, always.
  virtual std::uint64_t free_epoch() const noexcept { return kUntrackedFreeEpoch; }
  virtual MemoryCounters memory_counters() const = 0;

  virtual Status create_stream(std::unique_ptr<Stream> *out) = 0;
  // A Stream over a native stream the caller owns (CUDA: a cudaStream_t of this device's
  // context). The wrapper never destroys the handle; the handle must outlive it. Default:
  // RRT_ERR_UNSUPPORTED (the backend has no native streams).
  virtual Status wrap_native_stream(void *native_stream, std::unique_ptr<Stream> *out);
  // Admits [ptr, ptr + bytes), memory this device did not allocate (for example another
  // library's device allocation), as a live allocation until unregister_foreign(ptr): copies,
  // captures and stale-address checks treat it like any allocation, free() refuses it, and
  // unregistering it makes graphs that captured it stale. RRT_ERR_INVALID_ARGUMENT when the
  // range is empty, overlaps a live allocation or is not device memory of this device.
  // Default: RRT_ERR_UNSUPPORTED.
  virtual Status register_foreign(void *ptr, std::size_t bytes);
  virtual Status unregister_foreign(void *ptr);
  virtual Status create_event(std::unique_ptr<Event> *out) = 0;
  // How host waits on this device's streams and events wait. Streams and events created
  // afterwards use `policy`; call it before creating any. Default: ignored (a backend whose
  // runtime chooses how host threads wait, CUDA, keeps its own scheduling).
  virtual void set_host_wait_policy(const HostWaitPolicy &policy);
  // The device's executor of bound launches. RRT_ERR_INVALID_ARGUMENT for a null `out` or a
  // config without kernels; RRT_ERR_INTERNAL when the backend cannot start its workers. The
  // executor must outlive every stream it enqueued on and every graph that captured one of
  // its launches, and must not outlive the device.
  virtual Status create_executor(const ExecutorConfig &config, std::unique_ptr<Executor> *out) = 0;
};

// A callable's task graph as the runtime hands it to an executor when the callable is
// prepared: the host bytes of its task-graph image (platform/launch/task_graph_image.h), built
// relocatable: every baked address (an intermediate's) is an offset from the gm_heap base that
// each launch names (LaunchBinding::gm_heap), and the scheduler addresses are zero.
struct TaskGraphSpec {
  std::span<const std::byte> image;
};

// What an executor made of a TaskGraphSpec: whatever the backend needs to launch the callable
// without reading its image back (the simulator's device reads the uploaded image itself;
// CUDA keeps the resolved host plan). Immutable once made; valid for the executor's life.
class PreparedExecutable {
 public:
  PreparedExecutable() = default;
  virtual ~PreparedExecutable() = default;
  PreparedExecutable(const PreparedExecutable &) = delete;
  PreparedExecutable &operator=(const PreparedExecutable &) = delete;
  PreparedExecutable(PreparedExecutable &&) = delete;
  PreparedExecutable &operator=(PreparedExecutable &&) = delete;
};

// One launch of a prepared callable.
struct LaunchBinding {
  // The invocation (platform/launch/invocation_header.h): copied at enqueue (and into the
  // graph at capture); the caller's buffer may be reused at once.
  std::span<const std::byte> invocation;
  // Every device address the launch may dereference, as in LaunchRequest.
  std::span<const void *const> referenced;
  // The gm_heap the launch's intermediates live in (null for a callable without them).
  const void *gm_heap = nullptr;
};

// Runs bound launches on a device: an invocation (platform/launch/invocation_header.h) names a
// task-graph image (platform/launch/task_graph_image.h) in device memory and carries the
// launch's tensors and scalars, and executing it runs every task of the image, in dependency
// order, on the device. A task's failure, or an invocation or image that is malformed or
// inconsistent, is RRT_ERR_KERNEL_FAILED on the stream (sticky, as any launch failure), never
// a hang or a write outside the image's buffers.
// Thread safety: every member may be called from any thread, for any stream of the device.
class Executor {
 public:
  Executor() = default;
  virtual ~Executor() = default;
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;
  Executor(Executor &&) = delete;
  Executor &operator=(Executor &&) = delete;

  // Prepares the callable `spec` describes, once, when it is prepared: checks the image (magic,
  // version, section layout, indices, every kernel runnable by this backend) and keeps what the
  // backend's launches need. RRT_ERR_INVALID_ARGUMENT naming what is wrong, RRT_ERR_UNSUPPORTED
  // naming the task and kernel this backend cannot run; nothing is enqueued, nothing in device
  // memory is read or written.
  virtual Status prepare(const TaskGraphSpec &spec, std::unique_ptr<PreparedExecutable> *out) = 0;
  // Enqueues the execution of `executable` (made by this executor's prepare) with `binding`
  // on `stream`, a stream of the device that created this executor. Errors as
  // Stream::enqueue_launch.
  virtual Status enqueue(Stream &stream, const PreparedExecutable &executable,
                         const LaunchBinding &binding) = 0;
};

// An in-order queue of device work.
//
// Enqueue calls return once the work is queued; it executes later, in order. A stream that is
// capturing records the work into a graph instead of executing it.
//
// Failures: an operation that fails on the device (a launch entry returning an error, or a
// copy whose device range is no longer live) makes its failure sticky on the stream: later
// copies, memsets and launches on it are skipped until the failure is reported. Event records
// still complete and carry it; a stream that waits on such an event only waits: a failure never
// crosses to another stream. The failure is reported exactly once, by synchronize() or by
// Event::synchronize() of an event whose record carried it, and reporting clears it.
//
// Capture: begin_capture() → enqueue ... → end_capture(&graph). While capturing, every enqueue
// is recorded: launches with their invocation bytes and referenced addresses, copies and
// memsets with their addresses, event records and waits. An enqueue whose device address is
// not inside a live allocation fails and is not recorded; end_capture then returns
// RRT_ERR_INVALID_STATE and discards the capture. synchronize() and replay() on a
// capturing stream return RRT_ERR_INVALID_STATE. Work queued before begin_capture still runs.
//
// Replay: replay(graph) first checks every captured device address: it must still lie in the
// same live allocation (same base, same generation). If any does not, it returns
// RRT_ERR_STALE_ADDRESS naming the address, and enqueues nothing. Otherwise it enqueues
// exactly the recorded operations, as one contiguous block, with the recorded bytes. An event
// wait inside a graph binds, at replay, to the event's most recent record at that point. A
// graph may be replayed any number of times, on any stream of the device that captured it,
// interleaved with other graphs. Events a graph records or waits on must outlive the graph.
//
// Thread safety: every member may be called from any thread. Destruction waits for queued
// work; destroying a capturing stream abandons the capture.
class Stream {
 public:
  Stream() = default;
  virtual ~Stream() = default;
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  Stream(Stream &&) = delete;
  Stream &operator=(Stream &&) = delete;

  // The host buffer of a host-to-device copy is read when the copy executes; the host buffer
  // of a device-to-host copy is written then. Both must stay valid until then (for a graph:
  // through every replay).
  virtual Status enqueue_copy_host_to_device(void *dst, const void *src, std::size_t bytes) = 0;
  virtual Status enqueue_copy_device_to_host(void *dst, const void *src, std::size_t bytes) = 0;
  virtual Status enqueue_copy_device_to_device(void *dst, const void *src, std::size_t bytes) = 0;
  virtual Status enqueue_memset(void *dst, int value, std::size_t bytes) = 0;
  virtual Status enqueue_launch(const LaunchRequest &request) = 0;
  // Calls work.enqueue(native_handle(), work.context) now, on the calling thread; while
  // capturing, records work.referenced as enqueue_launch records `referenced`. A nonzero
  // return is RRT_ERR_KERNEL_FAILED, returned and sticky. Default: RRT_ERR_UNSUPPORTED (the
  // backend has no native work).
  virtual Status enqueue_native(const NativeWork &work);
  // Records that work belonging on this stream could not be enqueued (an executor that refused
  // a launch before or after enqueuing part of it). While capturing, the capture fails:
  // end_capture then returns RRT_ERR_INVALID_STATE naming `why` and discards the graph (every
  // enqueue call of the stream that fails during a capture does the same by itself).
  // Otherwise `why` becomes the stream's sticky failure.
  virtual void fail_enqueue(const Status &why) = 0;
  // The backend's own stream object (CUDA: the cudaStream_t), or null for a backend without
  // one.
  virtual void *native_handle() const noexcept { return nullptr; }
  // native_handle() for the caller's own use (rrt_stream_native_handle): from then on the
  // stream also checks whether the handle's new user captures it (capture_is_foreign). A
  // wrapped native stream is shared from the start.
  virtual void *share_native_handle() noexcept { return native_handle(); }

  virtual Status record_event(Event &event) = 0;
  // Later work on this stream waits for `event`'s most recent record (none: no wait).
  virtual Status wait_event(Event &event) = 0;

  // Waits until all queued work has executed; returns and clears the sticky failure.
  virtual Status synchronize() = 0;
  // Waits until all work queued so far has executed, also while capturing; reports nothing
  // (the sticky failure stays for synchronize()).
  virtual Status wait_idle() = 0;
  // True when all work queued so far has executed (while capturing: the work queued before the
  // capture began; captured work is recorded, not queued). Never waits, and reports and clears
  // nothing: a failed operation counts as executed and its failure stays for synchronize().
  virtual bool query() const = 0;

  virtual Status begin_capture() = 0;
  // Ends the capture into *out. A host allocation failure (std::bad_alloc) before the backend
  // ends its capture leaves the capture going with all its work (the simulator: always); once
  // the backend has ended it (CUDA: cudaStreamEndCapture cannot be undone), any failure ends
  // the capture with no graph and nothing leaked.
  virtual Status end_capture(std::unique_ptr<Graph> *out) = 0;
  // True while the stream captures: by begin_capture, or (capture_is_foreign) because the
  // owner of its native stream captures that (CUDA: cudaStreamBeginCapture outside replayrt,
  // as torch.cuda.graph does on a wrapped stream). Work enqueued then is recorded into the
  // owner's graph, which replayrt neither sees nor checks at replay: synchronize, wait_idle,
  // begin_capture and replay return RRT_ERR_INVALID_STATE, and an enqueue that fails
  // invalidates the owner's capture, so its graph never silently lacks the work.
  virtual bool is_capturing() const = 0;
  virtual bool capture_is_foreign() const { return false; }

  virtual Status replay(const Graph &graph) = 0;
};

// A record/wait marker between streams and the host.
class Event {
 public:
  Event() = default;
  virtual ~Event() = default;
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  Event(Event &&) = delete;
  Event &operator=(Event &&) = delete;

  // Waits for the most recent record (as of this call) to execute; reports the failure it
  // carried, if its stream has not reported it yet, and so clears it on that stream. OK at
  // once for an event never recorded.
  virtual Status synchronize() = 0;
  // Waits for the most recent record (as of this call) to execute and reports nothing.
  virtual void wait() = 0;
  // True when the most recent record has executed (or there is none), or when it never will
  // (the device faulted: synchronize() reports it).
  virtual bool query() const = 0;
};

// Recorded device work, replayable by Stream::replay.
class Graph {
 public:
  Graph() = default;
  virtual ~Graph() = default;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  Graph(Graph &&) = delete;
  Graph &operator=(Graph &&) = delete;

  virtual std::size_t operation_count() const = 0;
  // The check replay() makes first: OK when every captured address is still the same live
  // allocation, RRT_ERR_STALE_ADDRESS naming the first one that is not. Touches nothing.
  virtual Status check_addresses() const = 0;
  // Every device address the stale-address check compares at replay.
  virtual std::span<const CapturedAddress> captured_addresses() const = 0;
};

}  // namespace replayrt
