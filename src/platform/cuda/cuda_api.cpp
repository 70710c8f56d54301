#include "platform/cuda/cuda_api.h"

namespace replayrt::cuda {

namespace {

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
    .graph_kernel_node_get_params = &cudaGraphKernelNodeGetParams,
    .graph_memcpy_node_get_params = &cudaGraphMemcpyNodeGetParams,
    .graph_memset_node_get_params = &cudaGraphMemsetNodeGetParams,
    .graph_child_graph_node_get_graph = &cudaGraphChildGraphNodeGetGraph,
    .func_get_param_info = &cudaFuncGetParamInfo,
    .func_get_attributes = &cudaFuncGetAttributes,
    .graph_instantiate_with_flags = &graph_instantiate_with_flags,
    .graph_upload = &graph_upload,
    .graph_launch = &graph_launch,
    .graph_exec_destroy = &cudaGraphExecDestroy,
    .graph_destroy = &cudaGraphDestroy,
};

}  // namespace

const CudaApi &real_cuda_api() noexcept {
  return kRealApi;
}

}  // namespace replayrt::cuda
