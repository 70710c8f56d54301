// FakeCuda: a CudaApi table (platform/cuda/cuda_api.h) that models a CUDA device in host memory,
// so that every CUDA-backend path except the device code itself runs without a GPU.
//
// What it models:
//   - memory: "device" memory is host memory from cudaMalloc (256-byte aligned, as CUDA
//     promises no more), pointer attributes and the driver's address ranges;
//   - asynchrony: each stream has a worker thread that executes its work in enqueue order;
//     events complete when the worker reaches their record; synchronize, query and waits
//     behave as CUDA's (a host-to-device copy reads its host buffer when it executes);
//   - kernels: a kernel is a registered FakeKernel with a parameter layout and a CPU
//     implementation (register_kernel). cudaLaunchKernel copies the parameter blobs and the
//     stream's worker runs the implementation; kernels that are never registered are
//     cudaErrorInvalidDeviceFunction, and launch configurations outside CUDA's limits are
//     cudaErrorInvalidConfiguration. The built-in kernels of the CUDA backend are registered by
//     the constructor with the simulator's kernels as their implementation;
//   - stream capture as CUDA enforces it: capture of the legacy stream is refused; work on a
//     capturing stream becomes graph nodes with their dependencies (kernel nodes hold the
//     parameter blobs the driver calls report); potentially unsafe calls (cudaMalloc,
//     cudaFree, synchronizing or querying streams and events) made while a capture is active
//     on the calling thread, outside the relaxed capture mode, invalidate it; synchronizing or
//     querying a capturing stream invalidates its capture in any mode; a wait on an event
//     recorded outside the capture is cudaErrorStreamCaptureIsolation and invalidates it; a
//     non-capturing stream that waits on an event recorded in a capture joins it, and ending a
//     capture whose joined streams did not rejoin is cudaErrorStreamCaptureUnjoined; ending a
//     thread-local or global capture from another thread is cudaErrorStreamCaptureWrongThread
//     and the capture goes on; cudaStreamIsCapturing and cudaStreamGetCaptureInfo report the
//     capture, also one the caller began on a stream it later wraps;
//   - lazy module loading: a kernel is loaded by its first launch outside a capture or by
//     cudaFuncGetAttributes; launching one not yet loaded inside a capture invalidates it;
//   - kernel nodes are read through the driver entry points (cuGraphKernelNodeGetParams,
//     cuFuncGetParamInfo, cuKernelGetParamInfo), which read a node of any module; the table
//     has no runtime cudaGraphKernelNodeGetParams, which fails for kernels compiled outside the
//     calling library (FakeKernel::other_module marks such a kernel);
//   - errors: a failing call sets the thread's last error (cudaGetLastError returns and clears
//     it); an injected device fault is sticky: every later call fails with it.
//
// Every entry can be made to fail, and live streams, events, graphs and executable graphs are
// counted, so tests see leaks. One FakeCuda may exist at a time (the table holds plain function
// pointers); construct it for the test's duration (or use platform_fake_cuda() in a build whose
// CUDA platform is the fake). All members are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "platform/cuda/cuda_api.h"

namespace replayrt::testing {

// One execution of a kernel launch, as its CPU implementation sees it.
struct FakeKernelLaunch {
  dim3 grid;
  dim3 block;
  std::size_t shared_bytes = 0;
  // One blob per kernel parameter, in the kernel's parameter order.
  std::span<const std::vector<std::byte>> parameters;
};

using FakeKernelFn = void (*)(const FakeKernelLaunch &launch, void *context);

struct FakeKernel {
  std::string name;
  // The kernel's parameters' sizes in bytes, in order (what cuFuncGetParamInfo reports, with
  // each offset aligned to the parameter's size, at most 8).
  std::vector<std::size_t> parameter_sizes;
  FakeKernelFn run = nullptr;
  void *context = nullptr;
  // Compiled into another module than the library's (a user launcher's, cuBLAS'): only the
  // driver's node query can read it (the fake offers no other).
  bool other_module = false;
  // Already loaded (else loaded by the first launch outside a capture, or cudaFuncGetAttributes).
  bool loaded = true;
  // __cluster_dims__: the grid's x dimension must be a multiple of it.
  unsigned cluster_x = 1;
  // The driver reports the node's parameters through `extra` (one packed buffer) instead of
  // kernelParams.
  bool reported_through_extra = false;
  // The driver reports the node's function as a CUkernel (func null) instead of a CUfunction.
  bool reported_as_library_kernel = false;
  // cuFuncGetParamInfo / cuKernelGetParamInfo fail for it (CUDA_ERROR_NOT_SUPPORTED).
  bool layout_unreadable = false;
};

class FakeCuda {
 public:
  FakeCuda();
  ~FakeCuda();
  FakeCuda(const FakeCuda &) = delete;
  FakeCuda &operator=(const FakeCuda &) = delete;

