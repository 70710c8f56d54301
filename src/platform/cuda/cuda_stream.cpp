#include "platform/cuda/cuda_stream.h"

#include <algorithm>
#include <utility>

#include "common/format.h"
#include "platform/cuda/cuda_graph_audit.h"
#include "platform/cuda/cuda_status.h"
#include "platform/cuda/graph_audit.h"

namespace replayrt::cuda {

namespace {

// Destroys a captured cudaGraph_t when it goes out of scope.
struct CapturedGraphDeleter {
  CapturedGraphDeleter(const CudaApi &api, cudaGraph_t graph) : api(api), graph(graph) {}
  ~CapturedGraphDeleter() {
    if (graph != nullptr) {
      (void)api.graph_destroy(graph);
    }
  }
  CapturedGraphDeleter(const CapturedGraphDeleter &) = delete;
  CapturedGraphDeleter &operator=(const CapturedGraphDeleter &) = delete;
  CapturedGraphDeleter(CapturedGraphDeleter &&) = delete;
  CapturedGraphDeleter &operator=(CapturedGraphDeleter &&) = delete;

  const CudaApi &api;
  cudaGraph_t graph;
};

Status capturing_error(const char *call) {
  return Status::error(
      RRT_ERR_INVALID_STATE,
      format("stream %s while the stream is capturing; end the capture first", call));
}

Status captured_by_owner_error(const char *call) {
  return Status::error(RRT_ERR_INVALID_STATE,
                       format("stream %s while its native stream is being captured outside "
                              "replayrt (cudaStreamBeginCapture by its owner); end that capture "
                              "first",
                              call));
}

}  // namespace

// ---- CudaEvent -----------------------------------------------------------------------------

CudaEvent::~CudaEvent() {
  (void)device_.make_current();
  (void)device_.api().event_destroy(event_);
}

Status CudaEvent::synchronize() {
  const RelaxedCaptureGuard relaxed(device_.api());
  RRT_RETURN_IF_ERROR(device_.make_current());
  std::shared_ptr<StickyFailure> origin;
  std::uint64_t serial = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    origin = origin_;
    serial = serial_;
  }
  RRT_RETURN_IF_ERROR(
      cuda_status(device_.api(), device_.api().event_synchronize(event_), "cudaEventSynchronize"));
  return origin != nullptr && serial != 0 ? origin->report(serial) : Status::ok();
}

void CudaEvent::wait() {
  const RelaxedCaptureGuard relaxed(device_.api());
  if (device_.make_current().is_ok() && device_.api().event_synchronize(event_) != cudaSuccess) {
    (void)device_.api().get_last_error();
  }
}

bool CudaEvent::query() const {
  const RelaxedCaptureGuard relaxed(device_.api());
  (void)device_.make_current();
  const cudaError_t state = device_.api().event_query(event_);
  if (state != cudaSuccess) {
    (void)device_.api().get_last_error();
  }
  // Any answer but "not ready" (a sticky fault, which every later query repeats) means nothing
  // more will execute; synchronize() reports the failure.
  return state != cudaErrorNotReady;
}

void CudaEvent::set_carried(std::shared_ptr<StickyFailure> origin, std::uint64_t serial) {
  const std::lock_guard<std::mutex> lock(mutex_);
  origin_ = std::move(origin);
  serial_ = serial;
}

// ---- CudaGraph -----------------------------------------------------------------------------

CudaGraph::CudaGraph(CudaDevice &device, cudaGraphExec_t exec, std::size_t nodes,
                     std::vector<CapturedAddress> addresses, std::uint64_t validated_epoch,
                     std::vector<CudaEvent *> recorded_events)
    : device_(device),
      exec_(exec),
      nodes_(nodes),
      addresses_(std::move(addresses)),
      recorded_events_(std::move(recorded_events)),
      validated_epoch_(validated_epoch) {}

CudaGraph::~CudaGraph() {
  if (exec_ != nullptr) {
    (void)device_.make_current();
    (void)device_.api().graph_exec_destroy(exec_);
  }
}

