// CUDA errors as replayrt statuses.
#pragma once

#include <cuda_runtime_api.h>

#include <replayrt/values.h>

#include "common/status.h"
#include "platform/cuda/cuda_api.h"

namespace replayrt::cuda {

// cudaSuccess → RRT_OK; allocation failure → RRT_ERR_OUT_OF_MEMORY; invalid values, pointers
// and handles → RRT_ERR_INVALID_ARGUMENT; no device, no (or too old a) driver, no kernel image
// for the device, unsupported operations → RRT_ERR_UNSUPPORTED; stream-capture errors
// (cudaErrorStreamCapture*, cudaErrorCapturedEvent) and calls not permitted now →
// RRT_ERR_INVALID_STATE; device faults (illegal address or instruction, launch failure,
// assert, timeout, misaligned address, out of launch resources, an illegal address space) and
// hardware faults (uncorrectable ECC or NVLink errors, a contained error) →
// RRT_ERR_KERNEL_FAILED; anything else → RRT_ERR_INTERNAL.
rrt_status_t map_cuda_error(cudaError_t error) noexcept;

// True for the errors after which the CUDA context is unusable (device and hardware faults, and
// cudaErrorUnknown, which the runtime reports for faults it cannot name): every later call in
// the process fails.
bool is_sticky_device_fault(cudaError_t error) noexcept;

// OK for cudaSuccess; otherwise map_cuda_error's code with a message naming the call and the
// CUDA error ("cudaMalloc: cudaErrorMemoryAllocation (out of memory)").
Status cuda_status(const CudaApi &api, cudaError_t error, const char *call);

}  // namespace replayrt::cuda
