#include "platform/cuda/cuda_graph_audit.h"

#include <span>

#include "common/format.h"
#include "platform/cuda/cuda_status.h"
#include "platform/cuda/graph_audit.h"

namespace replayrt::cuda {

namespace {

// More parameters than any kernel has: a layout that claims more is refused.
constexpr std::size_t kMaxKernelParameters = 4096;
// Child graphs nest at most this deep in an audit.
constexpr int kMaxGraphDepth = 16;

const char *kernel_name(const CudaApi &api, const CUDA_KERNEL_NODE_PARAMS &params) {
  const char *name = nullptr;
  if (params.func != nullptr) {
    if (api.driver_func_get_name(&name, params.func) != CUDA_SUCCESS) {
      name = nullptr;
    }
  } else if (params.kern != nullptr) {
    if (api.driver_kernel_get_name(&name, params.kern) != CUDA_SUCCESS) {
      name = nullptr;
    }
  }
  return name != nullptr ? name : "(name unavailable)";
}

Status unauditable(std::size_t node, const char *kernel, const std::string &why) {
  return Status::error(
      RRT_ERR_INVALID_STATE,
      format("captured graph: kernel node %zu (kernel '%s') cannot be audited for device "
             "addresses: %s; replayrt refuses a graph it cannot check",
             node, kernel, why.c_str()));
}

CUresult param_info(const CudaApi &api, const CUDA_KERNEL_NODE_PARAMS &params, std::size_t index,
                    std::size_t *offset, std::size_t *size) {
  if (params.func != nullptr) {
    return api.driver_func_get_param_info(params.func, index, offset, size);
  }
  if (params.kern != nullptr) {
    return api.driver_kernel_get_param_info(params.kern, index, offset, size);
  }
  return CUDA_ERROR_INVALID_HANDLE;
}

// The packed parameter buffer of an `extra` array, or an empty span when it holds none.
std::span<const std::byte> packed_parameters(void *const *extra) {
  const void *buffer = nullptr;
  const std::size_t *size = nullptr;
  for (std::size_t i = 0; i < 64 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
      buffer = extra[i + 1];
    } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
      size = static_cast<const std::size_t *>(extra[i + 1]);
    } else {
      return {};
    }
  }
  if (buffer == nullptr || size == nullptr) {
    return {};
  }
  return {static_cast<const std::byte *>(buffer), *size};
}

Status audit_kernel_node(const CudaApi &api, cudaGraphNode_t node, std::size_t index,
                         const AllocationTable &table, std::vector<CapturedAddress> *found) {
  CUDA_KERNEL_NODE_PARAMS params{};
  if (const CUresult read = api.driver_kernel_node_get_params(node, &params);
      read != CUDA_SUCCESS) {
    return unauditable(
        index, "(unread)",
        format("cuGraphKernelNodeGetParams returned CUresult %d", static_cast<int>(read)));
  }
  AuditCounts counts;
  if (params.kernelParams == nullptr && params.extra != nullptr) {
    const std::span<const std::byte> packed = packed_parameters(params.extra);
    if (packed.empty()) {
      return unauditable(index, kernel_name(api, params),
                         "its `extra` launch options hold no packed parameter buffer");
    }
    const KernelParameter whole{0, packed.size()};
    scan_kernel_parameters(packed, std::span<const KernelParameter>(&whole, 1), table, found,
                           &counts);
    return Status::ok();
  }
  for (std::size_t i = 0;; ++i) {
    std::size_t offset = 0;
    std::size_t size = 0;
    const CUresult known = param_info(api, params, i, &offset, &size);
    if (known == CUDA_ERROR_INVALID_VALUE) {
      return Status::ok();  // past the kernel's last parameter
    }
    if (known != CUDA_SUCCESS) {
      return unauditable(index, kernel_name(api, params),
                         format("the driver reports no layout for parameter %zu (CUresult %d)", i,
                                static_cast<int>(known)));
    }
    if (i >= kMaxKernelParameters || params.kernelParams == nullptr) {
      return unauditable(index, kernel_name(api, params),
                         i >= kMaxKernelParameters ? "it claims more than 4096 parameters"
                                                   : "its parameters are not readable");
    }
    const KernelParameter whole{0, size};
    scan_kernel_parameters(
        std::span<const std::byte>(static_cast<const std::byte *>(params.kernelParams[i]), size),
        std::span<const KernelParameter>(&whole, 1), table, found, &counts);
  }
}