Status CudaGraph::check_addresses() const {
  const std::uint64_t epoch = device_.free_epoch();
  if (epoch == validated_epoch_.load(std::memory_order_acquire)) {
    return Status::ok();
  }
  const std::size_t stale = device_.with_table(
      [this](const AllocationTable &table) { return table.first_stale(addresses_); });
  if (stale != addresses_.size()) {
    return Status::error(
        RRT_ERR_STALE_ADDRESS,
        format("graph replay: captured address %p no longer lies in the allocation at %p "
               "(generation %llu) it was captured in",
               reinterpret_cast<const void *>(addresses_[stale].address),
               reinterpret_cast<const void *>(addresses_[stale].base),
               static_cast<unsigned long long>(addresses_[stale].generation)));
  }
  // Every address was live at `epoch` or later; a free after the load above forces the next
  // replay to check again.
  validated_epoch_.store(epoch, std::memory_order_release);
  return Status::ok();
}

Status CudaGraph::launch(cudaStream_t stream) const {
  const std::lock_guard<std::mutex> lock(launch_mutex_);
  return cuda_status(device_.api(), device_.api().graph_launch(exec_, stream), "cudaGraphLaunch");
}

// ---- CudaStream ----------------------------------------------------------------------------

CudaStream::CudaStream(CudaDevice &device, cudaStream_t stream, bool owned)
    : device_(device), api_(device.api()), stream_(stream), owned_(owned), shared_(!owned) {}

void *CudaStream::share_native_handle() noexcept {
  shared_.store(true, std::memory_order_release);
  return stream_;
}

CudaStream::~CudaStream() {
  (void)device_.make_current();
  abandon_capture();
  const RelaxedCaptureGuard relaxed(api_);
  if (!captured_by_owner()) {
    (void)api_.stream_synchronize(stream_);
    (void)api_.get_last_error();
  }
  if (before_capture_ != nullptr) {
    (void)api_.event_destroy(before_capture_);
  }
  if (owned_) {
    (void)api_.stream_destroy(stream_);
  }
}

void CudaStream::abandon_capture() noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!capturing_.load(std::memory_order_acquire)) {
    return;
  }
  cudaGraph_t partial = nullptr;
  (void)api_.stream_end_capture(stream_, &partial);
  (void)api_.get_last_error();
  if (partial != nullptr) {
    (void)api_.graph_destroy(partial);
  }
  capturing_.store(false, std::memory_order_release);
  declared_.clear();
  device_.capture_ended();
}

void CudaStream::fail_enqueue(const Status &why) {
  const std::lock_guard<std::mutex> lock(mutex_);
  fail_locked(capture_now(),
              why.is_ok() ? Status::error(RRT_ERR_INTERNAL, "an enqueue failed") : why);
}

CudaStream::Capture CudaStream::capture_now() const {
  if (capturing_.load(std::memory_order_acquire)) {
    return Capture::kOwn;
  }
  return captured_by_owner() ? Capture::kForeign : Capture::kNone;
}

