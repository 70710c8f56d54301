// The CUDA backend's entry point for the device factory (platform/device_factory.h). Defined by
// platform/cuda/cuda_device.cpp when the backend is built, by cuda_unavailable.cpp otherwise.
#pragma once

#include <cstdint>
#include <memory>

#include "common/status.h"
#include "platform/device.h"

namespace replayrt {

// A CUDA device for CUDA device `device_id`. RRT_ERR_UNSUPPORTED when this build has no CUDA
// backend ("built without CUDA"), or when the CUDA runtime reports no usable device (the
// message names the CUDA error, for example cudaErrorInsufficientDriver on a machine without
// a driver); RRT_ERR_INVALID_ARGUMENT for an id past the device count.
Status create_cuda_device(std::int32_t device_id, std::unique_ptr<Device> *out);

// True when this build has the CUDA backend.
bool cuda_backend_built() noexcept;

}  // namespace replayrt
