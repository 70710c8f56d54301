// The CUDA backend's Stream, Event and Graph (platform/device.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "platform/cuda/cuda_device.h"
#include "platform/device.h"
#include "platform/sticky_failure.h"

namespace replayrt::cuda {

// A CUDA event (cudaEventDisableTiming) plus the failure its latest host-side record carried:
// the recording stream's StickyFailure and the serial of the failure pending at the record
// (0: none). synchronize() waits for the record and then reports that failure if its stream
// has not reported it yet (clearing it there); wait() only waits. A device-side wait never takes
// the carried failure over (as on the simulator: a failure stays on its stream).
class CudaEvent final : public Event {
 public:
  CudaEvent(CudaDevice &device, cudaEvent_t event) : device_(device), event_(event) {}
  ~CudaEvent() override;

  Status synchronize() override;
  void wait() override;
  bool query() const override;

  cudaEvent_t handle() const noexcept { return event_; }
  CudaDevice &device() const noexcept { return device_; }
  // The failure a record made now carries; a record inside a capture carries none.
  void set_carried(std::shared_ptr<StickyFailure> origin, std::uint64_t serial);

 private:
  CudaDevice &device_;
  cudaEvent_t event_;
  mutable std::mutex mutex_;
  std::shared_ptr<StickyFailure> origin_;  // guarded by mutex_
  std::uint64_t serial_ = 0;               // guarded by mutex_
};

// A captured and instantiated CUDA graph. Replay checks its captured addresses first: while the
// device's free epoch equals the epoch of the graph's last full check, nothing was freed and
// every address is still live, so the check is one atomic load; otherwise one full check
// against the allocation table (base and generation, so ABA is caught) refreshes the epoch.
// cudaGraphLaunch then runs under the graph's mutex (an executable graph is not thread-safe).
// The graph keeps the events its capture recorded (recorded_events), which must outlive it (the
// C ABI refuses to destroy an event a graph holds): each replay's records carry the replaying
// stream's failure state.
class CudaGraph final : public Graph {
 public:
  // A validated_epoch of kNeverValidated forces a full check at the first replay.
  static constexpr std::uint64_t kNeverValidated = ~std::uint64_t{0};

  CudaGraph(CudaDevice &device, cudaGraphExec_t exec, std::size_t nodes,
            std::vector<CapturedAddress> addresses, std::uint64_t validated_epoch,
            std::vector<CudaEvent *> recorded_events = {});
  ~CudaGraph() override;

  std::size_t operation_count() const override { return nodes_; }
  std::span<const CapturedAddress> captured_addresses() const override { return addresses_; }

  CudaDevice &device() const noexcept { return device_; }
  // RRT_ERR_STALE_ADDRESS naming the first address no longer in its allocation.
  Status check_addresses() const override;
  Status launch(cudaStream_t stream) const;
  // The events the capture recorded, each once.
  std::span<CudaEvent *const> recorded_events() const noexcept { return recorded_events_; }

 private:
  CudaDevice &device_;
  cudaGraphExec_t exec_;
  std::size_t nodes_;
  std::vector<CapturedAddress> addresses_;
  std::vector<CudaEvent *> recorded_events_;
  mutable std::atomic<std::uint64_t> validated_epoch_;
  mutable std::mutex launch_mutex_;
};

// A CUDA stream (cudaStreamNonBlocking, never the legacy stream), owned or wrapping the
// caller's.
//
// Failures follow the simulator's model (platform/sticky_failure.h): the first failure of the
// stream's work is pending until it is reported once (synchronize, or an event synchronize of a
// record that carried it), and while it is pending copies, memsets, native work and replays are
// skipped. A wait on an event never takes another stream's failure over.
//
// Enqueues: device ranges are checked against the allocation table first. Outside a capture a
// range that is not live becomes the stream's pending failure (the work is skipped and
// synchronize() reports it). Native work (enqueue_native) runs its enqueue function at once with
// the cudaStream_t; a nonzero return is RRT_ERR_KERNEL_FAILED, returned and sticky.
// enqueue_launch (a host DeviceEntry) is RRT_ERR_UNSUPPORTED: CUDA cannot run it.
//
// Events: record/wait use cudaEventRecordWithFlags / cudaStreamWaitEvent, with the external
// flags while capturing, so a graph holds real record and wait nodes and a wait on an event
// recorded outside the capture is legal.
//
// Capture: begin_capture uses cudaStreamCaptureModeThreadLocal and remembers the thread;
// end_capture must run on that thread (RRT_ERR_INVALID_STATE otherwise, still capturing).
// While capturing, every device range and referenced address is resolved in the table (the
// declared addresses); an enqueue refused then, or fail_enqueue(), makes end_capture return
// RRT_ERR_INVALID_STATE and discard the CUDA graph. end_capture ends the CUDA capture (an
// invalidated capture is RRT_ERR_INVALID_STATE naming the CUDA error, and the stream is
// reusable), audits the graph (audit_cuda_graph, cuda_graph_audit.h), instantiates and uploads it;
// any failure destroys everything it created. The graph's captured addresses are the declared and
// audited ones, deduplicated.
//
// Captures by the handle's owner: once the native handle may be in other hands (a wrapped
// stream, or share_native_handle()), every call also asks cudaStreamIsCapturing. While the
// owner captures it, is_capturing() and capture_is_foreign() are true; enqueues are recorded
// into the owner's graph with the external event flags and no declared addresses; a refused or
// failed enqueue invalidates the owner's capture (a cudaStreamQuery of the capturing stream)
// instead of becoming sticky; synchronize, wait_idle, begin_capture and replay return
// RRT_ERR_INVALID_STATE; query answers done without asking CUDA. An owned stream whose handle
// was never shared makes no such call.
//
// Replay: a CudaGraph of the same device; RRT_ERR_INVALID_STATE while capturing; the address
// check, then cudaGraphLaunch on this stream, and each event the graph records then carries
// this stream's failure state. With a failure pending the graph's work is skipped, but its
// events are recorded on the stream all the same, carrying that failure, as a record enqueued
// then would be. It takes no stream lock (its state is atomic and the graph's own mutex
// serializes its launches).
//
// synchronize: cudaStreamSynchronize (a device fault is RRT_ERR_KERNEL_FAILED and poisons the
// CUDA context), then reports the pending failure. wait_idle waits without reporting; while
// capturing it waits for the event recorded just before the capture began (a capturing CUDA
// stream cannot be synchronized), that is for the work queued before the capture. query is
// cudaStreamQuery (while capturing: cudaEventQuery of that event); cudaErrorNotReady is "not
// done", any other error counts as done (nothing more will execute; synchronize reports it).
// Host waits (synchronize, wait_idle, query, and the event's) run under a RelaxedCaptureGuard:
// waiting for work queued outside a capture never invalidates a capture the calling thread has
// in progress. They use the CUDA runtime's own device scheduling; set_host_wait_policy is
// ignored.
// Destruction abandons a capture (destroying the partial graph; CUDA lets only the capture's
// thread end it, so a capturing stream must be destroyed there: rrt_stream_destroy refuses a
// capturing stream), waits for queued work unless the owner is capturing the handle, and
// destroys an owned cudaStream_t.
class CudaStream final : public Stream {
 public:
  CudaStream(CudaDevice &device, cudaStream_t stream, bool owned);
  ~CudaStream() override;

