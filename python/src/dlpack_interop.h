// DLPack both ways: a DeviceArray exported as a DLPack capsule (a view, never a copy), and a
// DLPack producer's device memory admitted as a context's DEVICE tensor memory
// (Context.register), held for as long as anything may reach it.
#pragma once

#include <memory>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <replayrt/replayrt.hpp>

#include "device_array.h"
#include "dlpack.h"
#include "without_gil.h"

namespace replayrt::python {

namespace py = pybind11;

// Where DLPack says a device array's memory is: the CUDA device on CUDA; the host on the
// simulator, whose device memory is host memory (CPU has the one device 0, whatever the
// simulator context's device id).
DLDevice dlpack_device(const DeviceArray &array);

// A DLPack tensor this module took from a producer's capsule (renamed "used_dltensor"): it is
// this module's to hand back through its deleter.
struct DlpackTensorDeleter {
  void operator()(DLManagedTensor *managed) const {
    if (managed->deleter != nullptr) {
      managed->deleter(managed);
    }
  }
};
using TakenDlpackTensor = std::unique_ptr<DLManagedTensor, DlpackTensorDeleter>;

// Foreign device memory a context admitted (Context.register): the producer, the DLPack tensor
// taken from it, and the registration. Ending the registration waits for the context's queued
// work, so it runs without the GIL. When the last owner lets go, the registration ends first;
// then the tensor and the producer are let go of, under the GIL, which the last owner may not
// hold (a consumer of a DLPack export of the registered array may drop it on any thread).
struct ForeignMemory {
  py::object producer;
  TakenDlpackTensor tensor;
  rrt::DeviceRegistration registration;

  ForeignMemory() = default;
  ForeignMemory(const ForeignMemory &) = delete;
  ForeignMemory &operator=(const ForeignMemory &) = delete;
  ForeignMemory(ForeignMemory &&) = delete;
  ForeignMemory &operator=(ForeignMemory &&) = delete;
  ~ForeignMemory() {
    destroy_without_gil(registration);
    const PyGILState_STATE gil = PyGILState_Ensure();
    tensor.reset();
    Py_XDECREF(producer.release().ptr());
    PyGILState_Release(gil);
  }

  // RegisteredArray.close(), called with the GIL held: takes the registration out of
  // `registration` under the GIL, so every thread sees the array closed from then on (and a
  // second close does nothing), then ends it without the GIL. Throws what
  // rrt_device_unregister returns; the registration is gone either way.
  void close();
};

// A device array over foreign memory (Context.register). Its memory is the registration's.
struct RegisteredArray : DeviceArray {
  std::shared_ptr<ForeignMemory> foreign;
};

// DeviceArray.__dlpack__ with the array API standard's keywords. The capsule is always the
// unversioned one (the standard has a consumer that asks for `max_version` check what it got)
// and always a view: copy=True, another device than the array's, or a stream for CPU memory
// (the simulator's: the standard allows only None there) is a BufferError. On CUDA the stream
// orders nothing: the caller synchronizes the replayrt stream that wrote the array first.
py::capsule dlpack_export(const DeviceArray &array, const py::object &stream,
                          const py::object &max_version, const py::object &dl_device,
                          const py::object &copy);

// Context.register: `source`'s memory, taken through DLPack, admitted as DEVICE tensor memory
// (a bfloat16 tensor as uint16, its bits). TypeError for an object that is no DLPack producer,
// a capsule already used, an element type numpy cannot hold or a tensor that is not
// C-contiguous; the context's refusal (an rrt::Error) otherwise, its message naming the source.
RegisteredArray register_foreign(PythonContext &ctx, const py::object &source);

// A bfloat16 tensor in host memory (a CPU torch one, which numpy cannot view) as a numpy
// uint16 array viewing its bits through DLPack, without a copy. The array's base holds the
// DLPack tensor, and through it the producer's memory. TypeError, its message starting with
// `what`, for a tensor whose is_neg() or is_conj() is true (a lazy negation DLPack drops), one
// on another device, another element type, or a producer whose __dlpack_device__ or
// __dlpack__ returns something else than DLPack describes.
py::array bfloat16_host_view(const py::handle &source, const std::string &what);

}  // namespace replayrt::python
