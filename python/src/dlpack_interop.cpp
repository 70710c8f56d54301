#include "dlpack_interop.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>

#include "names.h"

namespace replayrt::python {

namespace py = pybind11;

DLDevice dlpack_device(const DeviceArray &array) {
  if (array.platform == RRT_PLATFORM_CUDA) {
    return {kDLCUDA, array.device_id};
  }
  return {kDLCPU, 0};
}

namespace {

// What a DLPack capsule owns: the tensor it hands over, its shape, and the memory.
struct DlpackExport {
  DLManagedTensor managed{};
  std::vector<std::int64_t> shape;
  std::shared_ptr<rrt::DeviceMemory> memory;
};

DLDataType dlpack_dtype(const py::dtype &dtype) {
  DLDataType out{};
  out.bits = static_cast<std::uint8_t>(dtype.itemsize() * 8);
  out.lanes = 1;
  switch (dtype.kind()) {
    case 'f':
      out.code = kDLFloat;
      break;
    case 'i':
      out.code = kDLInt;
      break;
    case 'u':
      out.code = kDLUInt;
      break;
    case 'b':
      out.code = kDLBool;
      break;
    default:
      throw py::type_error("replayrt: DLPack export needs an integer, floating or bool dtype");
  }
  return out;
}

py::capsule dlpack_capsule(const DeviceArray &array) {
  auto owned = std::make_unique<DlpackExport>();
  owned->shape = array.shape;
  owned->memory = array.memory;
  DLTensor &tensor = owned->managed.dl_tensor;
  tensor.data = array.live().data();
  tensor.device = dlpack_device(array);
  tensor.ndim = static_cast<std::int32_t>(owned->shape.size());
  tensor.dtype = dlpack_dtype(array.dtype);
  tensor.shape = owned->shape.data();
  tensor.strides = nullptr;
  tensor.byte_offset = 0;
  owned->managed.manager_ctx = owned.get();
  owned->managed.deleter = [](DLManagedTensor *self) {
    delete static_cast<DlpackExport *>(self->manager_ctx);
  };
  PyObject *capsule = PyCapsule_New(&owned->managed, "dltensor", [](PyObject *self) {
    if (PyCapsule_IsValid(self, "dltensor") != 0) {
      auto *managed = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(self, "dltensor"));
      managed->deleter(managed);
    }
  });
  if (capsule == nullptr) {
    throw py::error_already_set();
  }
  (void)owned.release();
  return py::reinterpret_steal<py::capsule>(capsule);
}

// The numpy dtype of a DLPack element type: signed and unsigned integers, floats and bools of
// one lane, and bfloat16 as uint16 (its bits: numpy has no bfloat16). TypeError otherwise.
py::dtype dtype_from_dlpack(const DLDataType &type) {
  std::string name;
  bool known = type.lanes == 1;
  switch (type.code) {
    case kDLInt:
    case kDLUInt:
      name = type.code == kDLInt ? "int" : "uint";
      known = known && (type.bits == 8 || type.bits == 16 || type.bits == 32 || type.bits == 64);
      break;
    case kDLFloat:
      name = "float";
      known = known && (type.bits == 16 || type.bits == 32 || type.bits == 64);
      break;
    case kDLBfloat:
      name = "uint";
      known = known && type.bits == 16;
      break;
    case kDLBool:
      name = "bool";
      known = known && type.bits == 8;
      break;
    default:
      known = false;
  }
  if (!known) {
    throw py::type_error(
        "replayrt: DLPack tensors of integers, floats, bfloat16 or bools of one lane are "
        "taken, not DLPack type code " +
        std::to_string(type.code) + " of " + std::to_string(type.bits) + " bits and " +
        std::to_string(type.lanes) + " lanes");
  }
  return py::dtype(type.code == kDLBool ? name : name + std::to_string(type.bits));
}

// The DLPack tensor of `source`'s __dlpack__() (called with no arguments), taken from its
// capsule: the capsule is renamed "used_dltensor" and the tensor is the caller's to hand back.
// TypeError naming `use` for an object without __dlpack__ or a capsule already used.
TakenDlpackTensor take_dlpack(const py::handle &source, const std::string &use) {
  if (!py::hasattr(source, "__dlpack__")) {
    throw py::type_error("replayrt: " + use + " takes a DLPack producer (an object with " +
                         "__dlpack__), not " + type_name(source));
  }
  const py::object capsule = source.attr("__dlpack__")();
  if (PyCapsule_IsValid(capsule.ptr(), "dltensor") == 0) {
    throw py::type_error("replayrt: " + use +
                         " needs __dlpack__() to return an unused DLPack capsule (named "
                         "'dltensor')");
  }
  auto *managed = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) {
    throw py::error_already_set();
  }
  return TakenDlpackTensor(managed);
}

