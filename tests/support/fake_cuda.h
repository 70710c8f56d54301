// FakeCuda: a CudaApi table (platform/cuda/cuda_api.h) over host memory, for testing the CUDA
// backend's host logic without a GPU. "Device" memory is host memory; asynchronous copies and
// memsets run at once, or are recorded while their stream captures; a captured graph replays
// its recorded operations at cudaGraphLaunch. Kernel launches do not exist here. Every entry
// can be made to fail, and live streams, events, graphs and executable graphs are counted, so
// tests see leaks.
//
// One FakeCuda may be active at a time (the table holds plain function pointers); install() it
// for the test's duration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "platform/cuda/cuda_api.h"

namespace replayrt::testing {

class FakeCuda {
 public:
  FakeCuda();
  ~FakeCuda();
  FakeCuda(const FakeCuda &) = delete;
  FakeCuda &operator=(const FakeCuda &) = delete;

  const cuda::CudaApi &api() const noexcept { return api_; }

  // Failure injection: cudaSuccess means "do not fail".
  cudaError_t device_count_error = cudaSuccess;
  int device_count = 1;
  int malloc_failures_left = 0;  // the next this many cudaMalloc calls fail
  cudaError_t begin_capture_error = cudaSuccess;
  cudaError_t end_capture_error = cudaSuccess;
  cudaError_t instantiate_error = cudaSuccess;
  cudaError_t upload_error = cudaSuccess;
  // What cudaStreamQuery returns (work runs at once here, so cudaSuccess is the truth;
  // cudaErrorNotReady pretends work is still queued).
  cudaError_t stream_query_result = cudaSuccess;
  // When true, a freed block of the same size is handed out again by the next cudaMalloc.
  bool reuse_freed = false;

  // Counters.
  int malloc_calls = 0;
  int free_calls = 0;
  int live_streams = 0;
  int live_events = 0;
  int live_graphs = 0;
  int live_execs = 0;
  int graph_launches = 0;
  int stream_queries = 0;
  int relaxed_mode_exchanges = 0;
  std::size_t live_device_blocks() const { return blocks_.size(); }

  struct Op {
    enum class Kind { kCopy, kMemset, kRecord, kWait } kind = Kind::kCopy;
    void *dst = nullptr;
    const void *src = nullptr;
    std::size_t bytes = 0;
    int value = 0;
  };
  struct Stream {
    bool capturing = false;
    std::vector<Op> *graph = nullptr;
  };

  // Implementation state, public for the C-style entry points.
  std::map<void *, std::size_t> blocks_;
  std::vector<std::pair<void *, std::size_t>> freed_;
  cuda::CudaApi api_{};
};

}  // namespace replayrt::testing
