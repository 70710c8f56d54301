#include "support/fake_cuda.h"

#include <cstdlib>
#include <cstring>

namespace replayrt::testing {

namespace {

FakeCuda *g_fake = nullptr;
using Op = FakeCuda::Op;

// Graph handles point at a std::vector<Op>; executable graphs at a copy of it.
std::vector<Op> *graph_of(cudaGraph_t graph) {
  return reinterpret_cast<std::vector<Op> *>(graph);
}

FakeCuda::Stream *stream_of(cudaStream_t stream) {
  return reinterpret_cast<FakeCuda::Stream *>(stream);
}

void run(const Op &op) {
  switch (op.kind) {
    case Op::Kind::kCopy:
      std::memmove(op.dst, op.src, op.bytes);
      break;
    case Op::Kind::kMemset:
      std::memset(op.dst, op.value, op.bytes);
      break;
    case Op::Kind::kRecord:
    case Op::Kind::kWait:
      break;
  }
}

cudaError_t submit(cudaStream_t stream, const Op &op) {
  FakeCuda::Stream *s = stream_of(stream);
  if (s == nullptr) {
    return cudaErrorStreamCaptureImplicit;  // the backend must never use the legacy stream
  }
  if (s->capturing) {
    s->graph->push_back(op);
  } else {
    run(op);
  }
  return cudaSuccess;
}

cudaError_t fake_get_last_error() {
  return cudaSuccess;
}
cudaError_t fake_get_device_count(int *count) {
  if (g_fake->device_count_error != cudaSuccess) {
    return g_fake->device_count_error;
  }
  *count = g_fake->device_count;
  return cudaSuccess;
}
cudaError_t fake_set_device(int) {
  return cudaSuccess;
}
cudaError_t fake_malloc(void **out, size_t bytes) {
  ++g_fake->malloc_calls;
  if (g_fake->malloc_failures_left > 0) {
    --g_fake->malloc_failures_left;
    return cudaErrorMemoryAllocation;
  }
  if (g_fake->reuse_freed) {
    for (auto it = g_fake->freed_.begin(); it != g_fake->freed_.end(); ++it) {
      if (it->second == bytes) {
        *out = it->first;
        g_fake->blocks_.emplace(it->first, bytes);
        g_fake->freed_.erase(it);
        return cudaSuccess;
      }
    }
  }
  // cudaMalloc aligns to 256 bytes; the backend must align further itself.
  void *block = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (block == nullptr) {
    return cudaErrorMemoryAllocation;
  }
  g_fake->blocks_.emplace(block, bytes);
  *out = block;
  return cudaSuccess;
}
cudaError_t fake_free(void *ptr) {
  ++g_fake->free_calls;
  const auto it = g_fake->blocks_.find(ptr);
  if (it == g_fake->blocks_.end()) {
    return cudaErrorInvalidValue;
  }
  g_fake->freed_.emplace_back(it->first, it->second);
  g_fake->blocks_.erase(it);
  return cudaSuccess;
}
cudaError_t fake_memcpy_async(void *dst, const void *src, size_t bytes, cudaMemcpyKind,
                              cudaStream_t stream) {
  return submit(stream, Op{Op::Kind::kCopy, dst, src, bytes, 0});
}
cudaError_t fake_memset_async(void *dst, int value, size_t bytes, cudaStream_t stream) {
  return submit(stream, Op{Op::Kind::kMemset, dst, nullptr, bytes, value});
}
cudaError_t fake_pointer_get_attributes(cudaPointerAttributes *attributes, const void *ptr) {
  *attributes = cudaPointerAttributes{};
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  for (const auto &[block, bytes] : g_fake->blocks_) {
    const auto base = reinterpret_cast<std::uintptr_t>(block);
    if (address >= base && address - base < bytes) {
      attributes->type = cudaMemoryTypeDevice;
      attributes->device = 0;
      return cudaSuccess;
    }
  }
  attributes->type = cudaMemoryTypeUnregistered;
  return cudaSuccess;
}
cudaError_t fake_stream_create(cudaStream_t *out, unsigned int) {
  ++g_fake->live_streams;
  *out = reinterpret_cast<cudaStream_t>(new FakeCuda::Stream);
  return cudaSuccess;
}
cudaError_t fake_stream_destroy(cudaStream_t stream) {
  --g_fake->live_streams;
  delete stream_of(stream);
  return cudaSuccess;
}
cudaError_t fake_stream_synchronize(cudaStream_t) {
  return cudaSuccess;
}
cudaError_t fake_stream_query(cudaStream_t) {
  ++g_fake->stream_queries;
  return g_fake->stream_query_result;
}
cudaError_t fake_stream_wait_event(cudaStream_t stream, cudaEvent_t, unsigned int) {
  return submit(stream, Op{Op::Kind::kWait, nullptr, nullptr, 0, 0});
}
cudaError_t fake_begin_capture(cudaStream_t stream, cudaStreamCaptureMode) {
  if (g_fake->begin_capture_error != cudaSuccess) {
    return g_fake->begin_capture_error;
  }
  FakeCuda::Stream *s = stream_of(stream);
  s->capturing = true;
  s->graph = new std::vector<Op>;
  ++g_fake->live_graphs;
  return cudaSuccess;
}
cudaError_t fake_end_capture(cudaStream_t stream, cudaGraph_t *out) {
  FakeCuda::Stream *s = stream_of(stream);
  if (!s->capturing) {
    return cudaErrorIllegalState;
  }
  s->capturing = false;
  if (g_fake->end_capture_error != cudaSuccess) {
    // An invalidated capture yields no graph; CUDA releases it.
    delete s->graph;
    --g_fake->live_graphs;
    s->graph = nullptr;
    *out = nullptr;
    return g_fake->end_capture_error;
  }
  *out = reinterpret_cast<cudaGraph_t>(s->graph);
  s->graph = nullptr;
  return cudaSuccess;
}
cudaError_t fake_is_capturing(cudaStream_t stream, cudaStreamCaptureStatus *status) {
  *status =
      stream_of(stream)->capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
cudaError_t fake_exchange_mode(cudaStreamCaptureMode *) {
  ++g_fake->relaxed_mode_exchanges;
  return cudaSuccess;
}
cudaError_t fake_event_create(cudaEvent_t *out, unsigned int) {
  ++g_fake->live_events;
  *out = reinterpret_cast<cudaEvent_t>(new int(0));
  return cudaSuccess;
}
cudaError_t fake_event_destroy(cudaEvent_t event) {
  --g_fake->live_events;
  delete reinterpret_cast<int *>(event);
  return cudaSuccess;
}
cudaError_t fake_event_record(cudaEvent_t, cudaStream_t stream, unsigned int) {
  return submit(stream, Op{Op::Kind::kRecord, nullptr, nullptr, 0, 0});
}
cudaError_t fake_event_synchronize(cudaEvent_t) {
  return cudaSuccess;
}
cudaError_t fake_event_query(cudaEvent_t) {
  return cudaSuccess;
}
cudaError_t fake_graph_get_nodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *count) {
  std::vector<Op> *ops = graph_of(graph);
  if (nodes != nullptr) {
    for (std::size_t i = 0; i < *count && i < ops->size(); ++i) {
      nodes[i] = reinterpret_cast<cudaGraphNode_t>(&(*ops)[i]);
    }
  }
  *count = ops->size();
  return cudaSuccess;
}
cudaError_t fake_node_get_type(cudaGraphNode_t node, cudaGraphNodeType *type) {
  switch (reinterpret_cast<const Op *>(node)->kind) {
    case Op::Kind::kCopy:
      *type = cudaGraphNodeTypeMemcpy;
      break;
    case Op::Kind::kMemset:
      *type = cudaGraphNodeTypeMemset;
      break;
    case Op::Kind::kRecord:
      *type = cudaGraphNodeTypeEventRecord;
      break;
    case Op::Kind::kWait:
      *type = cudaGraphNodeTypeWaitEvent;
      break;
  }
  return cudaSuccess;
}
cudaError_t fake_kernel_params(cudaGraphNode_t, cudaKernelNodeParams *) {
  return cudaErrorInvalidValue;
}
cudaError_t fake_memcpy_params(cudaGraphNode_t node, cudaMemcpy3DParms *params) {
  const Op *op = reinterpret_cast<const Op *>(node);
  *params = cudaMemcpy3DParms{};
  params->srcPtr.ptr = const_cast<void *>(op->src);
  params->dstPtr.ptr = op->dst;
  return cudaSuccess;
}
cudaError_t fake_memset_params(cudaGraphNode_t node, cudaMemsetParams *params) {
  *params = cudaMemsetParams{};
  params->dst = reinterpret_cast<const Op *>(node)->dst;
  return cudaSuccess;
}
cudaError_t fake_child_graph(cudaGraphNode_t, cudaGraph_t *) {
  return cudaErrorInvalidValue;
}
cudaError_t fake_param_info(const void *, size_t, size_t *, size_t *) {
  return cudaErrorInvalidValue;
}
cudaError_t fake_func_attributes(cudaFuncAttributes *, const void *) {
  return cudaSuccess;
}
cudaError_t fake_instantiate(cudaGraphExec_t *out, cudaGraph_t graph, unsigned long long) {
  if (g_fake->instantiate_error != cudaSuccess) {
    return g_fake->instantiate_error;
  }
  ++g_fake->live_execs;
  *out = reinterpret_cast<cudaGraphExec_t>(new std::vector<Op>(*graph_of(graph)));
  return cudaSuccess;
}
cudaError_t fake_upload(cudaGraphExec_t, cudaStream_t) {
  return g_fake->upload_error;
}
cudaError_t fake_launch(cudaGraphExec_t exec, cudaStream_t stream) {
  ++g_fake->graph_launches;
  for (const Op &op : *reinterpret_cast<std::vector<Op> *>(exec)) {
    if (const cudaError_t error = submit(stream, op); error != cudaSuccess) {
      return error;
    }
  }
  return cudaSuccess;
}
cudaError_t fake_exec_destroy(cudaGraphExec_t exec) {
  --g_fake->live_execs;
  delete reinterpret_cast<std::vector<Op> *>(exec);
  return cudaSuccess;
}
cudaError_t fake_graph_destroy(cudaGraph_t graph) {
  --g_fake->live_graphs;
  delete graph_of(graph);
  return cudaSuccess;
}

}  // namespace

FakeCuda::FakeCuda() {
  g_fake = this;
  api_ = cuda::CudaApi{
      .get_error_name = &cudaGetErrorName,
      .get_error_string = &cudaGetErrorString,
      .get_last_error = &fake_get_last_error,
      .get_device_count = &fake_get_device_count,
      .set_device = &fake_set_device,
      .malloc = &fake_malloc,
      .free = &fake_free,
      .memcpy_async = &fake_memcpy_async,
      .memset_async = &fake_memset_async,
      .pointer_get_attributes = &fake_pointer_get_attributes,
      .stream_create_with_flags = &fake_stream_create,
      .stream_destroy = &fake_stream_destroy,
      .stream_synchronize = &fake_stream_synchronize,
      .stream_query = &fake_stream_query,
      .stream_wait_event = &fake_stream_wait_event,
      .stream_begin_capture = &fake_begin_capture,
      .stream_end_capture = &fake_end_capture,
      .stream_is_capturing = &fake_is_capturing,
      .thread_exchange_stream_capture_mode = &fake_exchange_mode,
      .event_create_with_flags = &fake_event_create,
      .event_destroy = &fake_event_destroy,
      .event_record_with_flags = &fake_event_record,
      .event_synchronize = &fake_event_synchronize,
      .event_query = &fake_event_query,
      .graph_get_nodes = &fake_graph_get_nodes,
      .graph_node_get_type = &fake_node_get_type,
      .graph_kernel_node_get_params = &fake_kernel_params,
      .graph_memcpy_node_get_params = &fake_memcpy_params,
      .graph_memset_node_get_params = &fake_memset_params,
      .graph_child_graph_node_get_graph = &fake_child_graph,
      .func_get_param_info = &fake_param_info,
      .func_get_attributes = &fake_func_attributes,
      .graph_instantiate_with_flags = &fake_instantiate,
      .graph_upload = &fake_upload,
      .graph_launch = &fake_launch,
      .graph_exec_destroy = &fake_exec_destroy,
      .graph_destroy = &fake_graph_destroy,
  };
}

FakeCuda::~FakeCuda() {
  for (const auto &[block, bytes] : blocks_) {
    std::free(block);
  }
  for (const auto &[block, bytes] : freed_) {
    std::free(block);
  }
  g_fake = nullptr;
}

}  // namespace replayrt::testing
