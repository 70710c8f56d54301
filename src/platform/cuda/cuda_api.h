// CudaApi: every CUDA entry point the backend calls, as a table of function pointers.
// The backend calls CUDA only through a table, so tests substitute a fake that runs without a
// GPU (FakeCuda) and inject faults. real_cuda_api() is the table over the CUDA runtime itself.
//
// The driver_* entries are CUDA driver calls. The backend never links libcuda: the real table
// reaches them through cudaGetDriverEntryPointByVersion the first time one is called, and an
// entry point the installed driver does not offer answers CUDA_ERROR_NOT_FOUND.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace replayrt::cuda {

struct CudaApi {
  const char *(*get_error_name)(cudaError_t);
  const char *(*get_error_string)(cudaError_t);
  cudaError_t (*get_last_error)();
  cudaError_t (*get_device_count)(int *);
  cudaError_t (*set_device)(int);
  cudaError_t (*malloc)(void **, size_t);
  cudaError_t (*free)(void *);
  cudaError_t (*memcpy_async)(void *, const void *, size_t, cudaMemcpyKind, cudaStream_t);
  cudaError_t (*memset_async)(void *, int, size_t, cudaStream_t);
  cudaError_t (*pointer_get_attributes)(cudaPointerAttributes *, const void *);
  cudaError_t (*stream_create_with_flags)(cudaStream_t *, unsigned int);
  cudaError_t (*stream_destroy)(cudaStream_t);
  cudaError_t (*stream_synchronize)(cudaStream_t);
  cudaError_t (*stream_query)(cudaStream_t);
  cudaError_t (*stream_wait_event)(cudaStream_t, cudaEvent_t, unsigned int);
  cudaError_t (*stream_begin_capture)(cudaStream_t, cudaStreamCaptureMode);
  cudaError_t (*stream_end_capture)(cudaStream_t, cudaGraph_t *);
  cudaError_t (*stream_is_capturing)(cudaStream_t, cudaStreamCaptureStatus *);
  cudaError_t (*thread_exchange_stream_capture_mode)(cudaStreamCaptureMode *);
  cudaError_t (*event_create_with_flags)(cudaEvent_t *, unsigned int);
  cudaError_t (*event_destroy)(cudaEvent_t);
  cudaError_t (*event_record_with_flags)(cudaEvent_t, cudaStream_t, unsigned int);
  cudaError_t (*event_synchronize)(cudaEvent_t);
  cudaError_t (*event_query)(cudaEvent_t);
  cudaError_t (*graph_get_nodes)(cudaGraph_t, cudaGraphNode_t *, size_t *);
  cudaError_t (*graph_node_get_type)(cudaGraphNode_t, cudaGraphNodeType *);
  cudaError_t (*graph_memcpy_node_get_params)(cudaGraphNode_t, cudaMemcpy3DParms *);
  cudaError_t (*graph_memset_node_get_params)(cudaGraphNode_t, cudaMemsetParams *);
  cudaError_t (*graph_child_graph_node_get_graph)(cudaGraphNode_t, cudaGraph_t *);
  cudaError_t (*func_get_attributes)(cudaFuncAttributes *, const void *);
  cudaError_t (*graph_instantiate_with_flags)(cudaGraphExec_t *, cudaGraph_t, unsigned long long);
  cudaError_t (*graph_upload)(cudaGraphExec_t, cudaStream_t);
  cudaError_t (*graph_launch)(cudaGraphExec_t, cudaStream_t);
  cudaError_t (*graph_exec_destroy)(cudaGraphExec_t);
  cudaError_t (*graph_destroy)(cudaGraph_t);
  cudaError_t (*launch_kernel)(const void *, dim3, dim3, void **, size_t, cudaStream_t);
  cudaError_t (*stream_get_capture_info)(cudaStream_t, cudaStreamCaptureStatus *,
                                         unsigned long long *, cudaGraph_t *,
                                         const cudaGraphNode_t **, const cudaGraphEdgeData **,
                                         size_t *);
  cudaError_t (*stream_update_capture_dependencies)(cudaStream_t, cudaGraphNode_t *,
                                                    const cudaGraphEdgeData *, size_t,
                                                    unsigned int);
  cudaError_t (*device_get_attribute)(int *, cudaDeviceAttr, int);

  // Driver calls (see the comment at the top).
  CUresult (*driver_kernel_node_get_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS *);
  CUresult (*driver_func_get_param_info)(CUfunction, size_t, size_t *, size_t *);
  CUresult (*driver_kernel_get_param_info)(CUkernel, size_t, size_t *, size_t *);
  CUresult (*driver_func_get_name)(const char **, CUfunction);
  CUresult (*driver_kernel_get_name)(const char **, CUkernel);
  CUresult (*driver_mem_get_address_range)(CUdeviceptr *, size_t *, CUdeviceptr);
};

// The table over the CUDA runtime (statically linked cudart).
const CudaApi &real_cuda_api() noexcept;

// The table the platform factory's CUDA devices use (create_device(RRT_PLATFORM_CUDA)):
// real_cuda_api() in libreplayrt (platform/cuda/cuda_platform_api.cpp); a test build may link
// another definition that answers with a fake.
const CudaApi &platform_cuda_api() noexcept;

// Sets the calling thread's capture mode to cudaStreamCaptureModeRelaxed for its lifetime and
// restores the previous mode after, so that the backend's own calls (allocation, synchronous
// copies on its private stream) never invalidate a capture in progress on this thread.
class RelaxedCaptureGuard {
 public:
  explicit RelaxedCaptureGuard(const CudaApi &api) noexcept : api_(api) {
    ok_ = api_.thread_exchange_stream_capture_mode(&mode_) == cudaSuccess;
  }
  ~RelaxedCaptureGuard() {
    if (ok_) {
      (void)api_.thread_exchange_stream_capture_mode(&mode_);
    }
  }
  RelaxedCaptureGuard(const RelaxedCaptureGuard &) = delete;
  RelaxedCaptureGuard &operator=(const RelaxedCaptureGuard &) = delete;

 private:
  const CudaApi &api_;
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
  bool ok_ = false;
};

}  // namespace replayrt::cuda