// The bytes of a C-contiguous DLPack tensor (compact row-major: no strides, or the strides of
// one, extents of 1 aside); TypeError for any other layout.
std::size_t contiguous_bytes(const DLTensor &tensor, std::size_t itemsize) {
  std::size_t elements = 1;
  std::int64_t expected_stride = 1;
  for (std::int32_t dim = tensor.ndim - 1; dim >= 0; --dim) {
    const std::int64_t extent = tensor.shape[dim];
    if (extent < 0) {
      throw py::value_error("replayrt: register got a DLPack tensor with a negative extent");
    }
    if (tensor.strides != nullptr && extent != 1 && tensor.strides[dim] != expected_stride) {
      throw py::type_error(
          "replayrt: register takes C-contiguous tensors only (make one with "
          ".contiguous() or numpy.ascontiguousarray first)");
    }
    expected_stride *= extent;
    elements *= static_cast<std::size_t>(extent);
  }
  return elements * itemsize;
}

}  // namespace

py::capsule dlpack_export(const DeviceArray &array, const py::object &stream,
                          const py::object & /*max_version*/, const py::object &dl_device,
                          const py::object &copy) {
  const DLDevice device = dlpack_device(array);
  if (!copy.is_none() && copy.cast<bool>()) {
    throw py::buffer_error("replayrt: a DeviceArray's DLPack export never copies (copy=True)");
  }
  if (!dl_device.is_none()) {
    const auto requested = dl_device.cast<std::pair<int, int>>();
    if (requested.first != device.device_type || requested.second != device.device_id) {
      throw py::buffer_error(
          "replayrt: the array is on DLPack device (" + std::to_string(device.device_type) + ", " +
          std::to_string(device.device_id) + "), not device (" + std::to_string(requested.first) +
          ", " + std::to_string(requested.second) + "); the export never copies");
    }
  }
  if (device.device_type == kDLCPU && !stream.is_none()) {
    throw py::buffer_error(
        "replayrt: a stream is given for CPU memory (the simulator's arrays); the DLPack "
        "standard allows only stream=None there");
  }
  return dlpack_capsule(array);
}

void ForeignMemory::close() {
  rrt::DeviceRegistration ending = std::move(registration);
  const py::gil_scoped_release release;
  ending.unregister();
}