Status audit_graph(const CudaApi &api, cudaGraph_t graph, const AllocationTable &table,
                   std::vector<CapturedAddress> *found, GraphAuditStats *stats, int depth) {
  if (depth > kMaxGraphDepth) {
    return Status::error(RRT_ERR_INVALID_STATE, "captured graph: child graphs nest too deep");
  }
  std::size_t count = 0;
  RRT_RETURN_IF_ERROR(
      cuda_status(api, api.graph_get_nodes(graph, nullptr, &count), "cudaGraphGetNodes"));
  std::vector<cudaGraphNode_t> nodes(count);
  if (count != 0) {
    RRT_RETURN_IF_ERROR(
        cuda_status(api, api.graph_get_nodes(graph, nodes.data(), &count), "cudaGraphGetNodes"));
  }
  for (std::size_t n = 0; n < count; ++n) {
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    RRT_RETURN_IF_ERROR(
        cuda_status(api, api.graph_node_get_type(nodes[n], &type), "cudaGraphNodeGetType"));
    switch (type) {
      case cudaGraphNodeTypeKernel:
        ++stats->kernel_nodes;
        RRT_RETURN_IF_ERROR(audit_kernel_node(api, nodes[n], n, table, found));
        break;
      case cudaGraphNodeTypeMemcpy: {
        ++stats->copy_nodes;
        cudaMemcpy3DParms params{};
        RRT_RETURN_IF_ERROR(cuda_status(api, api.graph_memcpy_node_get_params(nodes[n], &params),
                                        "cudaGraphMemcpyNodeGetParams"));
        (void)record_if_tracked(reinterpret_cast<std::uintptr_t>(params.srcPtr.ptr), table, found);
        (void)record_if_tracked(reinterpret_cast<std::uintptr_t>(params.dstPtr.ptr), table, found);
        break;
      }
      case cudaGraphNodeTypeMemset: {
        ++stats->copy_nodes;
        cudaMemsetParams params{};
        RRT_RETURN_IF_ERROR(cuda_status(api, api.graph_memset_node_get_params(nodes[n], &params),
                                        "cudaGraphMemsetNodeGetParams"));
        (void)record_if_tracked(reinterpret_cast<std::uintptr_t>(params.dst), table, found);
        break;
      }
      case cudaGraphNodeTypeGraph: {
        cudaGraph_t child = nullptr;
        RRT_RETURN_IF_ERROR(cuda_status(api, api.graph_child_graph_node_get_graph(nodes[n], &child),
                                        "cudaGraphChildGraphNodeGetGraph"));
        RRT_RETURN_IF_ERROR(audit_graph(api, child, table, found, stats, depth + 1));
        break;
      }
      case cudaGraphNodeTypeMemAlloc:
      case cudaGraphNodeTypeMemFree:
        return Status::error(RRT_ERR_INVALID_STATE,
                             "captured graph holds a memory allocation or free node (work "
                             "enqueued during the capture called cudaMallocAsync or "
                             "cudaFreeAsync); replayrt graphs never allocate");
      case cudaGraphNodeTypeConditional:
        return Status::error(RRT_ERR_INVALID_STATE,
                             "captured graph holds a conditional node, which replayrt cannot "
                             "audit for stale addresses");
      case cudaGraphNodeTypeHost:
        ++stats->host_nodes;
        break;
      case cudaGraphNodeTypeEventRecord:
      case cudaGraphNodeTypeWaitEvent:
        ++stats->event_nodes;
        break;
      case cudaGraphNodeTypeEmpty:
      case cudaGraphNodeTypeExtSemaphoreSignal:
      case cudaGraphNodeTypeExtSemaphoreWait:
        break;
      default:
        // The driver's batch memory operations (type 12, absent from the runtime's enum) and
        // types a later CUDA adds may hold device addresses the audit cannot find.
        return Status::error(RRT_ERR_INVALID_STATE,
                             format("captured graph holds node %zu of type %d, which replayrt "
                                    "cannot audit for stale addresses",
                                    n, static_cast<int>(type)));
    }
  }
  return Status::ok();
}

}  // namespace

Status audit_cuda_graph(const CudaApi &api, cudaGraph_t graph, const AllocationTable &table,
                        std::vector<CapturedAddress> *found, GraphAuditStats *stats) {
  return audit_graph(api, graph, table, found, stats, 0);
}

}  // namespace replayrt::cuda
