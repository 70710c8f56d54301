/* replayrt.hpp: a header-only C++17 API over the C ABI (replayrt.h), which stays the one
   contract: every call here is one or a few calls of it, with the same semantics, and the C
   header's comments are the reference for what each does.

   What this layer adds:
   - Owners. Context, Stream, Event, Graph, Run, DeviceBuffer and DeviceRegistration are
     move-only owners of a C handle or registration. Every owner made from a context shares that
     context's state, so the context is destroyed only after its last stream, event, graph, run,
     buffer and registration: no handle can outlive its context. A graph also holds every event
     its capture recorded or waited on (the C ABI refuses to destroy those while the graph
     lives), so owners may go in any order.
   - Errors. A failing C call throws rrt::Error, which carries the code, the growth point, the
     requested and frozen bytes of rrt_last_error and the whole message (rrt_last_error_message,
     which needs a library of ABI 1.4 or later). Only constructors and member functions throw;
     destructors never do:
     a destructor's failure is what the explicit call would have thrown (Stream::destroy,
     DeviceBuffer::free, DeviceRegistration::unregister, Run::finalize report it), and is
     otherwise dropped. A call on an empty, freed or moved-from owner throws rrt::Error
     (RRT_ERR_INVALID_ARGUMENT, as the C ABI answers a null handle).
   - A callable builder (CallableBuilder): parameters, intermediates, scalars, views and device
     values by name, tasks by kernel name, resolved against a context when the descriptor is
     made (Context::prepare, Context::fit_kernel_config). A refused declaration (a taken name,
     a bad shape) throws and changes nothing.
   - A capture scope: Stream::capture(body) ends the capture on every path and returns the
     graph; an exception from the body discards the capture and propagates.
   - Native interop (CUDA contexts): Context::wrap_stream, Stream::native_handle and
     Context::register_foreign (foreign device memory as a DeviceRegistration).

   Thread safety: as the C ABI's. An owner is not itself synchronized: share one between
   threads only as the C call it wraps allows (a stream's enqueues are thread-safe; moving or
   destroying an owner while another thread uses it is not). */
#ifndef REPLAYRT_REPLAYRT_HPP_
#define REPLAYRT_REPLAYRT_HPP_

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <replayrt/replayrt.h>

namespace rrt {

/* ---- errors ------------------------------------------------------------------------- */

/* The one exception type of this API: a C call returned `code()`. */
class Error : public std::runtime_error {
 public:
  /* `message` is the whole message; the detail's own is cut to its fixed field. */
  Error(const rrt_error_detail_t &detail, const std::string &message)
      : std::runtime_error(message.empty() ? std::string(rrt_status_name(detail.code)) : message),
        detail_(detail) {}

  rrt_status_t code() const noexcept { return detail_.code; }
  /* "RRT_ERR_OUT_OF_MEMORY", ...; static storage. */
  const char *status_name() const noexcept { return rrt_status_name(detail_.code); }
  /* A capacity refusal's growth point, requested and frozen bytes; RRT_GROWTH_NONE and 0
     otherwise. */
  rrt_growth_point_t growth_point() const noexcept { return detail_.growth_point; }
  /* "RRT_GROWTH_ARENA_GM_HEAP", ..., "RRT_GROWTH_NONE" (rrt_growth_point_name, which needs a
     library of ABI 1.5 or later); static storage. */
  const char *growth_point_name() const noexcept {
    return rrt_growth_point_name(detail_.growth_point);
  }
  std::uint64_t requested_bytes() const noexcept { return detail_.requested_bytes; }
  std::uint64_t frozen_bytes() const noexcept { return detail_.capacity_bytes; }
  const rrt_error_detail_t &detail() const noexcept { return detail_; }

 private:
  rrt_error_detail_t detail_;
};

namespace detail {

/* Throws the calling thread's recorded failure when `status` is not RRT_OK. A detail that
   does not belong to this status (it cannot happen through replayrt, which records every
   failure it returns) is replaced by the status name alone. */
inline void check(rrt_status_t status) {
  if (status == RRT_OK) {
    return;
  }
  rrt_error_detail_t detail{};
  if (rrt_last_error(&detail) != status) {
    detail = rrt_error_detail_t{};
    detail.code = status;
    detail.growth_point = RRT_GROWTH_NONE;
    throw Error(detail, std::string());
  }
  std::size_t length = 0;
  if (rrt_last_error_message(nullptr, 0, &length) != RRT_OK) {
    throw Error(detail, detail.message);
  }
  std::string message(length + 1, '\0');
  (void)rrt_last_error_message(&message[0], message.size(), &length);
  message.resize(length);
  throw Error(detail, message);
}

/* A mistake this layer sees itself, before any C call: RRT_ERR_INVALID_ARGUMENT with
   `message` (cut to the detail's fixed field there, whole in what()). */
inline Error invalid_argument(const std::string &message) {
  rrt_error_detail_t detail{};
  detail.code = RRT_ERR_INVALID_ARGUMENT;
  detail.growth_point = RRT_GROWTH_NONE;
  const std::size_t length = std::min(message.size(), sizeof detail.message - 1);
  std::copy_n(message.begin(), length, detail.message);
  return {detail, message};
}

/* The state every owner made from one context shares; the last one destroys the context. */
class ContextState {
 public:
  explicit ContextState(rrt_context_t handle) noexcept
      : handle_(handle), created_(std::chrono::steady_clock::now()) {}
  ~ContextState() { (void)rrt_context_destroy(handle_); }
  ContextState(const ContextState &) = delete;
  ContextState &operator=(const ContextState &) = delete;
  ContextState(ContextState &&) = delete;
  ContextState &operator=(ContextState &&) = delete;
  rrt_context_t handle() const noexcept { return handle_; }
  /* When this owner state was made: with the handle, it tells this context from one destroyed
     earlier at the same address. */
  std::chrono::steady_clock::time_point created() const noexcept { return created_; }