py::array bfloat16_host_view(const py::handle &source, const std::string &what) {
  const std::string type = type_name(source);
  for (const char *bit : {"is_neg", "is_conj"}) {
    if (py::hasattr(source, bit) && source.attr(bit)().cast<bool>()) {
      std::string message = "replayrt: ";
      message += what;
      message += ": this ";
      message += type;
      message += "'s ";
      message += bit;
      message +=
          "() is true, a lazy negation or conjugation DLPack does not carry; pass the "
          "tensor's resolve_neg() or resolve_conj()";
      throw py::type_error(message);
    }
  }
  if (py::hasattr(source, "__dlpack_device__")) {
    const py::object device = source.attr("__dlpack_device__")();
    std::pair<int, int> where{};
    try {
      where = device.cast<std::pair<int, int>>();
    } catch (const py::cast_error &) {
      throw py::type_error("replayrt: " + what + ": this " + type + "'s __dlpack_device__() is " +
                           py::repr(device).cast<std::string>() +
                           ", not a (device type, device id) pair of ints");
    }
    if (where.first != kDLCPU) {
      throw py::type_error("replayrt: " + what + ": this " + type + " is on DLPack device (" +
                           std::to_string(where.first) + ", " + std::to_string(where.second) +
                           "), not in host memory; a DEVICE tensor is a DeviceArray "
                           "(Context.register admits CUDA memory)");
    }
  }
  TakenDlpackTensor taken = take_dlpack(source, what);
  const DLTensor &tensor = taken->dl_tensor;
  if (tensor.device.device_type != kDLCPU) {
    throw py::type_error("replayrt: " + what + ": the DLPack tensor of this " + type +
                         " is not in host memory");
  }
  if (tensor.dtype.code != kDLBfloat || tensor.dtype.bits != 16 || tensor.dtype.lanes != 1) {
    throw py::type_error(
        "replayrt: " + what + ": numpy cannot view this " + type +
        ", and its element type (DLPack type code " + std::to_string(tensor.dtype.code) + " of " +
        std::to_string(tensor.dtype.bits) + " bits and " + std::to_string(tensor.dtype.lanes) +
        " lanes) is not bfloat16, the one taken through DLPack");
  }
  const py::dtype dtype("uint16");
  const auto itemsize = static_cast<std::int64_t>(dtype.itemsize());
  std::vector<py::ssize_t> shape(tensor.shape, tensor.shape + tensor.ndim);
  std::vector<py::ssize_t> strides(shape.size());
  std::int64_t compact_stride = 1;
  for (std::int32_t dim = tensor.ndim - 1; dim >= 0; --dim) {
    const std::int64_t stride = tensor.strides != nullptr ? tensor.strides[dim] : compact_stride;
    strides[static_cast<std::size_t>(dim)] = stride * itemsize;
    compact_stride *= tensor.shape[dim];
  }
  void *data = static_cast<std::byte *>(tensor.data) + tensor.byte_offset;
  // The view's base owns the tensor, and through it the producer's memory.
  const py::capsule owner(taken.get(), [](void *managed) {
    DlpackTensorDeleter()(static_cast<DLManagedTensor *>(managed));
  });
  static_cast<void>(taken.release());
  return {dtype, std::move(shape), std::move(strides), data, owner};
}

RegisteredArray register_foreign(PythonContext &ctx, const py::object &source) {
  std::string what = type_name(source);
  if (py::hasattr(source, "__dlpack_device__")) {
    what += " on DLPack device " + std::string(py::str(source.attr("__dlpack_device__")()));
  }
  auto foreign = std::make_shared<ForeignMemory>();
  foreign->tensor = take_dlpack(source, "register");
  foreign->producer = source;

  const DLTensor &tensor = foreign->tensor->dl_tensor;
  RegisteredArray array;
  array.dtype = dtype_from_dlpack(tensor.dtype);
  array.shape.assign(tensor.shape, tensor.shape + tensor.ndim);
  array.bytes = contiguous_bytes(tensor, static_cast<std::size_t>(array.dtype.itemsize()));
  void *address = static_cast<std::byte *>(tensor.data) + tensor.byte_offset;
  try {
    foreign->registration = ctx.register_foreign(address, array.bytes);
  } catch (const rrt::Error &error) {
    std::string message = "replayrt: register(" + what + "): ";
    if (error.code() == RRT_ERR_UNSUPPORTED) {
      message += "foreign memory is admitted on CUDA contexts only: ";
    }
    throw rrt::Error(error.detail(), message + error.what());
  }
  array.memory = std::shared_ptr<rrt::DeviceMemory>(foreign, &foreign->registration);
  array.platform = ctx.platform;
  array.device_id = ctx.device_id;
  array.foreign = std::move(foreign);
  return array;
}

}  // namespace replayrt::python