bool CudaStream::captured_by_owner() const {
  if (!shared_.load(std::memory_order_acquire)) {
    return false;
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (api_.stream_is_capturing(stream_, &status) != cudaSuccess) {
    (void)api_.get_last_error();
    return false;
  }
  return status != cudaStreamCaptureStatusNone;
}

void CudaStream::fail_locked(Capture capture, Status why) {
  switch (capture) {
    case Capture::kOwn:
      fail_capture_locked(why);
      break;
    case Capture::kForeign:
      // The owner's graph would lack this work: querying a capturing stream is illegal, and
      // CUDA invalidates the capture, so the owner's end of capture fails instead.
      (void)api_.stream_query(stream_);
      (void)api_.get_last_error();
      break;
    case Capture::kNone:
      failure_->fail(std::move(why));
      break;
  }
}

void CudaStream::fail_capture_locked(const Status &why) {
  if (capturing_.load(std::memory_order_acquire) && capture_failure_.is_ok()) {
    capture_failure_ =
        why.is_ok() ? Status::error(RRT_ERR_INVALID_STATE, "a capture failure") : why;
  }
}

Status CudaStream::admit(Capture capture, std::span<const DeviceRange> ranges,
                         std::span<const void *const> referenced, bool *skip) {
  *skip = false;
  if (capture == Capture::kNone && failure_->is_pending()) {
    *skip = true;
    return Status::ok();
  }
  const bool own = capture == Capture::kOwn;
  const std::size_t first = declared_.size();
  Status refused;
  try {
    refused = check_and_declare(own, ranges, referenced);
  } catch (...) {
    // A host allocation failed: the graph would lack this operation.
    declared_.resize(first);
    fail_locked(capture, Status::error_without_detail(RRT_ERR_INTERNAL));
    throw;
  }
  if (refused.is_ok()) {
    return Status::ok();
  }
  declared_.resize(first);
  if (capture != Capture::kNone) {
    fail_locked(capture, refused);
    return refused;
  }
  failure_->fail(std::move(refused));
  *skip = true;
  return Status::ok();
}

Status CudaStream::check_and_declare(bool own, std::span<const DeviceRange> ranges,
                                     std::span<const void *const> referenced) {
  return device_.with_table([&](const AllocationTable &table) -> Status {
    for (const DeviceRange &range : ranges) {
      RRT_RETURN_IF_ERROR(table.check_range(range.address, range.bytes, range.role));
      if (own) {
        const auto owner = table.find(reinterpret_cast<std::uintptr_t>(range.address));
        declared_.push_back(CapturedAddress{reinterpret_cast<std::uintptr_t>(range.address),
                                            owner->base, owner->generation});
      }
    }
    if (own) {
      for (const void *address : referenced) {
        const auto start = reinterpret_cast<std::uintptr_t>(address);
        const auto owner = table.find(start);
        if (!owner) {
          return Status::error(
              RRT_ERR_INVALID_ARGUMENT,
              format("capture: launch references %p, which is not inside a live device "
                     "allocation",
                     address));
        }
        declared_.push_back(CapturedAddress{start, owner->base, owner->generation});
      }
    }
    return Status::ok();
  });
}

Status CudaStream::after_call(Capture capture, cudaError_t error, const char *call) {
  if (error == cudaSuccess) {
    return Status::ok();
  }
  (void)api_.get_last_error();
  Status failure = cuda_status(api_, error, call);
  fail_locked(capture, failure);
  return failure;
}

Status CudaStream::enqueue_copy_host_to_device(void *dst, const void *src, std::size_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const Capture capture = capture_now();
  const DeviceRange ranges[] = {{dst, bytes, "host-to-device copy destination"}};
  bool skip = false;
  RRT_RETURN_IF_ERROR(admit(capture, ranges, {}, &skip));
  if (skip || bytes == 0) {
    return Status::ok();
  }
  return after_call(capture, api_.memcpy_async(dst, src, bytes, cudaMemcpyHostToDevice, stream_),
                    "cudaMemcpyAsync");
}

Status CudaStream::enqueue_copy_device_to_host(void *dst, const void *src, std::size_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const Capture capture = capture_now();
  const DeviceRange ranges[] = {{src, bytes, "device-to-host copy source"}};
  bool skip = false;
  RRT_RETURN_IF_ERROR(admit(capture, ranges, {}, &skip));
  if (skip || bytes == 0) {
    return Status::ok();
  }
  return after_call(capture, api_.memcpy_async(dst, src, bytes, cudaMemcpyDeviceToHost, stream_),
                    "cudaMemcpyAsync");
}

Status CudaStream::enqueue_copy_device_to_device(void *dst, const void *src, std::size_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const Capture capture = capture_now();
  const DeviceRange ranges[] = {{src, bytes, "device-to-device copy source"},
                                {dst, bytes, "device-to-device copy destination"}};
  bool skip = false;
  RRT_RETURN_IF_ERROR(admit(capture, ranges, {}, &skip));
  if (skip || bytes == 0) {
    return Status::ok();
  }
  return after_call(capture, api_.memcpy_async(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_),
                    "cudaMemcpyAsync");
}

Status CudaStream::enqueue_memset(void *dst, int value, std::size_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const Capture capture = capture_now();
  const DeviceRange ranges[] = {{dst, bytes, "memset destination"}};
  bool skip = false;
  RRT_RETURN_IF_ERROR(admit(capture, ranges, {}, &skip));
  if (skip || bytes == 0) {
    return Status::ok();
  }
  return after_call(capture, api_.memset_async(dst, value, bytes, stream_), "cudaMemsetAsync");
}

Status CudaStream::enqueue_launch(const LaunchRequest & /*request*/) {
  Status refused = Status::error(RRT_ERR_UNSUPPORTED,
                                 "CUDA streams cannot run host device entries; kernels run as "
                                 "native work");
  const std::lock_guard<std::mutex> lock(mutex_);
  fail_locked(capture_now(), refused);
  return refused;
}

Status CudaStream::enqueue_native(const NativeWork &work) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const Capture capture = capture_now();
  if (work.enqueue == nullptr) {
    Status refused = Status::error(RRT_ERR_INVALID_ARGUMENT, "native work without a function");
    fail_locked(capture, refused);
    return refused;
  }
  bool skip = false;
  RRT_RETURN_IF_ERROR(admit(capture, {}, work.referenced, &skip));
  if (skip) {
    return Status::ok();
  }
  const int code = work.enqueue(stream_, work.context);
  if (code != 0) {
    Status failure =
        Status::error(RRT_ERR_KERNEL_FAILED, format("native launcher returned %d", code));
    fail_locked(capture, failure);
    return failure;
  }
  return Status::ok();
}