  const cuda::CudaApi &api() const noexcept { return api_; }

  // Registers `function` (any address that identifies it: a host stub, a test's own token) as a
  // kernel. A function registered twice keeps the second registration.
  void register_kernel(const void *function, FakeKernel kernel);
  // Loaded state of a registered kernel (lazy module loading).
  bool is_loaded(const void *function) const;
  void set_loaded(const void *function, bool loaded);

  // A launch as the fake saw it at cudaLaunchKernel (captured or not).
  struct LaunchRecord {
    std::string kernel;
    dim3 grid;
    dim3 block;
    bool captured = false;
  };
  std::vector<LaunchRecord> launches() const;
  void clear_launches();

  // The dependencies of every node of a graph (captured or instantiated): entry i lists the
  // indices, in cudaGraphGetNodes order, of the nodes node i depends on.
  std::vector<std::vector<std::size_t>> graph_dependencies(cudaGraph_t graph) const;
  // The kernel names of a graph's kernel nodes, in node order ("" for other nodes).
  std::vector<std::string> graph_node_kernels(cudaGraph_t graph) const;

  // Waits until every stream's queued work has executed.
  void drain() const;
  // Makes `error` the device's sticky fault now (as a kernel's fault does).
  void fault(cudaError_t error);

  // Failure injection: cudaSuccess (or 0) means "do not fail".
  std::atomic<cudaError_t> device_count_error{cudaSuccess};
  std::atomic<int> device_count{1};
  std::atomic<int> malloc_failures_left{0};  // the next this many cudaMalloc calls fail
  std::atomic<cudaError_t> malloc_error{cudaErrorMemoryAllocation};  // ... with this error
  std::atomic<cudaError_t> begin_capture_error{cudaSuccess};
  std::atomic<cudaError_t> end_capture_error{cudaSuccess};
  std::atomic<cudaError_t> instantiate_error{cudaSuccess};
  std::atomic<cudaError_t> upload_error{cudaSuccess};
  std::atomic<cudaError_t> launch_error{cudaSuccess};  // every cudaLaunchKernel fails with it
  // What the driver's cuGraphKernelNodeGetParams returns instead of the node's parameters.
  std::atomic<CUresult> driver_node_params_error{CUDA_SUCCESS};
  // When 0 or more, the node type cudaGraphNodeGetType reports for every memset node: a node
  // of a type the runtime's enum does not name (the driver's batch memory operation, 12), or
  // one a later CUDA adds.
  std::atomic<int> memset_node_type{-1};
  // The next this many kernel executions fault instead of running: the device context then
  // fails every call with cudaErrorIllegalAddress (a sticky fault).
  std::atomic<int> kernel_faults_left{0};
  // When not cudaSuccess, what cudaStreamQuery returns instead of the truth.
  std::atomic<cudaError_t> forced_stream_query{cudaSuccess};
  // When true, a freed block of the same size is handed out again by the next cudaMalloc.
  std::atomic<bool> reuse_freed{false};
  // When true, kernel launches outside a capture and graph launches are checked and then
  // dropped, never run: a benchmark of the host side measures the callers alone.
  std::atomic<bool> discard_work{false};
  // Called at the start of every cudaFree, on the calling thread, before the fake takes its
  // own lock.
  void (*on_free)(void *context) = nullptr;
  void *on_free_context = nullptr;

  // Counters.
  std::atomic<int> malloc_calls{0};
  std::atomic<int> free_calls{0};
  std::atomic<int> live_streams{0};
  std::atomic<int> live_events{0};
  std::atomic<int> live_graphs{0};
  std::atomic<int> live_execs{0};
  std::atomic<int> graph_launches{0};
  // Captured nodes whose incoming edges carry edge data (a programmatic dependency, say) that
  // cudaStreamUpdateCaptureDependencies gave the stream's dependencies.
  std::atomic<int> nodes_added_with_edge_data{0};
  std::atomic<int> kernel_launches{0};
  std::atomic<int> kernel_executions{0};
  std::atomic<int> stream_queries{0};
  std::atomic<int> stream_synchronizations{0};
  std::atomic<int> memcpy_calls{0};  // cudaMemcpyAsync, captured or not
  std::atomic<int> device_to_host_copies{0};
  std::atomic<int> relaxed_mode_exchanges{0};
  std::size_t live_device_blocks() const;

  struct State;  // the implementation's, for the entry points
  State &state() const noexcept { return *state_; }

 private:
  std::unique_ptr<State> state_;
  cuda::CudaApi api_{};
};

// The kernels of the CUDA backend's built-ins (platform/cuda/builtin_launchers.cu), registered
// with `fake` with CPU implementations that run the simulator's kernels on the same operands.
void register_builtin_kernels(FakeCuda &fake);

}  // namespace replayrt::testing
