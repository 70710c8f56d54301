#include "platform/cuda/cuda_api.h"

#include <cudaTypedefs.h>

namespace replayrt::cuda {

namespace {

// The driver entry points, resolved once through the runtime (no libcuda link); null where the
// driver does not offer one.
struct DriverEntryPoints {
  PFN_cuGraphKernelNodeGetParams_v12000 kernel_node_get_params = nullptr;
  PFN_cuFuncGetParamInfo_v12040 func_get_param_info = nullptr;
  PFN_cuKernelGetParamInfo_v12040 kernel_get_param_info = nullptr;
  PFN_cuFuncGetName_v12030 func_get_name = nullptr;
  PFN_cuKernelGetName_v12030 kernel_get_name = nullptr;
  PFN_cuMemGetAddressRange_v3020 mem_get_address_range = nullptr;
};

template <typename Fn>
void resolve(const char *symbol, unsigned version, Fn *out) {
  void *entry = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &entry, version, cudaEnableDefault, &found) ==
          cudaSuccess &&
      found == cudaDriverEntryPointSuccess) {
    *out = reinterpret_cast<Fn>(entry);
  } else {
    (void)cudaGetLastError();
  }
}

const DriverEntryPoints &driver() {
  static const DriverEntryPoints points = [] {
    DriverEntryPoints p;
    resolve("cuGraphKernelNodeGetParams", 12000, &p.kernel_node_get_params);
    resolve("cuFuncGetParamInfo", 12040, &p.func_get_param_info);
    resolve("cuKernelGetParamInfo", 12040, &p.kernel_get_param_info);
    resolve("cuFuncGetName", 12030, &p.func_get_name);
    resolve("cuKernelGetName", 12030, &p.kernel_get_name);
    resolve("cuMemGetAddressRange", 3020, &p.mem_get_address_range);
    return p;
  }();
  return points;
}

CUresult driver_kernel_node_get_params(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS *params) {
  const auto fn = driver().kernel_node_get_params;
  return fn != nullptr ? fn(node, params) : CUDA_ERROR_NOT_FOUND;
}
CUresult driver_func_get_param_info(CUfunction func, size_t index, size_t *offset, size_t *size) {
  const auto fn = driver().func_get_param_info;
  return fn != nullptr ? fn(func, index, offset, size) : CUDA_ERROR_NOT_FOUND;
}
CUresult driver_kernel_get_param_info(CUkernel kernel, size_t index, size_t *offset, size_t *size) {
  const auto fn = driver().kernel_get_param_info;
  return fn != nullptr ? fn(kernel, index, offset, size) : CUDA_ERROR_NOT_FOUND;
}
CUresult driver_func_get_name(const char **name, CUfunction func) {
  const auto fn = driver().func_get_name;
  return fn != nullptr ? fn(name, func) : CUDA_ERROR_NOT_FOUND;
}
CUresult driver_kernel_get_name(const char **name, CUkernel kernel) {
  const auto fn = driver().kernel_get_name;
  return fn != nullptr ? fn(name, kernel) : CUDA_ERROR_NOT_FOUND;
}
CUresult driver_mem_get_address_range(CUdeviceptr *base, size_t *size, CUdeviceptr ptr) {
  const auto fn = driver().mem_get_address_range;
  return fn != nullptr ? fn(base, size, ptr) : CUDA_ERROR_NOT_FOUND;
}