Status CudaStream::record_event(Event &event) {
  auto *cuda_event = dynamic_cast<CudaEvent *>(&event);
  const std::lock_guard<std::mutex> lock(mutex_);
  if (cuda_event == nullptr || &cuda_event->device() != &device_) {
    Status refused = Status::error(RRT_ERR_INVALID_ARGUMENT,
                                   "stream event record of an event of another device");
    fail_locked(capture_now(), refused);
    return refused;
  }
  const Capture capture = capture_now();
  const bool noted = capture != Capture::kOwn ||
                     std::find(captured_records_.begin(), captured_records_.end(), cuda_event) !=
                         captured_records_.end();
  if (!noted) {
    // Room first, so that noting the record cannot fail once the capture holds it.
    captured_records_.reserve(captured_records_.size() + 1);
  }
  RRT_RETURN_IF_ERROR(after_call(
      capture,
      api_.event_record_with_flags(cuda_event->handle(), stream_,
                                   capture != Capture::kNone ? cudaEventRecordExternal : 0),
      "cudaEventRecordWithFlags"));
  if (capture == Capture::kNone) {
    cuda_event->set_carried(failure_, failure_->pending_serial());
  }
  if (!noted) {
    captured_records_.push_back(cuda_event);
  }
  return Status::ok();
}

Status CudaStream::wait_event(Event &event) {
  auto *cuda_event = dynamic_cast<CudaEvent *>(&event);
  const std::lock_guard<std::mutex> lock(mutex_);
  if (cuda_event == nullptr || &cuda_event->device() != &device_) {
    Status refused =
        Status::error(RRT_ERR_INVALID_ARGUMENT, "stream event wait on an event of another device");
    fail_locked(capture_now(), refused);
    return refused;
  }
  const Capture capture = capture_now();
  RRT_RETURN_IF_ERROR(
      after_call(capture,
                 api_.stream_wait_event(stream_, cuda_event->handle(),
                                        capture != Capture::kNone ? cudaEventWaitExternal : 0),
                 "cudaStreamWaitEvent"));
  return Status::ok();
}

Status CudaStream::synchronize() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    switch (capture_now()) {
      case Capture::kOwn:
        return capturing_error("synchronize");
      case Capture::kForeign:
        return captured_by_owner_error("synchronize");
      case Capture::kNone:
        break;
    }
  }
  const RelaxedCaptureGuard relaxed(api_);
  RRT_RETURN_IF_ERROR(device_.make_current());
  const cudaError_t waited = api_.stream_synchronize(stream_);
  Status failure = failure_->report();
  if (waited != cudaSuccess) {
    (void)api_.get_last_error();
    Status error = cuda_status(api_, waited, "cudaStreamSynchronize");
    // The stream's own earlier failure is reported with it, not lost.
    return failure.is_ok()
               ? error
               : Status::error(error.code(), error.message() + "; the stream had failed before: " +
                                                 failure.message());
  }
  return failure;
}

