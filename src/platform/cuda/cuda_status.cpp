#include "platform/cuda/cuda_status.h"

#include <string>

namespace replayrt::cuda {

rrt_status_t map_cuda_error(cudaError_t error) noexcept {
  switch (error) {
    case cudaSuccess:
      return RRT_OK;
    case cudaErrorMemoryAllocation:
      return RRT_ERR_OUT_OF_MEMORY;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidResourceHandle:
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidMemcpyDirection:
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorInvalidConfiguration:
      return RRT_ERR_INVALID_ARGUMENT;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorNotSupported:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorDevicesUnavailable:
      return RRT_ERR_UNSUPPORTED;
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureMerge:
    case cudaErrorStreamCaptureUnmatched:
    case cudaErrorStreamCaptureUnjoined:
    case cudaErrorStreamCaptureIsolation:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorCapturedEvent:
    case cudaErrorStreamCaptureWrongThread:
    case cudaErrorNotPermitted:
    case cudaErrorIllegalState:
    case cudaErrorNotReady:
      return RRT_ERR_INVALID_STATE;
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorHardwareStackError:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchOutOfResources:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContained:
    case cudaErrorInvalidAddressSpace:
      return RRT_ERR_KERNEL_FAILED;
    default:
      return RRT_ERR_INTERNAL;
  }
}

bool is_sticky_device_fault(cudaError_t error) noexcept {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorHardwareStackError:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContained:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

Status cuda_status(const CudaApi &api, cudaError_t error, const char *call) {
  if (error == cudaSuccess) {
    return Status::ok();
  }
  const char *name = api.get_error_name(error);
  const char *text = api.get_error_string(error);
  std::string message = std::string(call) + ": " + (name != nullptr ? name : "cudaError") + " (" +
                        (text != nullptr ? text : "unknown") + ")";
  if (is_sticky_device_fault(error)) {
    message += "; the CUDA context is unusable for the rest of the process";
  }
  return Status::error(map_cuda_error(error), std::move(message));
}

}  // namespace replayrt::cuda