 private:
  rrt_context_t handle_;
  std::chrono::steady_clock::time_point created_;
};

/* The context handle of an owner's state; null for an empty owner (none), which the C ABI
   refuses with RRT_ERR_INVALID_ARGUMENT. */
inline rrt_context_t handle_of(const std::shared_ptr<ContextState> &context) noexcept {
  return context != nullptr ? context->handle() : nullptr;
}

/* The task timings `read` (rrt_run_profile or rrt_context_profile bound to its handle)
   reports, sized by asking it for the count first. A launch that completes between the two
   reads may change the count: a larger one is read again into room for it, so every record
   returned is one the C call wrote. */
template <typename Read>
std::vector<rrt_task_timing_t> read_task_timings(Read &&read) {
  std::uint32_t count = 0;
  check(read(nullptr, 0, &count));
  std::vector<rrt_task_timing_t> timings;
  for (;;) {
    timings.resize(count);
    std::uint32_t reported = 0;
    check(read(timings.data(), count, &reported));
    if (reported <= count) {
      timings.resize(reported);
      return timings;
    }
    count = reported;
  }
}

/* An event's handle, shared by its owner and the graphs that record or wait on it. */
class EventState {
 public:
  EventState(std::shared_ptr<ContextState> context, rrt_event_t handle) noexcept
      : context_(std::move(context)), handle_(handle) {}
  ~EventState() { (void)rrt_event_destroy(handle_); }
  EventState(const EventState &) = delete;
  EventState &operator=(const EventState &) = delete;
  EventState(EventState &&) = delete;
  EventState &operator=(EventState &&) = delete;
  rrt_event_t handle() const noexcept { return handle_; }

 private:
  std::shared_ptr<ContextState> context_;
  rrt_event_t handle_;
};

}  // namespace detail

/* ---- arguments ---------------------------------------------------------------------- */

class DeviceMemory;

/* The tensors and scalars of one run or launch, in parameter order (rrt_run_args_t). The
   arrays a host tensor names must stay valid until the work that reads or writes them is done,
   and for a captured launch, for every replay of its graph. */
class Args {
 public:
  Args &host(void *data, std::size_t bytes) {
    tensors_.push_back({data, bytes, RRT_SPACE_HOST});
    return *this;
  }
  template <typename T>
  Args &host(std::vector<T> &data) {
    return host(data.data(), data.size() * sizeof(T));
  }
  Args &device(void *address, std::size_t bytes) {
    tensors_.push_back({address, bytes, RRT_SPACE_DEVICE});
    return *this;
  }
  /* A DeviceBuffer's or a DeviceRegistration's whole memory. */
  inline Args &device(const DeviceMemory &memory);
  Args &scalar(std::uint64_t value) {
    scalars_.push_back(value);
    return *this;
  }
  Args &scalar_f32(float value) { return scalar(rrt_scalar_from_f32(value)); }

  /* Valid until this Args changes or is destroyed. */
  const rrt_run_args_t *raw() {
    raw_ = rrt_run_args_t{};
    raw_.struct_size = sizeof raw_;
    raw_.num_tensors = static_cast<std::uint32_t>(tensors_.size());
    raw_.tensors = tensors_.data();
    raw_.num_scalars = static_cast<std::uint32_t>(scalars_.size());
    raw_.scalars = scalars_.data();
    return &raw_;
  }

 private:
  std::vector<rrt_tensor_arg_t> tensors_;
  std::vector<std::uint64_t> scalars_;
  rrt_run_args_t raw_{};
};

/* ---- owners ------------------------------------------------------------------------- */

class Context;
class Stream;

/* DEVICE tensor memory of a context: memory it allocated (DeviceBuffer) or memory it admitted
   (DeviceRegistration). Args::device and the copies take either. The base of those two owners,
   never an owner by itself. */
class DeviceMemory {
 public:
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;

  void *data() const noexcept { return address_; }
  std::size_t size() const noexcept { return bytes_; }
  explicit operator bool() const noexcept { return address_ != nullptr; }

  /* Synchronous copies (rrt_memcpy_h2d / _d2h with no stream): not ordered with queued work. */
  void upload(const void *source, std::size_t bytes, std::size_t offset = 0) const {
    detail::check(rrt_memcpy_h2d(context_handle(), static_cast<std::byte *>(address_) + offset,
                                 source, bytes, nullptr));
  }
  void download(void *destination, std::size_t bytes, std::size_t offset = 0) const {
    detail::check(rrt_memcpy_d2h(context_handle(), destination,
                                 static_cast<const std::byte *>(address_) + offset, bytes,
                                 nullptr));
  }
  template <typename T>
  void upload(const std::vector<T> &source) const {
    upload(source.data(), source.size() * sizeof(T));
  }
  template <typename T>
  void download(std::vector<T> &destination) const {
    download(destination.data(), destination.size() * sizeof(T));
  }