Status CudaStream::wait_idle() {
  const RelaxedCaptureGuard relaxed(api_);
  RRT_RETURN_IF_ERROR(device_.make_current());
  const std::lock_guard<std::mutex> lock(mutex_);
  const Capture capture = capture_now();
  if (capture == Capture::kForeign) {
    return captured_by_owner_error("wait_idle");
  }
  const bool own = capture == Capture::kOwn;
  const cudaError_t waited =
      own ? api_.event_synchronize(before_capture_) : api_.stream_synchronize(stream_);
  if (waited != cudaSuccess) {
    (void)api_.get_last_error();
    return cuda_status(api_, waited, own ? "cudaEventSynchronize" : "cudaStreamSynchronize");
  }
  return Status::ok();
}

bool CudaStream::query() const {
  const RelaxedCaptureGuard relaxed(api_);
  if (!device_.make_current().is_ok()) {
    return true;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  const Capture capture = capture_now();
  if (capture == Capture::kForeign) {
    return true;  // querying a stream its owner captures would invalidate that capture
  }
  const cudaError_t state =
      capture == Capture::kOwn ? api_.event_query(before_capture_) : api_.stream_query(stream_);
  if (state != cudaSuccess) {
    (void)api_.get_last_error();
  }
  return state != cudaErrorNotReady;
}

Status CudaStream::begin_capture() {
  const std::lock_guard<std::mutex> lock(mutex_);
  switch (capture_now()) {
    case Capture::kOwn:
      return Status::error(RRT_ERR_INVALID_STATE,
                           "stream begin_capture while the stream is already capturing");
    case Capture::kForeign:
      return captured_by_owner_error("begin_capture");
    case Capture::kNone:
      break;
  }
  RRT_RETURN_IF_ERROR(device_.make_current());
  if (before_capture_ == nullptr) {
    RRT_RETURN_IF_ERROR(
        cuda_status(api_, api_.event_create_with_flags(&before_capture_, cudaEventDisableTiming),
                    "cudaEventCreateWithFlags"));
  }
  RRT_RETURN_IF_ERROR(after_call(Capture::kNone,
                                 api_.event_record_with_flags(before_capture_, stream_, 0),
                                 "cudaEventRecord"));
  const cudaError_t began = api_.stream_begin_capture(stream_, cudaStreamCaptureModeThreadLocal);
  if (began != cudaSuccess) {
    (void)api_.get_last_error();
    return cuda_status(api_, began, "cudaStreamBeginCapture");
  }
  device_.capture_started();
  capturing_.store(true, std::memory_order_release);
  capture_thread_ = std::this_thread::get_id();
  capture_failure_ = Status::ok();
  declared_.clear();
  captured_records_.clear();
  return Status::ok();
}

Status CudaStream::end_capture(std::unique_ptr<Graph> *out) {
  if (out == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "stream end_capture with a null graph output");
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!capturing_.load(std::memory_order_acquire)) {
    return Status::error(RRT_ERR_INVALID_STATE, "stream end_capture without a capture in progress");
  }
  if (capture_thread_ != std::this_thread::get_id()) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "stream end_capture on another thread than begin_capture (CUDA "
                         "thread-local capture); the capture continues");
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = api_.stream_end_capture(stream_, &graph);
  // The captured graph is destroyed on every way out, a thrown host allocation failure
  // included; only its instantiation outlives the call.
  const CapturedGraphDeleter discard_at_exit(api_, graph);
  capturing_.store(false, std::memory_order_release);
  device_.capture_ended();
  Status failure = std::move(capture_failure_);
  capture_failure_ = Status::ok();
  std::vector<CapturedAddress> addresses = std::move(declared_);
  declared_.clear();
  std::vector<CudaEvent *> recorded_events = std::move(captured_records_);
  captured_records_.clear();
  if (ended != cudaSuccess) {
    (void)api_.get_last_error();
    const Status why = cuda_status(api_, ended, "cudaStreamEndCapture");
    // Memory running out is reported as such; any other failure is CUDA invalidating the
    // capture. Either way the capture is over.
    const bool out_of_memory = why.code() == RRT_ERR_OUT_OF_MEMORY;
    return Status::error(out_of_memory ? RRT_ERR_OUT_OF_MEMORY : RRT_ERR_INVALID_STATE,
                         (out_of_memory ? "stream end_capture: the capture ended without a graph: "
                                        : "stream end_capture: the capture was invalidated: ") +
                             why.message() +
                             (failure.is_ok() ? "" : "; first refusal: " + failure.message()));
  }
  if (!failure.is_ok()) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "stream end_capture: the graph is discarded because work enqueued "
                         "during the capture was refused: " +
                             failure.message());
  }
  GraphAuditStats stats;
  std::uint64_t epoch = 0;
  bool all_live = false;
  const Status audited = device_.with_table([&](const AllocationTable &table) -> Status {
    RRT_RETURN_IF_ERROR(audit_cuda_graph(api_, graph, table, &addresses, &stats));
    epoch = table.free_epoch();
    all_live = table.first_stale(addresses) == addresses.size();
    return Status::ok();
  });
  if (!audited.is_ok()) {
    return Status::error(
        audited.code() == RRT_ERR_INVALID_STATE ? RRT_ERR_INVALID_STATE : audited.code(),
        "stream end_capture: " + audited.message());
  }
  deduplicate(&addresses);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = api_.graph_instantiate_with_flags(&exec, graph, 0);
  if (instantiated != cudaSuccess) {
    (void)api_.get_last_error();
    return cuda_status(api_, instantiated, "cudaGraphInstantiateWithFlags");
  }
  const cudaError_t uploaded = api_.graph_upload(exec, stream_);
  if (uploaded != cudaSuccess) {
    (void)api_.get_last_error();
    (void)api_.graph_exec_destroy(exec);
    return cuda_status(api_, uploaded, "cudaGraphUpload");
  }
  const std::size_t nodes =
      stats.kernel_nodes + stats.copy_nodes + stats.host_nodes + stats.event_nodes;
  try {
    *out = std::make_unique<CudaGraph>(device_, exec, nodes, std::move(addresses),
                                       all_live ? epoch : CudaGraph::kNeverValidated,
                                       std::move(recorded_events));
  } catch (...) {
    (void)api_.graph_exec_destroy(exec);
    throw;
  }
  return Status::ok();
}