cudaError_t get_last_error() {
  return cudaGetLastError();
}
cudaError_t stream_wait_event(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return cudaStreamWaitEvent(stream, event, flags);
}
cudaError_t event_record_with_flags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  return cudaEventRecordWithFlags(event, stream, flags);
}
cudaError_t graph_instantiate_with_flags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                         unsigned long long flags) {
  return cudaGraphInstantiateWithFlags(exec, graph, flags);
}
cudaError_t memcpy_async(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                         cudaStream_t stream) {
  return cudaMemcpyAsync(dst, src, bytes, kind, stream);
}
cudaError_t memset_async(void *dst, int value, size_t bytes, cudaStream_t stream) {
  return cudaMemsetAsync(dst, value, bytes, stream);
}
cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream) {
  return cudaGraphLaunch(exec, stream);
}
cudaError_t graph_upload(cudaGraphExec_t exec, cudaStream_t stream) {
  return cudaGraphUpload(exec, stream);
}
cudaError_t launch_kernel(const void *function, dim3 grid, dim3 block, void **args,
                          size_t shared_bytes, cudaStream_t stream) {
  return cudaLaunchKernel(function, grid, block, args, shared_bytes, stream);
}
cudaError_t stream_get_capture_info(cudaStream_t stream, cudaStreamCaptureStatus *status,
                                    unsigned long long *id, cudaGraph_t *graph,
                                    const cudaGraphNode_t **dependencies,
                                    const cudaGraphEdgeData **edges, size_t *count) {
  return cudaStreamGetCaptureInfo(stream, status, id, graph, dependencies, edges, count);
}
cudaError_t stream_update_capture_dependencies(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                               const cudaGraphEdgeData *edges, size_t count,
                                               unsigned int flags) {
  return cudaStreamUpdateCaptureDependencies(stream, dependencies, edges, count, flags);
}

const CudaApi kRealApi{
    .get_error_name = &cudaGetErrorName,
    .get_error_string = &cudaGetErrorString,
    .get_last_error = &get_last_error,
    .get_device_count = &cudaGetDeviceCount,
    .set_device = &cudaSetDevice,
    .malloc = &cudaMalloc,
    .free = &cudaFree,
    .memcpy_async = &memcpy_async,
    .memset_async = &memset_async,
    .pointer_get_attributes = &cudaPointerGetAttributes,
    .stream_create_with_flags = &cudaStreamCreateWithFlags,
    .stream_destroy = &cudaStreamDestroy,
    .stream_synchronize = &cudaStreamSynchronize,
    .stream_query = &cudaStreamQuery,
    .stream_wait_event = &stream_wait_event,
    .stream_begin_capture = &cudaStreamBeginCapture,
    .stream_end_capture = &cudaStreamEndCapture,
    .stream_is_capturing = &cudaStreamIsCapturing,
    .thread_exchange_stream_capture_mode = &cudaThreadExchangeStreamCaptureMode,
    .event_create_with_flags = &cudaEventCreateWithFlags,
    .event_destroy = &cudaEventDestroy,
    .event_record_with_flags = &event_record_with_flags,
    .event_synchronize = &cudaEventSynchronize,
    .event_query = &cudaEventQuery,
    .graph_get_nodes = &cudaGraphGetNodes,
    .graph_node_get_type = &cudaGraphNodeGetType,
    .graph_memcpy_node_get_params = &cudaGraphMemcpyNodeGetParams,
    .graph_memset_node_get_params = &cudaGraphMemsetNodeGetParams,
    .graph_child_graph_node_get_graph = &cudaGraphChildGraphNodeGetGraph,
    .func_get_attributes = &cudaFuncGetAttributes,
    .graph_instantiate_with_flags = &graph_instantiate_with_flags,
    .graph_upload = &graph_upload,
    .graph_launch = &graph_launch,
    .graph_exec_destroy = &cudaGraphExecDestroy,
    .graph_destroy = &cudaGraphDestroy,
    .launch_kernel = &launch_kernel,
    .stream_get_capture_info = &stream_get_capture_info,
    .stream_update_capture_dependencies = &stream_update_capture_dependencies,
    .device_get_attribute = &cudaDeviceGetAttribute,
    .driver_kernel_node_get_params = &driver_kernel_node_get_params,
    .driver_func_get_param_info = &driver_func_get_param_info,
    .driver_kernel_get_param_info = &driver_kernel_get_param_info,
    .driver_func_get_name = &driver_func_get_name,
    .driver_kernel_get_name = &driver_kernel_get_name,
    .driver_mem_get_address_range = &driver_mem_get_address_range,
};

}  // namespace

const CudaApi &real_cuda_api() noexcept {
  return kRealApi;
}

}  // namespace replayrt::cuda