 protected:
  DeviceMemory() = default;
  DeviceMemory(std::shared_ptr<detail::ContextState> context, void *address,
               std::size_t bytes) noexcept
      : context_(std::move(context)), address_(address), bytes_(bytes) {}
  ~DeviceMemory() = default;
  DeviceMemory(DeviceMemory &&other) noexcept
      : context_(std::move(other.context_)),
        address_(std::exchange(other.address_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  /* Takes `other`'s memory; the owner has let go of its own first. */
  DeviceMemory &operator=(DeviceMemory &&other) noexcept {
    context_ = std::move(other.context_);
    address_ = std::exchange(other.address_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    return *this;
  }

  rrt_context_t context_handle() const noexcept { return detail::handle_of(context_); }
  /* Empties the owner (after it freed or unregistered the memory). */
  void clear() noexcept {
    address_ = nullptr;
    bytes_ = 0;
    context_.reset();
  }

 private:
  std::shared_ptr<detail::ContextState> context_;
  void *address_ = nullptr;
  std::size_t bytes_ = 0;
};

inline Args &Args::device(const DeviceMemory &memory) {
  return device(memory.data(), memory.size());
}

/* Device memory the caller owns (rrt_device_alloc): freed when the owner is destroyed or by
   free(), which first waits for the work queued on the context's streams. */
class DeviceBuffer : public DeviceMemory {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&other) noexcept = default;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    if (this != &other) {
      release();
      DeviceMemory::operator=(std::move(other));
    }
    return *this;
  }

  /* Frees now and throws what rrt_device_free returns; the owner is empty afterwards either
     way. */
  void free() {
    if (!*this) {
      return;
    }
    const rrt_status_t status = rrt_device_free(context_handle(), data());
    clear();
    detail::check(status);
  }

 private:
  friend class Context;
  DeviceBuffer(std::shared_ptr<detail::ContextState> context, void *address, std::size_t bytes)
      : DeviceMemory(std::move(context), address, bytes) {}
  void release() noexcept {
    if (*this) {
      (void)rrt_device_free(context_handle(), data());
      clear();
    }
  }
};

/* Device memory replayrt did not allocate (another library's: a PyTorch tensor's storage, an
   RMM buffer), admitted as DEVICE tensor memory of the context for as long as this owner holds
   it (rrt_device_register; CUDA contexts only). Runs and launches take it, captures record it
   and replays check it like a DeviceBuffer. The memory stays its allocator's: keep it
   allocated while registered. The registration ends when the owner is destroyed or by
   unregister(); every graph that captured the memory is stale from then on
   (RRT_ERR_STALE_ADDRESS at replay). Ending it first waits for the work queued on the
   context's streams, as rrt_device_unregister does, so the memory can be freed once it
   returns. */
class DeviceRegistration : public DeviceMemory {
 public:
  DeviceRegistration() = default;
  ~DeviceRegistration() { release(); }
  DeviceRegistration(const DeviceRegistration &) = delete;
  DeviceRegistration &operator=(const DeviceRegistration &) = delete;
  DeviceRegistration(DeviceRegistration &&other) noexcept = default;
  DeviceRegistration &operator=(DeviceRegistration &&other) noexcept {
    if (this != &other) {
      release();
      DeviceMemory::operator=(std::move(other));
    }
    return *this;
  }

  /* Ends the registration now and throws what rrt_device_unregister returns; the owner is
     empty afterwards either way. */
  void unregister() {
    if (!*this) {
      return;
    }
    const rrt_status_t status = rrt_device_unregister(context_handle(), data());
    clear();
    detail::check(status);
  }

 private:
  friend class Context;
  DeviceRegistration(std::shared_ptr<detail::ContextState> context, void *address,
                     std::size_t bytes)
      : DeviceMemory(std::move(context), address, bytes) {}
  void release() noexcept {
    if (*this) {
      (void)rrt_device_unregister(context_handle(), data());
      clear();
    }
  }
};

class Event {
 public:
  Event() = default;
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  Event(Event &&) noexcept = default;
  Event &operator=(Event &&) noexcept = default;
  ~Event() = default;

  void synchronize() const { detail::check(rrt_event_synchronize(handle())); }
  bool query() const {
    int done = 0;
    detail::check(rrt_event_query(handle(), &done));
    return done != 0;
  }
  rrt_event_t handle() const noexcept { return state_ != nullptr ? state_->handle() : nullptr; }
  explicit operator bool() const noexcept { return state_ != nullptr; }