bool CudaStream::is_capturing() const {
  return capturing_.load(std::memory_order_acquire) || captured_by_owner();
}

bool CudaStream::capture_is_foreign() const {
  return !capturing_.load(std::memory_order_acquire) && captured_by_owner();
}

Status CudaStream::replay(const Graph &graph) {
  const auto *cuda_graph = dynamic_cast<const CudaGraph *>(&graph);
  if (cuda_graph == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         "stream replay of a graph that the CUDA backend did not capture");
  }
  if (&cuda_graph->device() != &device_) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         "stream replay of a graph captured on a different device");
  }
  // No stream lock: the capture flag and the sticky failure are thread-safe, and the graph's
  // launch mutex serializes launches of its executable graph.
  switch (capture_now()) {
    case Capture::kOwn:
      return capturing_error("replay");
    case Capture::kForeign:
      return captured_by_owner_error("replay");
    case Capture::kNone:
      break;
  }
  RRT_RETURN_IF_ERROR(cuda_graph->check_addresses());
  if (failure_->is_pending()) {
    for (CudaEvent *event : cuda_graph->recorded_events()) {
      const cudaError_t recorded = api_.event_record_with_flags(event->handle(), stream_, 0);
      if (recorded != cudaSuccess) {
        (void)api_.get_last_error();
        return cuda_status(api_, recorded, "cudaEventRecordWithFlags");
      }
      event->set_carried(failure_, failure_->pending_serial());
    }
    return Status::ok();
  }
  // Read before the launch: a failure of work another thread queues after it must not ride on
  // the graph's records.
  const std::uint64_t serial = failure_->pending_serial();
  Status launched = cuda_graph->launch(stream_);
  if (!launched.is_ok()) {
    (void)api_.get_last_error();
    failure_->fail(launched);
    return launched;
  }
  for (CudaEvent *event : cuda_graph->recorded_events()) {
    event->set_carried(failure_, serial);
  }
  return Status::ok();
}

}  // namespace replayrt::cuda
