// The end-of-capture audit of a captured CUDA graph: every device address its nodes hold.
#pragma once

#include <cstdint>
#include <cuda_runtime_api.h>
#include <vector>

#include "common/status.h"
#include "platform/allocation_table.h"
#include "platform/cuda/cuda_api.h"
#include "platform/device.h"

namespace replayrt::cuda {

// What the audit saw in a captured graph.
struct GraphAuditStats {
  std::uint64_t kernel_nodes = 0;
  std::uint64_t copy_nodes = 0;  // memcpy and memset nodes
  std::uint64_t host_nodes = 0;
  std::uint64_t event_nodes = 0;  // event record and wait nodes
};

// Walks `graph`, recursing into child graphs, and appends to `found` every tracked device
// address (graph_audit.h: scan_kernel_parameters, record_if_tracked) that its nodes hold:
//   - kernel nodes, read through the driver (cuGraphKernelNodeGetParams), which reads a node
//     of any module: the library's own kernels, a user launcher's, a library's such as
//     cuBLAS. Their parameters come as kernelParams, laid out by cuFuncGetParamInfo (or
//     cuKernelGetParamInfo for a CUkernel), or as one packed `extra` buffer, whose every
//     aligned word is scanned;
//   - memcpy nodes (source and destination) and memset nodes (destination).
// A kernel node the audit cannot read (the driver call fails, its parameter layout is
// unavailable, its `extra` is not a packed buffer) is RRT_ERR_INVALID_STATE naming the node
// and its kernel: a graph is never trusted without its audit. Memory allocation or free nodes
// and conditional nodes are RRT_ERR_INVALID_STATE too (replayrt graphs neither allocate nor
// branch), and so is a node of any type not named here or below (the driver's batch memory
// operations, a type a later CUDA adds): host, event record and wait, empty and external
// semaphore nodes hold no device memory the audit tracks and pass. Requires the allocation
// table's lock (CudaDevice::with_table).
Status audit_cuda_graph(const CudaApi &api, cudaGraph_t graph, const AllocationTable &table,
                        std::vector<CapturedAddress> *found, GraphAuditStats *stats);

}  // namespace replayrt::cuda