 private:
  friend class Context;
  friend class Stream;
  explicit Event(std::shared_ptr<detail::EventState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::EventState> state_;
};

/* A captured graph (rrt_stream_end_capture). It holds its context and the events its capture
   recorded or waited on. Host arrays a captured launch or copy reads must outlive it. */
class Graph {
 public:
  Graph() = default;
  ~Graph() { release(); }
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  Graph(Graph &&other) noexcept
      : context_(std::move(other.context_)),
        events_(std::move(other.events_)),
        handle_(std::exchange(other.handle_, nullptr)) {}
  Graph &operator=(Graph &&other) noexcept {
    if (this != &other) {
      release();
      context_ = std::move(other.context_);
      events_ = std::move(other.events_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  inline void replay(const Stream &stream) const;
  rrt_graph_t handle() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  friend class Stream;
  Graph(std::shared_ptr<detail::ContextState> context,
        std::vector<std::shared_ptr<detail::EventState>> events, rrt_graph_t handle)
      : context_(std::move(context)), events_(std::move(events)), handle_(handle) {}
  void release() noexcept {
    if (handle_ != nullptr) {
      (void)rrt_graph_destroy(handle_);
      handle_ = nullptr;
    }
    events_.clear();
    context_.reset();
  }

  std::shared_ptr<detail::ContextState> context_;
  std::vector<std::shared_ptr<detail::EventState>> events_;
  rrt_graph_t handle_ = nullptr;
};

class Stream {
 public:
  Stream() = default;
  ~Stream() { (void)destroy_noexcept(); }
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  Stream(Stream &&other) noexcept
      : context_(std::move(other.context_)),
        captured_events_(std::move(other.captured_events_)),
        handle_(std::exchange(other.handle_, nullptr)),
        capturing_(std::exchange(other.capturing_, false)) {}
  Stream &operator=(Stream &&other) noexcept {
    if (this != &other) {
      (void)destroy_noexcept();
      context_ = std::move(other.context_);
      captured_events_ = std::move(other.captured_events_);
      handle_ = std::exchange(other.handle_, nullptr);
      capturing_ = std::exchange(other.capturing_, false);
    }
    return *this;
  }

  void synchronize() const { detail::check(rrt_stream_synchronize(handle_)); }
  bool query() const {
    int done = 0;
    detail::check(rrt_stream_query(handle_, &done));
    return done != 0;
  }
  void record(const Event &event) {
    make_room_for_a_note();
    detail::check(rrt_event_record(event.handle(), handle_));
    note_captured(event);
  }
  void wait(const Event &event) {
    make_room_for_a_note();
    detail::check(rrt_stream_wait_event(handle_, event.handle()));
    note_captured(event);
  }
  /* Queued copies (rrt_memcpy_h2d / _d2h on this stream). Inside a capture they are recorded,
     and the host array must stay valid for every replay. */
  void upload(const DeviceMemory &destination, const void *source, std::size_t bytes,
              std::size_t offset = 0) const {
    detail::check(rrt_memcpy_h2d(detail::handle_of(context_),
                                 static_cast<std::byte *>(destination.data()) + offset, source,
                                 bytes, handle_));
  }
  void download(void *destination, const DeviceMemory &source, std::size_t bytes,
                std::size_t offset = 0) const {
    detail::check(rrt_memcpy_d2h(detail::handle_of(context_), destination,
                                 static_cast<const std::byte *>(source.data()) + offset, bytes,
                                 handle_));
  }

  /* Captures what `body` enqueues on this stream and returns the graph. The capture ends on
     every path: when `body` throws, the capture is ended, its graph (if any) discarded, and the
     exception propagates; when the capture ends without a graph, rrt::Error. */
  template <typename Body>
  Graph capture(Body &&body) {
    begin_capture();
    try {
      std::forward<Body>(body)();
    } catch (...) {
      discard_capture();
      throw;
    }
    return end_capture();
  }

  /* The two halves of capture(body), for a caller whose capture does not fit one scope (a
     binding's context manager). Begin and end must pair on this owner: record() and wait()
     note their events for the graph only between them, and a capture begun on the handle
     through the C ABI is not this owner's to end. end_capture() throws rrt::Error when it makes
     no graph; the capture has then ended, except after RRT_ERR_INTERNAL (a host out-of-memory),
     which leaves it going on the simulator: the owner then still counts itself capturing, so
     end_capture() can be called again, and discard_capture() or the destructor ends it (on
     CUDA, where that failure already ended it, they find nothing to end). discard_capture() ends a
     capture and destroys its graph, and does nothing when no capture of this owner is in progress;
     the destructor and destroy() call it. When its end of the capture fails with
     RRT_ERR_INTERNAL the owner likewise still counts itself capturing, and a later
     discard_capture() can end it. */
  void begin_capture() {
    detail::check(rrt_stream_begin_capture(handle_));
    capturing_ = true;
    captured_events_.clear();
  }
  Graph end_capture() {
    rrt_graph_t graph = nullptr;
    const rrt_status_t ended = rrt_stream_end_capture(handle_, &graph);
    if (ended == RRT_ERR_INTERNAL) {
      detail::check(ended);
    }
    capturing_ = false;
    std::vector<std::shared_ptr<detail::EventState>> events = std::move(captured_events_);
    captured_events_.clear();
    detail::check(ended);
    return {context_, std::move(events), graph};
  }
  void discard_capture() noexcept {
    if (!capturing_) {
      return;
    }
    rrt_graph_t graph = nullptr;
    const rrt_status_t ended = rrt_stream_end_capture(handle_, &graph);
    if (ended == RRT_ERR_INTERNAL) {
      return;
    }
    capturing_ = false;
    if (ended == RRT_OK) {
      (void)rrt_graph_destroy(graph);
    }
    captured_events_.clear();
  }

  /* Destroys the stream now and throws a failure that was pending on it (rrt_stream_destroy);
     the owner is empty afterwards either way, except when a capture of this owner cannot be
     ended (RRT_ERR_INTERNAL, host out of memory; see discard_capture): the stream, which
     cannot be destroyed while it captures, then stays, and destroy() can be called again. The
     destructor, which cannot report that, leaves such a stream and its context behind. */
  void destroy() { detail::check(destroy_noexcept()); }

  /* Whether a capture this owner began (begin_capture or capture) is in progress. */
  bool capturing() const noexcept { return capturing_; }
  /* The native stream behind this one (rrt_stream_native_handle; CUDA: its cudaStream_t, or
     the one a wrapping stream wraps). RRT_ERR_UNSUPPORTED on the simulator. */
  void *native_handle() const {
    void *native = nullptr;
    detail::check(rrt_stream_native_handle(handle_, &native));
    return native;
  }
  rrt_stream_t handle() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  friend class Context;
  Stream(std::shared_ptr<detail::ContextState> context, rrt_stream_t handle)
      : context_(std::move(context)), handle_(handle) {}

  /* Reserved before the C call, so that noting an event it recorded or waited on inside a
     capture cannot fail once the capture holds the call. */
  void make_room_for_a_note() {
    if (capturing_ && captured_events_.size() == captured_events_.capacity()) {
      captured_events_.reserve(captured_events_.empty() ? 4 : 2 * captured_events_.size());
    }
  }
  void note_captured(const Event &event) noexcept {
    if (capturing_) {
      captured_events_.push_back(event.state_);
    }
  }
  rrt_status_t destroy_noexcept() noexcept {
    if (handle_ == nullptr) {
      return RRT_OK;
    }
    discard_capture();
    if (capturing_) {
      return RRT_ERR_INTERNAL;
    }
    const rrt_status_t status = rrt_stream_destroy(handle_);
    handle_ = nullptr;
    context_.reset();
    return status;
  }

  std::shared_ptr<detail::ContextState> context_;
  std::vector<std::shared_ptr<detail::EventState>> captured_events_;
  rrt_stream_t handle_ = nullptr;
  bool capturing_ = false;
};

inline void Graph::replay(const Stream &stream) const {
  detail::check(rrt_graph_replay(handle_, stream.handle()));
}

/* A program-mode run (rrt_run_prepare): launch, wait, then finalize (the destructor finalizes
   one that is still prepared or launched, waiting for it first). */
class Run {
 public:
  Run() = default;
  ~Run() { (void)finalize_noexcept(); }
  Run(const Run &) = delete;
  Run &operator=(const Run &) = delete;
  Run(Run &&other) noexcept
      : context_(std::move(other.context_)), handle_(std::exchange(other.handle_, nullptr)) {}
  Run &operator=(Run &&other) noexcept {
    if (this != &other) {
      (void)finalize_noexcept();
      context_ = std::move(other.context_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  /* No stream: the context's own stream of the run's slot. On a finalized, moved-from or
     empty run, these four throw rrt::Error (RRT_ERR_INVALID_ARGUMENT) saying so. */
  void launch() { detail::check(rrt_run_launch(live("launch"), nullptr)); }
  void launch(const Stream &stream) {
    detail::check(rrt_run_launch(live("launch"), stream.handle()));
  }
  void wait() { detail::check(rrt_run_wait(live("wait"))); }
  /* Needs profiling on and a completed run. */
  std::vector<rrt_task_timing_t> profile() const {
    const rrt_run_t run = live("profile");
    return detail::read_task_timings(
        [&](rrt_task_timing_t *out, std::uint32_t capacity, std::uint32_t *count) {
          return rrt_run_profile(run, out, capacity, count);
        });
  }
  /* Releases the run's slot now and throws what rrt_run_finalize returns. */
  void finalize() { detail::check(finalize_noexcept()); }

  rrt_run_t handle() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  friend class Context;
  Run(std::shared_ptr<detail::ContextState> context, rrt_run_t handle)
      : context_(std::move(context)), handle_(handle) {}
  rrt_run_t live(const char *call) const {
    if (handle_ == nullptr) {
      throw detail::invalid_argument(std::string("Run::") + call +
                                     ": the run was finalized or moved from (or is empty)");
    }
    return handle_;
  }
  rrt_status_t finalize_noexcept() noexcept {
    if (handle_ == nullptr) {
      return RRT_OK;
    }
    const rrt_status_t status = rrt_run_finalize(handle_);
    handle_ = nullptr;
    context_.reset();
    return status;
  }

  std::shared_ptr<detail::ContextState> context_;
  rrt_run_t handle_ = nullptr;
};

/* ---- callables ---------------------------------------------------------------------- */

/* One operand of a task: a tensor (parameter, intermediate, view), a per-run scalar, an
   immediate or a device value. Made by a CallableBuilder, or by immediate(). */
class Operand {
 public:
  /* A scalar fixed in the callable: 32 bits (RRT_OPERAND_IMMEDIATE keeps its value in the
     operand's index). */
  static Operand immediate(std::uint32_t value) {
    return Operand(rrt_operand_t{RRT_OPERAND_IMMEDIATE, value});
  }
  static Operand immediate_f32(float value) {
    return immediate(static_cast<std::uint32_t>(rrt_scalar_from_f32(value)));
  }
  const rrt_operand_t &raw() const noexcept { return raw_; }

 private:
  friend class CallableBuilder;
  explicit Operand(rrt_operand_t raw) : raw_(raw) {}
  rrt_operand_t raw_;
};

/* Builds an rrt_callable_desc_t (ABI 1.2: views and device values included). Names are for
   lookup (operator[]) and errors; kernels are named and resolved against the context the
   descriptor is made for. Shapes have 1..RRT_MAX_DIMS dimensions. A mistake the builder sees
   itself (a shape out of range, a duplicate name, a view or device value over the wrong kind
   of operand, a name that is not declared) throws rrt::Error with RRT_ERR_INVALID_ARGUMENT
   before any C call; everything else is the C ABI's to refuse, also as rrt::Error. */
class CallableBuilder {
 public:
  /* A shape: its extents, outermost first. Every call that takes one takes a braced list or a
     std::vector (a shape built at run time). */
  using Shape = std::vector<std::uint64_t>;

  explicit CallableBuilder(rrt_bind_strategy_t bind = RRT_BIND_DEVICE_BUILD) : bind_(bind) {}

  Operand param(std::string name, rrt_dtype_t dtype, const Shape &shape, rrt_direction_t direction,
                rrt_param_space_t space = RRT_PARAM_SPACE_ANY) {
    return add_named(std::move(name), RRT_OPERAND_PARAM, [&] {
      rrt_tensor_desc_t tensor = make_tensor(dtype, shape);
      tensor.direction = direction;
      tensor.space = space;
      params_.push_back(tensor);
      return params_.size() - 1;
    });
  }
  Operand param(std::string name, rrt_dtype_t dtype, std::initializer_list<std::uint64_t> shape,
                rrt_direction_t direction, rrt_param_space_t space = RRT_PARAM_SPACE_ANY) {
    return param(std::move(name), dtype, Shape(shape), direction, space);
  }
  Operand intermediate(std::string name, rrt_dtype_t dtype, const Shape &shape) {
    return add_named(std::move(name), RRT_OPERAND_INTERMEDIATE, [&] {
      intermediates_.push_back(make_tensor(dtype, shape));
      return intermediates_.size() - 1;
    });
  }
  Operand intermediate(std::string name, rrt_dtype_t dtype,
                       std::initializer_list<std::uint64_t> shape) {
    return intermediate(std::move(name), dtype, Shape(shape));
  }
  /* A scalar whose value each run or launch passes (Args::scalar), in declaration order. */
  Operand scalar(std::string name) { return add_scalar(std::move(name), std::nullopt); }
  /* The same, declared to hold a value of `dtype`: RRT_DTYPE_F32 (Args::scalar_f32), _I32 or
     _I64 (Args::scalar, two's complement); another dtype throws rrt::Error
     (RRT_ERR_INVALID_ARGUMENT) and declares nothing. The C ABI's scalars are 64 bits without a
     dtype: the dtype tells a wrapper such as the Python package how to convert an argument
     (scalar_dtypes). */
  Operand scalar(std::string name, rrt_dtype_t dtype) {
    require(dtype == RRT_DTYPE_F32 || dtype == RRT_DTYPE_I32 || dtype == RRT_DTYPE_I64,
            "a scalar's dtype must be F32, I32 or I64");
    return add_scalar(std::move(name), dtype);
  }
  /* `shape` elements of `base` (a parameter or intermediate), `offset` elements in. */
  Operand view(std::string name, const Operand &base, const Shape &shape, std::uint64_t offset) {
    return add_view(std::move(name), base, shape, offset, -1, 0, 0);
  }
  Operand view(std::string name, const Operand &base, std::initializer_list<std::uint64_t> shape,
               std::uint64_t offset) {
    return view(std::move(name), base, Shape(shape), offset);
  }
  /* As above, plus `stride` elements per unit of `offset_value` (an I32 or I64 device value)
     read when the task runs, which must lie in [0, max]. */
  Operand view(std::string name, const Operand &base, const Shape &shape, std::uint64_t offset,
               const Operand &offset_value, std::uint64_t stride, std::uint64_t max) {
    require(offset_value.raw().kind == RRT_OPERAND_DEVICE_VALUE,
            "a view's offset value must be a device value");
    return add_view(std::move(name), base, shape, offset,
                    static_cast<std::int32_t>(offset_value.raw().index), stride, max);
  }
  Operand view(std::string name, const Operand &base, std::initializer_list<std::uint64_t> shape,
               std::uint64_t offset, const Operand &offset_value, std::uint64_t stride,
               std::uint64_t max) {
    return view(std::move(name), base, Shape(shape), offset, offset_value, stride, max);
  }
  /* Element `element` of `source` (a parameter or intermediate), read when the task runs. */
  Operand device_value(std::string name, const Operand &source, std::uint64_t element) {
    require(is_tensor_base(source), "a device value's source must be a parameter or intermediate");
    return add_named(std::move(name), RRT_OPERAND_DEVICE_VALUE, [&] {
      device_values_.push_back({source.raw().kind, source.raw().index, element});
      return device_values_.size() - 1;
    });
  }

  /* A task of the kernel registered (or built in) under `kernel`, in program order: tensors
     first in the kernel's order, then scalars. */
  CallableBuilder &task(std::string kernel, const std::vector<Operand> &operands) {
    Task task;
    task.kernel = std::move(kernel);
    for (const Operand &operand : operands) {
      task.operands.push_back(operand.raw());
    }
    tasks_.push_back(std::move(task));
    return *this;
  }
  CallableBuilder &task(std::string kernel, std::initializer_list<Operand> operands) {
    return task(std::move(kernel), std::vector<Operand>(operands));
  }

  /* The operand declared under `name`; rrt::Error (RRT_ERR_INVALID_ARGUMENT) when there is
     none. */
  Operand operator[](const std::string &name) const {
    for (const Named &named : names_) {
      if (named.name == name) {
        return named.operand;
      }
    }
    throw detail::invalid_argument("rrt::CallableBuilder: no operand named '" + name + "'");
  }
  std::size_t task_count() const noexcept { return tasks_.size(); }
  /* The direction of each parameter, in declaration order. */
  std::vector<rrt_direction_t> param_directions() const {
    return each_param(&rrt_tensor_desc_t::direction);
  }
  /* The dtype of each parameter, in declaration order. */
  std::vector<rrt_dtype_t> param_dtypes() const { return each_param(&rrt_tensor_desc_t::dtype); }
  /* The declared dtype of each scalar, in declaration order (none for an untyped scalar). */
  const std::vector<std::optional<rrt_dtype_t>> &scalar_dtypes() const noexcept {
    return scalar_dtypes_;
  }
  /* The kernel name of each task, in program order. */
  std::vector<std::string> task_kernels() const {
    std::vector<std::string> kernels;
    kernels.reserve(tasks_.size());
    for (const Task &task : tasks_) {
      kernels.push_back(task.kernel);
    }
    return kernels;
  }

  /* The descriptor with its kernels looked up in `context` (rrt_kernel_lookup; an unknown name
     throws rrt::Error). Valid until this builder changes or is destroyed. */
  inline const rrt_callable_desc_t &desc(const Context &context);

 private:
  struct Task {
    std::string kernel;
    std::vector<rrt_operand_t> operands;
  };
  struct Named {
    std::string name;
    Operand operand;
  };

  static void require(bool condition, const char *what) {
    if (!condition) {
      throw detail::invalid_argument(std::string("rrt::CallableBuilder: ") + what);
    }
  }
  static bool is_tensor_base(const Operand &operand) {
    return operand.raw().kind == RRT_OPERAND_PARAM ||
           operand.raw().kind == RRT_OPERAND_INTERMEDIATE;
  }
  static void copy_shape(const Shape &shape, std::uint32_t *ndim, std::uint64_t *out) {
    require(shape.size() >= 1 && shape.size() <= RRT_MAX_DIMS,
            "a shape needs 1 to RRT_MAX_DIMS dimensions");
    *ndim = static_cast<std::uint32_t>(shape.size());
    std::size_t i = 0;
    for (const std::uint64_t extent : shape) {
      out[i++] = extent;
    }
  }
  /* One field of each parameter's descriptor, in declaration order. */
  template <typename Field>
  std::vector<Field> each_param(Field rrt_tensor_desc_t::*field) const {
    std::vector<Field> values;
    values.reserve(params_.size());
    for (const rrt_tensor_desc_t &param : params_) {
      values.push_back(param.*field);
    }
    return values;
  }
  static rrt_tensor_desc_t make_tensor(rrt_dtype_t dtype, const Shape &shape) {
    rrt_tensor_desc_t tensor{};
    tensor.dtype = dtype;
    copy_shape(shape, &tensor.ndim, tensor.shape);
    tensor.direction = RRT_DIR_IN;
    tensor.space = RRT_PARAM_SPACE_ANY;
    return tensor;
  }
  /* Declares an operand named `name`: refused (changing nothing) when the name is taken;
     otherwise `append` adds the operand to its list and returns its index there. A refusal
     inside `append` (a bad shape) changes nothing either. */
  template <typename Append>
  Operand add_named(std::string name, rrt_operand_kind_t kind, Append append) {
    for (const Named &named : names_) {
      require(named.name != name, "two operands share a name");
    }
    names_.reserve(names_.size() + 1);
    const Operand operand(rrt_operand_t{kind, static_cast<std::uint32_t>(append())});
    names_.push_back({std::move(name), operand});
    return operand;
  }
  Operand add_scalar(std::string name, std::optional<rrt_dtype_t> dtype) {
    scalar_dtypes_.reserve(scalar_dtypes_.size() + 1);
    return add_named(std::move(name), RRT_OPERAND_SCALAR, [&] {
      scalar_dtypes_.push_back(dtype);
      return static_cast<std::size_t>(num_scalars_++);
    });
  }
  Operand add_view(std::string name, const Operand &base, const Shape &shape, std::uint64_t offset,
                   std::int32_t offset_value, std::uint64_t stride, std::uint64_t max) {
    require(is_tensor_base(base), "a view's base must be a parameter or intermediate");
    return add_named(std::move(name), RRT_OPERAND_VIEW, [&] {
      rrt_view_desc_t view{};
      view.base_kind = base.raw().kind;
      view.base_index = base.raw().index;
      copy_shape(shape, &view.ndim, view.shape);
      view.offset = offset;
      view.offset_value = offset_value;
      view.offset_stride = stride;
      view.offset_value_max = max;
      views_.push_back(view);
      return views_.size() - 1;
    });
  }

  rrt_bind_strategy_t bind_;
  std::vector<rrt_tensor_desc_t> params_;
  std::vector<rrt_tensor_desc_t> intermediates_;
  std::vector<rrt_view_desc_t> views_;
  std::vector<rrt_device_value_desc_t> device_values_;
  std::uint32_t num_scalars_ = 0;
  std::vector<std::optional<rrt_dtype_t>> scalar_dtypes_;  // one per scalar
  std::vector<Task> tasks_;
  std::vector<Named> names_;
  std::vector<rrt_task_desc_t> raw_tasks_;
  rrt_callable_desc_t desc_{};
};

/* ---- contexts ----------------------------------------------------------------------- */

/* Context options (rrt_context_options_t) with the defaults of a zeroed struct. */
struct ContextOptions {
  rrt_platform_t platform = RRT_PLATFORM_SIM;
  std::int32_t device_id = 0;
  std::uint32_t device_workers = 0;
  bool profiling = false;
  rrt_wait_policy_t wait_policy = RRT_WAIT_SPIN_THEN_BLOCK;
  std::uint32_t wait_spin_us = 0;
};

/* A callable prepared in a context (rrt_callable_prepare's id), and which context that was: its
   handle and when its owner state was made (ContextState::created), which tells it from a
   context made later at the same address, in this library or another. Ids are per context:
   Context's launch, run and prepare_run throw rrt::Error (RRT_ERR_INVALID_ARGUMENT) for another
   context's, and call nothing. An id made from a raw C ABI id (`CallableId{id}`, no context)
   is passed on unchecked. */
struct CallableId {
  std::int32_t value = -1;
  rrt_context_t context = nullptr;
  std::chrono::steady_clock::time_point context_created{};
};

class Context {
 public:
  explicit Context(const ContextOptions &options = {}) {
    rrt_context_options_t raw{};
    raw.struct_size = sizeof raw;
    raw.platform = options.platform;
    raw.device_id = options.device_id;
    raw.device_workers = options.device_workers;
    raw.profiling = options.profiling ? 1U : 0U;
    raw.wait_policy = options.wait_policy;
    raw.wait_spin_us = options.wait_spin_us;
    rrt_context_t handle = nullptr;
    detail::check(rrt_context_create(&raw, &handle));
    state_ = std::make_shared<detail::ContextState>(handle);
  }

  void program_init() { detail::check(rrt_program_init(handle())); }
  /* Fits a kernel config for every callable the context will prepare (rrt_context_kernel_
     config_fit: with this context's kernel table), raising the profiling shape to at least
     `profiling_tasks` (a graph that captures several launches needs the sum of their tasks).
     A null callable throws rrt::Error (RRT_ERR_INVALID_ARGUMENT). */
  rrt_kernel_config_t fit_kernel_config(const std::vector<CallableBuilder *> &callables,
                                        std::uint32_t profiling_tasks = 0) const {
    std::vector<const rrt_callable_desc_t *> descs;
    for (CallableBuilder *callable : callables) {
      if (callable == nullptr) {
        throw detail::invalid_argument("Context::fit_kernel_config: callables[" +
                                       std::to_string(descs.size()) + "] is null");
      }
      descs.push_back(&callable->desc(*this));
    }
    rrt_kernel_config_t config{};
    config.struct_size = sizeof config;
    detail::check(rrt_context_kernel_config_fit(handle(), descs.data(),
                                                static_cast<std::uint32_t>(descs.size()), &config));
    if (config.profiling_task_capacity < profiling_tasks) {
      config.profiling_task_capacity = profiling_tasks;
    }
    return config;
  }
  void kernel_init(const rrt_kernel_config_t &config) {
    detail::check(rrt_kernel_init(handle(), &config));
  }
  void finalize() { detail::check(rrt_context_finalize(handle())); }
  bool kernel_mode_supported() const { return rrt_kernel_mode_supported(handle()) != 0; }

  std::int32_t kernel(const std::string &name) const {
    std::int32_t id = -1;
    detail::check(rrt_kernel_lookup(handle(), name.c_str(), &id));
    return id;
  }
  std::int32_t register_kernel(const std::string &name, rrt_kernel_fn fn, void *user) {
    std::int32_t id = -1;
    detail::check(rrt_kernel_register(handle(), name.c_str(), fn, user, &id));
    return id;
  }
  CallableId prepare(CallableBuilder &callable) {
    CallableId id;
    detail::check(rrt_callable_prepare(handle(), &callable.desc(*this), &id.value));
    id.context = state_->handle();
    id.context_created = state_->created();
    return id;
  }

  DeviceBuffer allocate(std::size_t bytes) {
    void *address = nullptr;
    detail::check(rrt_device_alloc(handle(), bytes, &address));
    return {state_, address, bytes};
  }
  Stream stream() {
    rrt_stream_t stream = nullptr;
    detail::check(rrt_stream_create(handle(), &stream));
    return {state_, stream};
  }
  /* A Stream over `native`, a stream the caller owns (rrt_stream_wrap_native; CUDA: a
     cudaStream_t of the context's device, such as a torch.cuda.Stream's). `native` must
     outlive the Stream, whose destruction never destroys it. RRT_ERR_UNSUPPORTED on the
     simulator. */
  Stream wrap_stream(void *native) {
    rrt_stream_t stream = nullptr;
    detail::check(rrt_stream_wrap_native(handle(), native, &stream));
    return {state_, stream};
  }
  /* Admits [address, address + bytes), device memory of another allocator, as DEVICE tensor
     memory while the returned owner holds it (rrt_device_register; see DeviceRegistration).
     RRT_ERR_INVALID_ARGUMENT when the range overlaps memory the context tracks or is not
     device memory of its device; RRT_ERR_UNSUPPORTED on the simulator. */
  DeviceRegistration register_foreign(void *address, std::size_t bytes) {
    detail::check(rrt_device_register(handle(), address, bytes));
    return {state_, address, bytes};
  }
  Event event() {
    rrt_event_t event = nullptr;
    detail::check(rrt_event_create(handle(), &event));
    return Event(std::make_shared<detail::EventState>(state_, event));
  }

  /* Kernel mode: one launch on `stream` (rrt_kernel_launch). */
  void launch(CallableId callable, Args &args, const Stream &stream) {
    detail::check(
        rrt_kernel_launch(handle(), own(callable, "launch"), args.raw(), stream.handle()));
  }
  /* Program mode: prepare, launch, wait and finalize (rrt_run). */
  void run(CallableId callable, Args &args) {
    detail::check(rrt_run(handle(), own(callable, "run"), args.raw()));
  }
  /* Program mode: a prepared run; `args` must outlive it. */
  Run prepare_run(CallableId callable, Args &args) {
    rrt_run_t run = nullptr;
    detail::check(rrt_run_prepare(handle(), own(callable, "prepare_run"), args.raw(), &run));
    return {state_, run};
  }

  rrt_stats_t stats() const {
    rrt_stats_t stats{};
    stats.struct_size = sizeof stats;
    detail::check(rrt_context_stats(handle(), &stats));
    return stats;
  }
  /* The most recent completed kernel-mode launch or replay's task timings (profiling on). */
  std::vector<rrt_task_timing_t> profile() const {
    return detail::read_task_timings(
        [&](rrt_task_timing_t *out, std::uint32_t capacity, std::uint32_t *count) {
          return rrt_context_profile(handle(), out, capacity, count);
        });
  }

  /* Null for a moved-from context, which the C ABI refuses (RRT_ERR_INVALID_ARGUMENT). */
  rrt_context_t handle() const noexcept { return detail::handle_of(state_); }

 private:
  /* `callable`'s id, which must be this context's (or unchecked): rrt::Error otherwise. A
     moved-from context's call is left to the C ABI to refuse. */
  std::int32_t own(const CallableId &callable, const char *call) const {
    if (callable.context != nullptr && state_ != nullptr &&
        (callable.context != state_->handle() || callable.context_created != state_->created())) {
      throw detail::invalid_argument(std::string("Context::") + call +
                                     ": the callable was prepared by another context (callable "
                                     "ids are per context)");
    }
    return callable.value;
  }

  std::shared_ptr<detail::ContextState> state_;
};

inline const rrt_callable_desc_t &CallableBuilder::desc(const Context &context) {
  raw_tasks_.clear();
  for (const Task &task : tasks_) {
    raw_tasks_.push_back({context.kernel(task.kernel),
                          static_cast<std::uint32_t>(task.operands.size()), task.operands.data()});
  }
  desc_ = rrt_callable_desc_t{};
  desc_.struct_size = sizeof desc_;
  desc_.bind = bind_;
  desc_.num_params = static_cast<std::uint32_t>(params_.size());
  desc_.params = params_.data();
  desc_.num_intermediates = static_cast<std::uint32_t>(intermediates_.size());
  desc_.intermediates = intermediates_.data();
  desc_.num_scalars = num_scalars_;
  desc_.num_tasks = static_cast<std::uint32_t>(raw_tasks_.size());
  desc_.tasks = raw_tasks_.data();
  desc_.num_views = static_cast<std::uint32_t>(views_.size());
  desc_.views = views_.data();
  desc_.num_device_values = static_cast<std::uint32_t>(device_values_.size());
  desc_.device_values = device_values_.data();
  return desc_;
}

}  // namespace rrt

#endif /* REPLAYRT_REPLAYRT_HPP_ */
