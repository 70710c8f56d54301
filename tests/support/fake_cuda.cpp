#include "support/fake_cuda.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <new>
#include <set>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>

namespace replayrt::testing {

namespace {

constexpr std::size_t kMaxSharedBytes = std::size_t{48} << 10;
constexpr unsigned kMaxBlockThreads = 1024;
constexpr unsigned kMaxGridX = 0x7FFFFFFFU;
constexpr unsigned kMaxGridYZ = 65535;

struct KernelInfo {
  const void *function = nullptr;
  FakeKernel spec;
  bool loaded = true;  // guarded by State::mutex
  std::vector<std::size_t> offsets;
};

struct Event;

struct Node {
  enum class Kind { kCopy, kMemset, kKernel, kRecord, kWait } kind = Kind::kCopy;
  std::vector<Node *> deps;
  void *dst = nullptr;
  const void *src = nullptr;
  std::size_t bytes = 0;
  int value = 0;
  cudaMemcpyKind copy_kind = cudaMemcpyDefault;
  std::shared_ptr<KernelInfo> kernel;
  dim3 grid;
  dim3 block;
  std::size_t shared_bytes = 0;
  std::vector<std::vector<std::byte>> parameters;
  std::vector<void *> parameter_pointers;  // kernelParams as the driver reports it
  std::vector<std::byte> packed;           // the `extra` buffer form
  std::size_t packed_size = 0;
  void *extra[5] = {};
  std::shared_ptr<Event> event;

  void point_at_parameters() {
    parameter_pointers.clear();
    for (auto &blob : parameters) {
      parameter_pointers.push_back(blob.data());
    }
    packed.clear();
    if (kernel) {
      for (std::size_t i = 0; i < parameters.size(); ++i) {
        const std::size_t offset = kernel->offsets[i];
        packed.resize(std::max(packed.size(), offset + parameters[i].size()));
        std::memcpy(packed.data() + offset, parameters[i].data(), parameters[i].size());
      }
    }
    packed_size = packed.size();
    extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    extra[1] = packed.data();
    extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    extra[3] = &packed_size;
    extra[4] = CU_LAUNCH_PARAM_END;
  }
};

struct Graph {
  std::vector<std::unique_ptr<Node>> nodes;

  bool owns(const Node *node) const {
    return std::any_of(nodes.begin(), nodes.end(),
                       [node](const std::unique_ptr<Node> &n) { return n.get() == node; });
  }

  std::unique_ptr<Graph> clone() const {
    auto copy = std::make_unique<Graph>();
    std::unordered_map<const Node *, Node *> map;
    for (const auto &node : nodes) {
      auto twin = std::make_unique<Node>(*node);
      map[node.get()] = twin.get();
      copy->nodes.push_back(std::move(twin));
    }
    for (auto &node : copy->nodes) {
      for (Node *&dep : node->deps) {
        dep = map.at(dep);
      }
      node->point_at_parameters();
    }
    return copy;
  }
};

struct Capture;

struct Event {
  std::uint64_t target = 0;     // the most recent record's sequence number
  std::uint64_t completed = 0;  // the highest record executed
  Capture *captured_in = nullptr;
  std::vector<Node *> capture_deps;
};

struct Stream;

struct Capture {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  std::thread::id thread;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  cudaError_t invalidated = cudaSuccess;
  unsigned long long id = 0;
  Stream *origin = nullptr;
  std::vector<Stream *> members;
};

struct Stream {
  std::deque<std::function<void()>> queue;
  std::uint64_t submitted = 0;
  std::uint64_t completed = 0;
  std::thread worker;
  bool stopping = false;
  Capture *capture = nullptr;
  std::vector<Node *> deps;
  // Edge data cudaStreamUpdateCaptureDependencies gave the dependencies edged_deps, which
  // holds only while deps are still those (any other change of deps makes them default).
  std::vector<Node *> edged_deps;
  std::vector<cudaGraphEdgeData> dep_edges;