  Status enqueue_copy_host_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status enqueue_copy_device_to_host(void *dst, const void *src, std::size_t bytes) override;
  Status enqueue_copy_device_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status enqueue_memset(void *dst, int value, std::size_t bytes) override;
  Status enqueue_launch(const LaunchRequest &request) override;
  Status enqueue_native(const NativeWork &work) override;
  Status record_event(Event &event) override;
  Status wait_event(Event &event) override;
  Status synchronize() override;
  Status wait_idle() override;
  bool query() const override;
  Status begin_capture() override;
  Status end_capture(std::unique_ptr<Graph> *out) override;
  bool is_capturing() const override;
  bool capture_is_foreign() const override;
  void fail_enqueue(const Status &why) override;
  Status replay(const Graph &graph) override;
  void *native_handle() const noexcept override { return stream_; }
  void *share_native_handle() noexcept override;

 private:
  struct DeviceRange {
    const void *address = nullptr;
    std::size_t bytes = 0;
    const char *role = "";
  };
  // Who captures the stream: nobody, replayrt (begin_capture), or the native stream's owner.
  enum class Capture { kNone, kOwn, kForeign };

  // Reads atomics only (and, for a shared handle, cudaStreamIsCapturing).
  Capture capture_now() const;
  bool captured_by_owner() const;
  // OK to enqueue: the ranges (and, while capturing, the referenced addresses) are live; while
  // replayrt captures they are recorded. A refusal while capturing fails the capture
  // (fail_locked) and is returned; outside a capture it becomes the sticky failure and *skip
  // is set. *skip is also set while a sticky failure is stored (outside a capture). A host
  // allocation that fails while recording (std::bad_alloc, rethrown) records nothing and fails
  // the capture, so no graph silently lacks the operation.
  Status admit(Capture capture, std::span<const DeviceRange> ranges,
               std::span<const void *const> referenced, bool *skip);
  // The table check of admit: every range lies in one live allocation and, when `own`, every
  // referenced address does; when `own`, each is appended to declared_.
  Status check_and_declare(bool own, std::span<const DeviceRange> ranges,
                           std::span<const void *const> referenced);
  Status after_call(Capture capture, cudaError_t error, const char *call);
  // A failure of work enqueued now: replayrt's capture fails, the owner's capture is
  // invalidated, or (no capture) it becomes the sticky failure.
  void fail_locked(Capture capture, Status why);
  void fail_capture_locked(const Status &why);
  void abandon_capture() noexcept;

  CudaDevice &device_;
  const CudaApi &api_;
  cudaStream_t stream_;
  const bool owned_;

  mutable std::mutex mutex_;
  std::atomic<bool> capturing_{false};  // written under mutex_
  // True once the handle may be in another user's hands (a wrapped stream, or
  // share_native_handle): only then may someone else capture it.
  std::atomic<bool> shared_;
  std::thread::id capture_thread_;              // guarded by mutex_
  Status capture_failure_;                      // guarded by mutex_
  std::vector<CapturedAddress> declared_;       // guarded by mutex_
  std::vector<CudaEvent *> captured_records_;   // guarded by mutex_: events the capture recorded
  std::vector<CapturedAddress> audit_scratch_;  // guarded by mutex_
  // Recorded just before begin_capture; wait_idle waits on it while capturing.
  cudaEvent_t before_capture_ = nullptr;  // guarded by mutex_; made by the first capture
  std::shared_ptr<StickyFailure> failure_ = std::make_shared<StickyFailure>();
};

}  // namespace replayrt::cuda