  bool has_edge_data() const {
    if (deps != edged_deps) {
      return false;
    }
    return std::any_of(dep_edges.begin(), dep_edges.end(), [](const cudaGraphEdgeData &edge) {
      return edge.type != cudaGraphDependencyTypeDefault || edge.from_port != 0 ||
             edge.to_port != 0;
    });
  }
};

thread_local cudaStreamCaptureMode t_mode = cudaStreamCaptureModeGlobal;
thread_local cudaError_t t_last_error = cudaSuccess;

FakeCuda *g_fake = nullptr;

bool is_legacy(cudaStream_t stream) {
  return stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
}

}  // namespace

struct FakeCuda::State {
  mutable std::recursive_mutex mutex;
  mutable std::condition_variable_any changed;
  std::map<const void *, std::shared_ptr<KernelInfo>> kernels;
  std::map<void *, std::size_t> blocks;
  std::vector<std::pair<void *, std::size_t>> freed;
  std::set<Stream *> streams;
  std::map<Event *, std::shared_ptr<Event>> events;
  std::set<Graph *> graphs;
  std::map<void *, std::shared_ptr<const Graph>> execs;
  std::vector<std::unique_ptr<Capture>> captures;
  std::vector<std::unique_ptr<Graph>> abandoned;  // graphs of captures whose stream died
  std::vector<FakeCuda::LaunchRecord> launch_log;
  std::uint64_t next_capture_id = 1;
  cudaError_t fault = cudaSuccess;  // a sticky device fault
};

namespace {

using Lock = std::unique_lock<std::recursive_mutex>;

FakeCuda::State &st() {
  return g_fake->state();
}

Stream *stream_of(cudaStream_t stream) {
  return reinterpret_cast<Stream *>(stream);
}

Event *event_of(cudaEvent_t event) {
  return reinterpret_cast<Event *>(event);
}

Graph *graph_of(cudaGraph_t graph) {
  return reinterpret_cast<Graph *>(graph);
}

Node *node_of(cudaGraphNode_t node) {
  return reinterpret_cast<Node *>(node);
}

// Records `error` as the calling thread's last error and returns it.
cudaError_t fail(cudaError_t error) {
  if (error != cudaSuccess) {
    t_last_error = error;
  }
  return error;
}

CUresult fail_driver(CUresult error) {
  return error;
}

void invalidate(Capture *capture, cudaError_t why) {
  if (capture != nullptr && capture->invalidated == cudaSuccess) {
    capture->invalidated = why;
  }
}

// A potentially unsafe call (allocation, free, synchronization, queries) made now: outside the
// relaxed mode it is prohibited while a capture that this thread takes part in is active, and it
// invalidates that capture. Requires the lock.
cudaError_t check_unsafe_call() {
  if (t_mode == cudaStreamCaptureModeRelaxed) {
    return cudaSuccess;
  }
  cudaError_t result = cudaSuccess;
  for (const auto &capture : st().captures) {
    if (capture->mode == cudaStreamCaptureModeRelaxed) {
      continue;
    }
    if (capture->thread == std::this_thread::get_id() ||
        (capture->mode == cudaStreamCaptureModeGlobal && t_mode == cudaStreamCaptureModeGlobal)) {
      invalidate(capture.get(), cudaErrorStreamCaptureUnsupported);
      result = cudaErrorStreamCaptureUnsupported;
    }
  }
  return result;
}

// Starts the stream's worker if needed and queues `work` (requires the lock).
void submit(Stream *s, std::function<void()> work) {
  if (!s->worker.joinable()) {
    s->worker = std::thread([s] {
      FakeCuda::State &state = st();
      Lock lock(state.mutex);
      for (;;) {
        state.changed.wait(lock, [s] { return s->stopping || !s->queue.empty(); });
        if (s->queue.empty()) {
          return;
        }
        std::function<void()> next = std::move(s->queue.front());
        s->queue.pop_front();
        lock.unlock();
        next();
        lock.lock();
        ++s->completed;
        state.changed.notify_all();
      }
    });
  }
  s->queue.push_back(std::move(work));
  ++s->submitted;
  st().changed.notify_all();
}

// Adds `node` to the stream's capture after the stream's current dependencies. Every
// allocation comes first, so a host allocation failure (thrown) leaves the capture unchanged.
void capture_node(Stream *s, std::unique_ptr<Node> node) {
  if (s->has_edge_data()) {
    ++g_fake->nodes_added_with_edge_data;
  }
  node->deps = s->deps;
  std::vector<Node *> next_deps{node.get()};
  std::vector<std::unique_ptr<Node>> &nodes = s->capture->graph->nodes;
  nodes.reserve(nodes.size() + 1);
  nodes.push_back(std::move(node));
  s->deps.swap(next_deps);
}

bool faulted() {
  const Lock lock(st().mutex);
  return st().fault != cudaSuccess;
}

void run_kernel(const Node &node) {
  FakeCuda &fake = *g_fake;
  {
    const Lock lock(st().mutex);
    if (st().fault != cudaSuccess) {
      return;
    }
    if (fake.kernel_faults_left.load() > 0) {
      --fake.kernel_faults_left;
      st().fault = cudaErrorIllegalAddress;
      return;
    }
  }
  ++fake.kernel_executions;
  if (node.kernel->spec.run != nullptr) {
    const FakeKernelLaunch launch{node.grid, node.block, node.shared_bytes, node.parameters};
    node.kernel->spec.run(launch, node.kernel->spec.context);
  }
}

void run_copy(const Node &node) {
  if (!faulted() && node.bytes != 0) {
    std::memmove(node.dst, node.src, node.bytes);
  }
}

void run_memset(const Node &node) {
  if (!faulted() && node.bytes != 0) {
    std::memset(node.dst, node.value, node.bytes);
  }
}

void complete_record(const std::shared_ptr<Event> &event, std::uint64_t seq) {
  const Lock lock(st().mutex);
  event->completed = std::max(event->completed, seq);
  st().changed.notify_all();
}

void await_record(const std::shared_ptr<Event> &event, std::uint64_t target) {
  Lock lock(st().mutex);
  st().changed.wait(lock, [&] { return event->completed >= target; });
}

// ---- entry points ------------------------------------------------------------------------

cudaError_t fake_get_last_error() {
  const cudaError_t error = t_last_error;
  t_last_error = cudaSuccess;
  const Lock lock(st().mutex);
  return st().fault != cudaSuccess ? st().fault : error;
}

cudaError_t fake_get_device_count(int *count) {
  if (g_fake->device_count_error.load() != cudaSuccess) {
    return fail(g_fake->device_count_error.load());
  }
  *count = g_fake->device_count.load();
  return cudaSuccess;
}

cudaError_t fake_set_device(int) {
  const Lock lock(st().mutex);
  return fail(st().fault);
}

cudaError_t fake_malloc(void **out, size_t bytes) {
  FakeCuda &fake = *g_fake;
  ++fake.malloc_calls;
  const Lock lock(st().mutex);
  if (st().fault != cudaSuccess) {
    return fail(st().fault);
  }
  if (const cudaError_t unsafe = check_unsafe_call(); unsafe != cudaSuccess) {
    return fail(unsafe);
  }
  if (fake.malloc_failures_left.load() > 0) {
    --fake.malloc_failures_left;
    return fail(fake.malloc_error.load());
  }
  if (fake.reuse_freed.load()) {
    for (auto it = st().freed.begin(); it != st().freed.end(); ++it) {
      if (it->second == bytes) {
        *out = it->first;
        st().blocks.emplace(it->first, bytes);
        st().freed.erase(it);
        return cudaSuccess;
      }
    }
  }
  // cudaMalloc aligns to 256 bytes; the backend must align further itself.
  void *block = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (block == nullptr) {
    return fail(cudaErrorMemoryAllocation);
  }
  try {
    st().blocks.emplace(block, bytes);
  } catch (const std::bad_alloc &) {
    std::free(block);
    return fail(cudaErrorMemoryAllocation);
  }
  *out = block;
  return cudaSuccess;
}

void wait_all_streams_locked(Lock &lock) {
  st().changed.wait(lock, [] {
    return std::all_of(st().streams.begin(), st().streams.end(),
                       [](const Stream *s) { return s->completed == s->submitted; });
  });
}

cudaError_t fake_free(void *ptr) {
  FakeCuda &fake = *g_fake;
  if (fake.on_free != nullptr) {
    fake.on_free(fake.on_free_context);
  }
  ++fake.free_calls;
  Lock lock(st().mutex);
  if (const cudaError_t unsafe = check_unsafe_call(); unsafe != cudaSuccess) {
    return fail(unsafe);
  }
  // cudaFree synchronizes the device.
  wait_all_streams_locked(lock);
  const auto it = st().blocks.find(ptr);
  if (it == st().blocks.end()) {
    return fail(cudaErrorInvalidValue);
  }
  st().freed.emplace_back(it->first, it->second);
  st().blocks.erase(it);
  return fail(st().fault);
}

// Runs a copy, memset or kernel node (on a stream's worker).
void run_node(const Node &node) {
  switch (node.kind) {
    case Node::Kind::kCopy:
      run_copy(node);
      break;
    case Node::Kind::kMemset:
      run_memset(node);
      break;
    case Node::Kind::kKernel:
      run_kernel(node);
      break;
    case Node::Kind::kRecord:
    case Node::Kind::kWait:
      break;
  }
}

// Captures `node` on a capturing stream or queues it for the stream's worker (requires the
// lock).
void capture_or_submit(Stream *s, std::unique_ptr<Node> node) {
  if (s->capture != nullptr) {
    capture_node(s, std::move(node));
    return;
  }
  const std::shared_ptr<Node> work(std::move(node));
  submit(s, [work] { run_node(*work); });
}

// A copy or memset node enqueued on `stream`.
cudaError_t enqueue_node(cudaStream_t stream, std::unique_ptr<Node> node) {
  if (is_legacy(stream)) {
    return fail(cudaErrorStreamCaptureImplicit);  // the backend must never use it
  }
  const Lock lock(st().mutex);
  if (st().fault != cudaSuccess) {
    return fail(st().fault);
  }
  capture_or_submit(stream_of(stream), std::move(node));
  return cudaSuccess;
}

cudaError_t fake_memcpy_async(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                              cudaStream_t stream) {
  FakeCuda &fake = *g_fake;
  ++fake.memcpy_calls;
  if (kind == cudaMemcpyDeviceToHost) {
    ++fake.device_to_host_copies;
  }
  auto node = std::make_unique<Node>();
  node->kind = Node::Kind::kCopy;
  node->dst = dst;
  node->src = src;
  node->bytes = bytes;
  node->copy_kind = kind;
  return enqueue_node(stream, std::move(node));
}

cudaError_t fake_memset_async(void *dst, int value, size_t bytes, cudaStream_t stream) {
  auto node = std::make_unique<Node>();
  node->kind = Node::Kind::kMemset;
  node->dst = dst;
  node->bytes = bytes;
  node->value = value;
  return enqueue_node(stream, std::move(node));
}

// The block holding `address`, if any (requires the lock).
bool find_block(std::uintptr_t address, std::uintptr_t *base, std::size_t *size) {
  for (const auto &[block, bytes] : st().blocks) {
    const auto start = reinterpret_cast<std::uintptr_t>(block);
    if (address >= start && address - start < bytes) {
      *base = start;
      *size = bytes;
      return true;
    }
  }
  return false;
}

cudaError_t fake_pointer_get_attributes(cudaPointerAttributes *attributes, const void *ptr) {
  const Lock lock(st().mutex);
  *attributes = cudaPointerAttributes{};
  std::uintptr_t base = 0;
  std::size_t size = 0;
  if (find_block(reinterpret_cast<std::uintptr_t>(ptr), &base, &size)) {
    attributes->type = cudaMemoryTypeDevice;
    attributes->device = 0;
    attributes->devicePointer = const_cast<void *>(ptr);
    return cudaSuccess;
  }
  attributes->type = cudaMemoryTypeUnregistered;
  return cudaSuccess;
}

CUresult fake_mem_get_address_range(CUdeviceptr *base, size_t *size, CUdeviceptr ptr) {
  const Lock lock(st().mutex);
  std::uintptr_t start = 0;
  std::size_t bytes = 0;
  if (!find_block(static_cast<std::uintptr_t>(ptr), &start, &bytes)) {
    return fail_driver(CUDA_ERROR_INVALID_VALUE);
  }
  if (base != nullptr) {
    *base = static_cast<CUdeviceptr>(start);
  }
  if (size != nullptr) {
    *size = bytes;
  }
  return CUDA_SUCCESS;
}

cudaError_t fake_stream_create(cudaStream_t *out, unsigned int) {
  const Lock lock(st().mutex);
  if (st().fault != cudaSuccess) {
    return fail(st().fault);
  }
  auto s = std::make_unique<Stream>();
  st().streams.insert(s.get());
  ++g_fake->live_streams;
  *out = reinterpret_cast<cudaStream_t>(s.release());
  return cudaSuccess;
}

void stop_stream(Stream *s, Lock &lock) {
  st().changed.wait(lock, [s] { return s->completed == s->submitted; });
  s->stopping = true;
  st().changed.notify_all();
  std::thread worker = std::move(s->worker);
  lock.unlock();
  if (worker.joinable()) {
    worker.join();
  }
  lock.lock();
}

void leave_capture(Stream *s) {
  if (s->capture != nullptr) {
    auto &members = s->capture->members;
    members.erase(std::remove(members.begin(), members.end(), s), members.end());
  }
  s->capture = nullptr;
  s->deps.clear();
}

// Ends `capture` (requires the lock); its graph is returned, or kept as abandoned. Allocates
// nothing, so it ends the capture under a host allocation failure too.
std::unique_ptr<Graph> end_capture_locked(Capture *capture) noexcept {
  while (!capture->members.empty()) {
    leave_capture(capture->members.back());
  }
  for (auto &[handle, event] : st().events) {
    if (event->captured_in == capture) {
      event->captured_in = nullptr;
      event->capture_deps.clear();
    }
  }
  std::unique_ptr<Graph> graph = std::move(capture->graph);
  auto &captures = st().captures;
  captures.erase(std::remove_if(captures.begin(), captures.end(),
                                [capture](const auto &c) { return c.get() == capture; }),
                 captures.end());
  return graph;
}

cudaError_t fake_stream_destroy(cudaStream_t stream) {
  Lock lock(st().mutex);
  Stream *s = stream_of(stream);
  if (s->capture != nullptr) {
    if (s->capture->origin == s) {
      // The capture is abandoned with its partial graph, which nobody can release now.
      Capture *capture = s->capture;
      invalidate(capture, cudaErrorStreamCaptureInvalidated);
      st().abandoned.push_back(end_capture_locked(capture));
    } else {
      invalidate(s->capture, cudaErrorStreamCaptureUnjoined);
      leave_capture(s);
    }
  }
  stop_stream(s, lock);
  st().streams.erase(s);
  delete s;
  --g_fake->live_streams;
  return cudaSuccess;
}

cudaError_t fake_stream_synchronize(cudaStream_t stream) {
  ++g_fake->stream_synchronizations;
  if (is_legacy(stream)) {
    return fail(cudaErrorStreamCaptureImplicit);
  }
  Lock lock(st().mutex);
  Stream *s = stream_of(stream);
  if (s->capture != nullptr) {
    invalidate(s->capture, cudaErrorStreamCaptureUnsupported);
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  if (const cudaError_t unsafe = check_unsafe_call(); unsafe != cudaSuccess) {
    return fail(unsafe);
  }
  st().changed.wait(lock, [s] { return s->completed == s->submitted; });
  return fail(st().fault);
}

cudaError_t fake_stream_query(cudaStream_t stream) {
  ++g_fake->stream_queries;
  const Lock lock(st().mutex);
  Stream *s = stream_of(stream);
  if (s->capture != nullptr) {
    invalidate(s->capture, cudaErrorStreamCaptureUnsupported);
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  if (const cudaError_t unsafe = check_unsafe_call(); unsafe != cudaSuccess) {
    return fail(unsafe);
  }
  if (g_fake->forced_stream_query.load() != cudaSuccess) {
    return fail(g_fake->forced_stream_query.load());
  }
  if (st().fault != cudaSuccess) {
    return fail(st().fault);
  }
  return s->completed == s->submitted ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t fake_stream_wait_event(cudaStream_t stream, cudaEvent_t handle, unsigned int flags) {
  if (is_legacy(stream)) {
    return fail(cudaErrorStreamCaptureImplicit);
  }
  const Lock lock(st().mutex);
  if (st().fault != cudaSuccess) {
    return fail(st().fault);
  }
  Stream *s = stream_of(stream);
  const std::shared_ptr<Event> event = st().events.at(event_of(handle));
  if (s->capture != nullptr) {
    if ((flags & cudaEventWaitExternal) != 0) {
      auto node = std::make_unique<Node>();
      node->kind = Node::Kind::kWait;
      node->event = event;
      capture_node(s, std::move(node));
      return cudaSuccess;
    }
    if (event->captured_in == s->capture) {
      for (Node *dep : event->capture_deps) {
        if (std::find(s->deps.begin(), s->deps.end(), dep) == s->deps.end()) {
          s->deps.push_back(dep);
        }
      }
      return cudaSuccess;
    }
    if (event->captured_in != nullptr) {
      invalidate(s->capture, cudaErrorStreamCaptureMerge);
      return fail(cudaErrorStreamCaptureMerge);
    }
    if (event->target == 0) {
      return cudaSuccess;
    }
    // A dependency on work outside the capture.
    invalidate(s->capture, cudaErrorStreamCaptureIsolation);
    return fail(cudaErrorStreamCaptureIsolation);
  }
  if (event->captured_in != nullptr) {
    // The stream joins the capture the event was recorded in.
    s->capture = event->captured_in;
    s->deps = event->capture_deps;
    s->capture->members.push_back(s);
    return cudaSuccess;
  }
  const std::uint64_t target = event->target;
  submit(s, [event, target] { await_record(event, target); });
  return cudaSuccess;
}

cudaError_t fake_begin_capture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  if (g_fake->begin_capture_error.load() != cudaSuccess) {
    return fail(g_fake->begin_capture_error.load());
  }
  if (is_legacy(stream)) {
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  const Lock lock(st().mutex);
  if (st().fault != cudaSuccess) {
    return fail(st().fault);
  }
  Stream *s = stream_of(stream);
  if (s->capture != nullptr) {
    return fail(cudaErrorIllegalState);
  }
  auto capture = std::make_unique<Capture>();
  capture->thread = std::this_thread::get_id();
  capture->mode = mode;
  capture->id = st().next_capture_id++;
  capture->origin = s;
  capture->members.push_back(s);
  s->capture = capture.get();
  s->deps.clear();
  st().captures.push_back(std::move(capture));
  ++g_fake->live_graphs;
  return cudaSuccess;
}

// True when every node in `joined` is `origin_deps` or one of their ancestors.
bool rejoined(const std::vector<Node *> &joined, const std::vector<Node *> &origin_deps) {
  std::set<const Node *> reachable;
  std::vector<const Node *> work(origin_deps.begin(), origin_deps.end());
  while (!work.empty()) {
    const Node *node = work.back();
    work.pop_back();
    if (reachable.insert(node).second) {
      work.insert(work.end(), node->deps.begin(), node->deps.end());
    }
  }
  return std::all_of(joined.begin(), joined.end(),
                     [&](const Node *node) { return reachable.count(node) != 0; });
}

cudaError_t fake_end_capture(cudaStream_t stream, cudaGraph_t *out) {
  const Lock lock(st().mutex);
  Stream *s = stream_of(stream);
  *out = nullptr;
  if (is_legacy(stream) || s->capture == nullptr) {
    return fail(cudaErrorIllegalState);
  }
  Capture *capture = s->capture;
  if (capture->origin != s) {
    invalidate(capture, cudaErrorStreamCaptureUnmatched);
    return fail(cudaErrorStreamCaptureUnmatched);
  }
  if (capture->mode != cudaStreamCaptureModeRelaxed &&
      capture->thread != std::this_thread::get_id()) {
    return fail(cudaErrorStreamCaptureWrongThread);
  }
  // The capture ends whatever this call returns, a host allocation failure included.
  cudaError_t error = capture->invalidated;
  try {
    if (error == cudaSuccess) {
      for (const Stream *member : capture->members) {
        if (member != s && !rejoined(member->deps, s->deps)) {
          error = cudaErrorStreamCaptureUnjoined;
        }
      }
    }
    if (error == cudaSuccess && g_fake->end_capture_error.load() != cudaSuccess) {
      error = g_fake->end_capture_error.load();
    }
    if (error == cudaSuccess) {
      st().graphs.insert(capture->graph.get());
    }
  } catch (const std::bad_alloc &) {
    error = cudaErrorMemoryAllocation;
  }
  std::unique_ptr<Graph> graph = end_capture_locked(capture);
  if (error != cudaSuccess) {
    // A failed end yields no graph; CUDA releases it.
    --g_fake->live_graphs;
    return fail(error);
  }
  *out = reinterpret_cast<cudaGraph_t>(graph.release());
  return cudaSuccess;
}

cudaError_t fake_is_capturing(cudaStream_t stream, cudaStreamCaptureStatus *status) {
  if (is_legacy(stream)) {
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
  }
  const Lock lock(st().mutex);
  const Stream *s = stream_of(stream);
  if (s->capture == nullptr) {
    *status = cudaStreamCaptureStatusNone;
  } else {
    *status = s->capture->invalidated == cudaSuccess ? cudaStreamCaptureStatusActive
                                                     : cudaStreamCaptureStatusInvalidated;
  }
  return cudaSuccess;
}

cudaError_t fake_get_capture_info(cudaStream_t stream, cudaStreamCaptureStatus *status,
                                  unsigned long long *id, cudaGraph_t *graph,
                                  const cudaGraphNode_t **dependencies,
                                  const cudaGraphEdgeData **edges, size_t *count) {
  const Lock lock(st().mutex);
  if (is_legacy(stream)) {
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
  }
  Stream *s = stream_of(stream);
  if (s->capture == nullptr) {
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
  }
  *status = s->capture->invalidated == cudaSuccess ? cudaStreamCaptureStatusActive
                                                   : cudaStreamCaptureStatusInvalidated;
  if (id != nullptr) {
    *id = s->capture->id;
  }
  if (graph != nullptr) {
    *graph = reinterpret_cast<cudaGraph_t>(s->capture->graph.get());
  }
  if (edges == nullptr && s->has_edge_data()) {
    return fail(cudaErrorLossyQuery);
  }
  if (dependencies != nullptr) {
    *dependencies = reinterpret_cast<const cudaGraphNode_t *>(s->deps.data());
  }
  if (edges != nullptr) {
    *edges = s->has_edge_data() ? s->dep_edges.data() : nullptr;
  }
  if (count != nullptr) {
    *count = s->deps.size();
  }
  return cudaSuccess;
}

cudaError_t fake_update_capture_dependencies(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                             const cudaGraphEdgeData *edges, size_t count,
                                             unsigned int flags) {
  const Lock lock(st().mutex);
  Stream *s = is_legacy(stream) ? nullptr : stream_of(stream);
  if (s == nullptr || s->capture == nullptr) {
    return fail(cudaErrorIllegalState);
  }
  if (flags != cudaStreamAddCaptureDependencies && flags != cudaStreamSetCaptureDependencies) {
    return fail(cudaErrorInvalidValue);
  }
  std::vector<Node *> nodes;
  for (std::size_t i = 0; i < count; ++i) {
    Node *node = node_of(dependencies[i]);
    if (!s->capture->graph->owns(node)) {
      return fail(cudaErrorInvalidValue);
    }
    nodes.push_back(node);
  }
  std::vector<cudaGraphEdgeData> kept_edges;
  if (s->deps == s->edged_deps) {
    kept_edges = s->dep_edges;
  }
  kept_edges.resize(s->deps.size());
  if (flags == cudaStreamSetCaptureDependencies) {
    s->deps.clear();
    kept_edges.clear();
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (std::find(s->deps.begin(), s->deps.end(), nodes[i]) == s->deps.end()) {
      s->deps.push_back(nodes[i]);
      kept_edges.push_back(edges != nullptr ? edges[i] : cudaGraphEdgeData{});
    }
  }
  s->edged_deps = s->deps;
  s->dep_edges = std::move(kept_edges);
  return cudaSuccess;
}

cudaError_t fake_exchange_mode(cudaStreamCaptureMode *mode) {
  ++g_fake->relaxed_mode_exchanges;
  std::swap(t_mode, *mode);
  return cudaSuccess;
}

cudaError_t fake_event_create(cudaEvent_t *out, unsigned int) {
  const Lock lock(st().mutex);
  auto event = std::make_shared<Event>();
  *out = reinterpret_cast<cudaEvent_t>(event.get());
  st().events.emplace(event.get(), std::move(event));
  ++g_fake->live_events;
  return cudaSuccess;
}

cudaError_t fake_event_destroy(cudaEvent_t event) {
  const Lock lock(st().mutex);
  if (st().events.erase(event_of(event)) == 0) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  --g_fake->live_events;
  return cudaSuccess;
}

cudaError_t fake_event_record(cudaEvent_t handle, cudaStream_t stream, unsigned int flags) {
  if (is_legacy(stream)) {
    return fail(cudaErrorStreamCaptureImplicit);
  }
  const Lock lock(st().mutex);
  if (st().fault != cudaSuccess) {
    return fail(st().fault);
  }
  Stream *s = stream_of(stream);
  const std::shared_ptr<Event> event = st().events.at(event_of(handle));
  if (s->capture != nullptr) {
    if ((flags & cudaEventRecordExternal) != 0) {
      auto node = std::make_unique<Node>();
      node->kind = Node::Kind::kRecord;
      node->event = event;
      capture_node(s, std::move(node));
    } else {
      event->captured_in = s->capture;
      event->capture_deps = s->deps;
    }
    return cudaSuccess;
  }
  // The record is queued before the event's target moves, so a host allocation failure
  // (thrown) leaves no target that nothing will reach; the worker waits for the lock held here.
  const std::uint64_t seq = event->target + 1;
  submit(s, [event, seq] { complete_record(event, seq); });
  event->captured_in = nullptr;
  event->target = seq;
  return cudaSuccess;
}

cudaError_t fake_event_synchronize(cudaEvent_t handle) {
  Lock lock(st().mutex);
  const std::shared_ptr<Event> event = st().events.at(event_of(handle));
  if (event->captured_in != nullptr) {
    return fail(cudaErrorCapturedEvent);
  }
  if (const cudaError_t unsafe = check_unsafe_call(); unsafe != cudaSuccess) {
    return fail(unsafe);
  }
  const std::uint64_t target = event->target;
  st().changed.wait(lock, [&] { return event->completed >= target || st().fault != cudaSuccess; });
  return fail(st().fault);
}

cudaError_t fake_event_query(cudaEvent_t handle) {
  const Lock lock(st().mutex);
  const std::shared_ptr<Event> event = st().events.at(event_of(handle));
  if (event->captured_in != nullptr) {
    return fail(cudaErrorCapturedEvent);
  }
  if (const cudaError_t unsafe = check_unsafe_call(); unsafe != cudaSuccess) {
    return fail(unsafe);
  }
  if (st().fault != cudaSuccess) {
    return fail(st().fault);
  }
  return event->completed >= event->target ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t fake_graph_get_nodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *count) {
  const Lock lock(st().mutex);
  const Graph *g = graph_of(graph);
  if (nodes != nullptr) {
    for (std::size_t i = 0; i < *count && i < g->nodes.size(); ++i) {
      nodes[i] = reinterpret_cast<cudaGraphNode_t>(g->nodes[i].get());
    }
  }
  *count = g->nodes.size();
  return cudaSuccess;
}

cudaError_t fake_node_get_type(cudaGraphNode_t node, cudaGraphNodeType *type) {
  switch (node_of(node)->kind) {
    case Node::Kind::kCopy:
      *type = cudaGraphNodeTypeMemcpy;
      break;
    case Node::Kind::kMemset: {
      const int reported = g_fake->memset_node_type.load();
      *type = reported >= 0 ? static_cast<cudaGraphNodeType>(reported) : cudaGraphNodeTypeMemset;
      break;
    }
    case Node::Kind::kKernel:
      *type = cudaGraphNodeTypeKernel;
      break;
    case Node::Kind::kRecord:
      *type = cudaGraphNodeTypeEventRecord;
      break;
    case Node::Kind::kWait:
      *type = cudaGraphNodeTypeWaitEvent;
      break;
  }
  return cudaSuccess;
}

CUresult fake_driver_kernel_node_params(CUgraphNode handle, CUDA_KERNEL_NODE_PARAMS *params) {
  Node *node = node_of(handle);
  if (node->kind != Node::Kind::kKernel) {
    return fail_driver(CUDA_ERROR_INVALID_VALUE);
  }
  if (g_fake->driver_node_params_error.load() != CUDA_SUCCESS) {
    return fail_driver(g_fake->driver_node_params_error.load());
  }
  *params = CUDA_KERNEL_NODE_PARAMS{};
  auto *handle_of_kernel = reinterpret_cast<CUfunc_st *>(node->kernel.get());
  if (node->kernel->spec.reported_as_library_kernel) {
    params->kern = reinterpret_cast<CUkernel>(node->kernel.get());
  } else {
    params->func = handle_of_kernel;
  }
  params->gridDimX = node->grid.x;
  params->gridDimY = node->grid.y;
  params->gridDimZ = node->grid.z;
  params->blockDimX = node->block.x;
  params->blockDimY = node->block.y;
  params->blockDimZ = node->block.z;
  params->sharedMemBytes = static_cast<unsigned>(node->shared_bytes);
  if (node->kernel->spec.reported_through_extra) {
    params->extra = node->extra;
  } else {
    params->kernelParams = node->parameter_pointers.data();
  }
  return CUDA_SUCCESS;
}

CUresult param_info_of(const KernelInfo *kernel, size_t index, size_t *offset, size_t *size) {
  if (kernel != nullptr && kernel->spec.layout_unreadable) {
    return fail_driver(CUDA_ERROR_NOT_SUPPORTED);
  }
  if (kernel == nullptr || index >= kernel->spec.parameter_sizes.size()) {
    return fail_driver(CUDA_ERROR_INVALID_VALUE);
  }
  *offset = kernel->offsets[index];
  if (size != nullptr) {
    *size = kernel->spec.parameter_sizes[index];
  }
  return CUDA_SUCCESS;
}

CUresult fake_driver_func_param_info(CUfunction func, size_t index, size_t *offset, size_t *size) {
  return param_info_of(reinterpret_cast<const KernelInfo *>(func), index, offset, size);
}

CUresult fake_driver_kernel_param_info(CUkernel kernel, size_t index, size_t *offset,
                                       size_t *size) {
  return param_info_of(reinterpret_cast<const KernelInfo *>(kernel), index, offset, size);
}

CUresult fake_driver_func_name(const char **name, CUfunction func) {
  if (func == nullptr) {
    return fail_driver(CUDA_ERROR_INVALID_VALUE);
  }
  *name = reinterpret_cast<const KernelInfo *>(func)->spec.name.c_str();
  return CUDA_SUCCESS;
}

CUresult fake_driver_kernel_name(const char **name, CUkernel kernel) {
  if (kernel == nullptr) {
    return fail_driver(CUDA_ERROR_INVALID_VALUE);
  }
  *name = reinterpret_cast<const KernelInfo *>(kernel)->spec.name.c_str();
  return CUDA_SUCCESS;
}

cudaError_t fake_memcpy_params(cudaGraphNode_t handle, cudaMemcpy3DParms *params) {
  const Node *node = node_of(handle);
  if (node->kind != Node::Kind::kCopy) {
    return fail(cudaErrorInvalidValue);
  }
  *params = cudaMemcpy3DParms{};
  params->srcPtr.ptr = const_cast<void *>(node->src);
  params->dstPtr.ptr = node->dst;
  params->extent = cudaExtent{node->bytes, 1, 1};
  params->kind = node->copy_kind;
  return cudaSuccess;
}

cudaError_t fake_memset_params(cudaGraphNode_t handle, cudaMemsetParams *params) {
  const Node *node = node_of(handle);
  if (node->kind != Node::Kind::kMemset) {
    return fail(cudaErrorInvalidValue);
  }
  *params = cudaMemsetParams{};
  params->dst = node->dst;
  params->value = static_cast<unsigned>(node->value);
  params->elementSize = 1;
  params->width = node->bytes;
  params->height = 1;
  return cudaSuccess;
}

cudaError_t fake_child_graph(cudaGraphNode_t, cudaGraph_t *) {
  return fail(cudaErrorInvalidValue);  // captures here never make child graphs
}

cudaError_t fake_func_attributes(cudaFuncAttributes *attributes, const void *function) {
  const Lock lock(st().mutex);
  const auto it = st().kernels.find(function);
  if (it == st().kernels.end()) {
    return fail(cudaErrorInvalidDeviceFunction);
  }
  it->second->loaded = true;
  *attributes = cudaFuncAttributes{};
  attributes->maxThreadsPerBlock = static_cast<int>(kMaxBlockThreads);
  return cudaSuccess;
}

cudaError_t fake_device_attribute(int *value, cudaDeviceAttr attribute, int) {
  switch (attribute) {
    case cudaDevAttrMultiProcessorCount:
      *value = 132;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor:
      *value = 9;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
      *value = 0;
      return cudaSuccess;
    default:
      return fail(cudaErrorInvalidValue);
  }
}

cudaError_t fake_launch_kernel(const void *function, dim3 grid, dim3 block, void **args,
                               size_t shared_bytes, cudaStream_t stream) {
  FakeCuda &fake = *g_fake;
  ++fake.kernel_launches;
  if (fake.launch_error.load() != cudaSuccess) {
    return fail(fake.launch_error.load());
  }
  if (is_legacy(stream)) {
    return fail(cudaErrorStreamCaptureImplicit);
  }
  const Lock lock(st().mutex);
  if (st().fault != cudaSuccess) {
    return fail(st().fault);
  }
  const auto found = st().kernels.find(function);
  if (found == st().kernels.end()) {
    return fail(cudaErrorInvalidDeviceFunction);
  }
  const std::shared_ptr<KernelInfo> &kernel = found->second;
  const std::uint64_t threads = std::uint64_t{block.x} * block.y * block.z;
  if (block.x == 0 || block.y == 0 || block.z == 0 || block.x > 1024 || block.y > 1024 ||
      block.z > 64 || threads > kMaxBlockThreads || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      grid.x > kMaxGridX || grid.y > kMaxGridYZ || grid.z > kMaxGridYZ) {
    return fail(cudaErrorInvalidConfiguration);
  }
  if (shared_bytes > kMaxSharedBytes) {
    return fail(cudaErrorInvalidValue);
  }
  if (grid.x % kernel->spec.cluster_x != 0) {
    return fail(cudaErrorInvalidClusterSize);
  }
  Stream *s = stream_of(stream);
  if (s->capture != nullptr && !kernel->loaded && t_mode != cudaStreamCaptureModeRelaxed) {
    // Loading the kernel's module now (lazy loading) is not permitted during the capture.
    invalidate(s->capture, cudaErrorStreamCaptureUnsupported);
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  kernel->loaded = kernel->loaded || s->capture == nullptr;
  auto node = std::make_unique<Node>();
  node->kind = Node::Kind::kKernel;
  node->kernel = kernel;
  node->grid = grid;
  node->block = block;
  node->shared_bytes = shared_bytes;
  for (std::size_t i = 0; i < kernel->spec.parameter_sizes.size(); ++i) {
    const auto *bytes = static_cast<const std::byte *>(args[i]);
    node->parameters.emplace_back(bytes, bytes + kernel->spec.parameter_sizes[i]);
  }
  node->point_at_parameters();
  const bool captured = s->capture != nullptr;
  if (!captured && fake.discard_work.load()) {
    return cudaSuccess;
  }
  st().launch_log.push_back(FakeCuda::LaunchRecord{kernel->spec.name, grid, block, captured});
  capture_or_submit(s, std::move(node));
  return cudaSuccess;
}

cudaError_t fake_instantiate(cudaGraphExec_t *out, cudaGraph_t graph, unsigned long long) {
  if (g_fake->instantiate_error.load() != cudaSuccess) {
    return fail(g_fake->instantiate_error.load());
  }
  const Lock lock(st().mutex);
  std::shared_ptr<const Graph> exec = graph_of(graph)->clone();
  void *handle = const_cast<Graph *>(exec.get());
  st().execs.emplace(handle, std::move(exec));
  ++g_fake->live_execs;
  *out = reinterpret_cast<cudaGraphExec_t>(handle);
  return cudaSuccess;
}

cudaError_t fake_upload(cudaGraphExec_t, cudaStream_t) {
  return fail(g_fake->upload_error.load());
}

cudaError_t fake_launch(cudaGraphExec_t exec, cudaStream_t stream) {
  ++g_fake->graph_launches;
  if (is_legacy(stream)) {
    return fail(cudaErrorStreamCaptureImplicit);
  }
  const Lock lock(st().mutex);
  if (st().fault != cudaSuccess) {
    return fail(st().fault);
  }
  Stream *s = stream_of(stream);
  if (s->capture != nullptr) {
    invalidate(s->capture, cudaErrorStreamCaptureUnsupported);
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  std::shared_ptr<const Graph> graph = st().execs.at(reinterpret_cast<void *>(exec));
  if (g_fake->discard_work.load()) {
    return cudaSuccess;
  }
  // Event records and waits bind now, in node order, as separate calls would. The targets
  // move only once the work is queued, so a host allocation failure (thrown) changes nothing.
  std::vector<std::uint64_t> bound(graph->nodes.size(), 0);
  std::map<const Event *, std::uint64_t> targets;
  for (std::size_t i = 0; i < graph->nodes.size(); ++i) {
    const Node &node = *graph->nodes[i];
    if (node.kind != Node::Kind::kRecord && node.kind != Node::Kind::kWait) {
      continue;
    }
    const auto [target, inserted] = targets.try_emplace(node.event.get(), node.event->target);
    bound[i] = node.kind == Node::Kind::kRecord ? ++target->second : target->second;
  }
  submit(s, [graph, bound] {
    for (std::size_t i = 0; i < graph->nodes.size(); ++i) {
      const Node &node = *graph->nodes[i];
      if (node.kind == Node::Kind::kRecord) {
        complete_record(node.event, bound[i]);
      } else if (node.kind == Node::Kind::kWait) {
        await_record(node.event, bound[i]);
      } else {
        run_node(node);
      }
    }
  });
  for (const std::unique_ptr<Node> &node : graph->nodes) {
    if (node->kind == Node::Kind::kRecord) {
      node->event->target = targets.at(node->event.get());
      node->event->captured_in = nullptr;
    }
  }
  return cudaSuccess;
}

cudaError_t fake_exec_destroy(cudaGraphExec_t exec) {
  const Lock lock(st().mutex);
  if (st().execs.erase(reinterpret_cast<void *>(exec)) == 0) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  --g_fake->live_execs;
  return cudaSuccess;
}

cudaError_t fake_graph_destroy(cudaGraph_t graph) {
  const Lock lock(st().mutex);
  Graph *g = graph_of(graph);
  if (st().graphs.erase(g) == 0) {
    return fail(cudaErrorInvalidResourceHandle);
  }
  delete g;
  --g_fake->live_graphs;
  return cudaSuccess;
}

// The CUDA API is C: a host allocation failure inside it is an error code, never an exception.
// Every entry of the fake's table reports one the same way (a host out-of-memory test fails
// the allocations the fake makes too).
template <auto Function>
struct AsCApi;

template <typename Result, typename... Args, Result (*Function)(Args...)>
struct AsCApi<Function> {
  static Result call(Args... args) noexcept {
    try {
      return Function(args...);
    } catch (const std::bad_alloc &) {
      if constexpr (std::is_same_v<Result, CUresult>) {
        return CUDA_ERROR_OUT_OF_MEMORY;
      } else {
        return cudaErrorMemoryAllocation;
      }
    }
  }
};

}  // namespace

FakeCuda::FakeCuda() : state_(std::make_unique<State>()) {
  g_fake = this;
  api_ = cuda::CudaApi{
      .get_error_name = &cudaGetErrorName,
      .get_error_string = &cudaGetErrorString,
      .get_last_error = &AsCApi<&fake_get_last_error>::call,
      .get_device_count = &AsCApi<&fake_get_device_count>::call,
      .set_device = &AsCApi<&fake_set_device>::call,
      .malloc = &AsCApi<&fake_malloc>::call,
      .free = &AsCApi<&fake_free>::call,
      .memcpy_async = &AsCApi<&fake_memcpy_async>::call,
      .memset_async = &AsCApi<&fake_memset_async>::call,
      .pointer_get_attributes = &AsCApi<&fake_pointer_get_attributes>::call,
      .stream_create_with_flags = &AsCApi<&fake_stream_create>::call,
      .stream_destroy = &AsCApi<&fake_stream_destroy>::call,
      .stream_synchronize = &AsCApi<&fake_stream_synchronize>::call,
      .stream_query = &AsCApi<&fake_stream_query>::call,
      .stream_wait_event = &AsCApi<&fake_stream_wait_event>::call,
      .stream_begin_capture = &AsCApi<&fake_begin_capture>::call,
      .stream_end_capture = &AsCApi<&fake_end_capture>::call,
      .stream_is_capturing = &AsCApi<&fake_is_capturing>::call,
      .thread_exchange_stream_capture_mode = &AsCApi<&fake_exchange_mode>::call,
      .event_create_with_flags = &AsCApi<&fake_event_create>::call,
      .event_destroy = &AsCApi<&fake_event_destroy>::call,
      .event_record_with_flags = &AsCApi<&fake_event_record>::call,
      .event_synchronize = &AsCApi<&fake_event_synchronize>::call,
      .event_query = &AsCApi<&fake_event_query>::call,
      .graph_get_nodes = &AsCApi<&fake_graph_get_nodes>::call,
      .graph_node_get_type = &AsCApi<&fake_node_get_type>::call,
      .graph_memcpy_node_get_params = &AsCApi<&fake_memcpy_params>::call,
      .graph_memset_node_get_params = &AsCApi<&fake_memset_params>::call,
      .graph_child_graph_node_get_graph = &AsCApi<&fake_child_graph>::call,
      .func_get_attributes = &AsCApi<&fake_func_attributes>::call,
      .graph_instantiate_with_flags = &AsCApi<&fake_instantiate>::call,
      .graph_upload = &AsCApi<&fake_upload>::call,
      .graph_launch = &AsCApi<&fake_launch>::call,
      .graph_exec_destroy = &AsCApi<&fake_exec_destroy>::call,
      .graph_destroy = &AsCApi<&fake_graph_destroy>::call,
      .launch_kernel = &AsCApi<&fake_launch_kernel>::call,
      .stream_get_capture_info = &AsCApi<&fake_get_capture_info>::call,
      .stream_update_capture_dependencies = &AsCApi<&fake_update_capture_dependencies>::call,
      .device_get_attribute = &AsCApi<&fake_device_attribute>::call,
      .driver_kernel_node_get_params = &AsCApi<&fake_driver_kernel_node_params>::call,
      .driver_func_get_param_info = &AsCApi<&fake_driver_func_param_info>::call,
      .driver_kernel_get_param_info = &AsCApi<&fake_driver_kernel_param_info>::call,
      .driver_func_get_name = &AsCApi<&fake_driver_func_name>::call,
      .driver_kernel_get_name = &AsCApi<&fake_driver_kernel_name>::call,
      .driver_mem_get_address_range = &AsCApi<&fake_mem_get_address_range>::call,
  };
  register_builtin_kernels(*this);
}

FakeCuda::~FakeCuda() {
  {
    Lock lock(state_->mutex);
    while (!state_->streams.empty()) {
      Stream *s = *state_->streams.begin();
      stop_stream(s, lock);
      state_->streams.erase(s);
      delete s;
    }
    for (Graph *graph : state_->graphs) {
      delete graph;
    }
    for (const auto &[block, bytes] : state_->blocks) {
      std::free(block);
    }
    for (const auto &[block, bytes] : state_->freed) {
      std::free(block);
    }
  }
  g_fake = nullptr;
}

void FakeCuda::register_kernel(const void *function, FakeKernel kernel) {
  auto info = std::make_shared<KernelInfo>();
  info->function = function;
  info->loaded = kernel.loaded;
  std::size_t offset = 0;
  for (const std::size_t size : kernel.parameter_sizes) {
    const std::size_t align = std::min<std::size_t>(std::max<std::size_t>(size, 1), 8);
    offset = (offset + align - 1) / align * align;
    info->offsets.push_back(offset);
    offset += size;
  }
  info->spec = std::move(kernel);
  const Lock lock(state_->mutex);
  state_->kernels[function] = std::move(info);
}

bool FakeCuda::is_loaded(const void *function) const {
  const Lock lock(state_->mutex);
  return state_->kernels.at(function)->loaded;
}

void FakeCuda::set_loaded(const void *function, bool loaded) {
  const Lock lock(state_->mutex);
  state_->kernels.at(function)->loaded = loaded;
}

std::vector<FakeCuda::LaunchRecord> FakeCuda::launches() const {
  const Lock lock(state_->mutex);
  return state_->launch_log;
}

void FakeCuda::clear_launches() {
  const Lock lock(state_->mutex);
  state_->launch_log.clear();
}

std::vector<std::vector<std::size_t>> FakeCuda::graph_dependencies(cudaGraph_t graph) const {
  const Lock lock(state_->mutex);
  const Graph *g = graph_of(graph);
  std::vector<std::vector<std::size_t>> out;
  for (const auto &node : g->nodes) {
    std::vector<std::size_t> deps;
    for (const Node *dep : node->deps) {
      for (std::size_t i = 0; i < g->nodes.size(); ++i) {
        if (g->nodes[i].get() == dep) {
          deps.push_back(i);
        }
      }
    }
    std::sort(deps.begin(), deps.end());
    out.push_back(std::move(deps));
  }
  return out;
}

std::vector<std::string> FakeCuda::graph_node_kernels(cudaGraph_t graph) const {
  const Lock lock(state_->mutex);
  std::vector<std::string> out;
  for (const auto &node : graph_of(graph)->nodes) {
    out.push_back(node->kind == Node::Kind::kKernel ? node->kernel->spec.name : std::string());
  }
  return out;
}

void FakeCuda::fault(cudaError_t error) {
  const Lock lock(state_->mutex);
  state_->fault = error;
  state_->changed.notify_all();
}

void FakeCuda::drain() const {
  Lock lock(state_->mutex);
  wait_all_streams_locked(lock);
}

std::size_t FakeCuda::live_device_blocks() const {
  const Lock lock(state_->mutex);
  return state_->blocks.size();
}

}  // namespace replayrt::testing
