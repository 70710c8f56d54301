// The replayrt Python extension (_replayrt) over replayrt.hpp. Lifetimes: every Python object
// that wraps an owner keeps what the C ABI needs alive for as long as it needs it. A stream
// holds the host arrays and device arrays of the work it has queued until synchronize(); a
// capture hands the arrays of its work to its graph, which holds them for every replay. A
// registered array holds its producer (and the DLPack tensor it took from it) for as long as it
// lives, so that nothing queued or captured can reach freed memory.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <replayrt/replayrt.hpp>
#include <replayrt/trace.hpp>

#include "dlpack.h"

namespace py = pybind11;

namespace {

py::object &error_factory() {
  static py::object factory;
  return factory;
}

void raise_error(const rrt::Error &error) {
  const py::object &factory = error_factory();
  if (!factory) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
    return;
  }
  const py::object exception = factory(
      error.status_name(), error.what(), static_cast<int>(error.code()),
      static_cast<int>(error.growth_point()), error.requested_bytes(), error.frozen_bytes());
  PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(exception.ptr())), exception.ptr());
}

// The enumerator `table` names `name`; ValueError listing the names otherwise.
template <typename Enum, std::size_t N>
Enum enum_from_name(const std::string &name,
                    const std::array<std::pair<const char *, Enum>, N> &table, const char *what) {
  std::string known;
  for (const auto &[candidate, value] : table) {
    if (name == candidate) {
      return value;
    }
    known += known.empty() ? "'" : ", '";
    known += candidate;
    known += "'";
  }
  throw py::value_error("replayrt: " + std::string(what) + " must be one of " + known + ", not '" +
                        name + "'");
}

rrt_dtype_t dtype_from_name(const std::string &name) {
  static constexpr std::array<std::pair<const char *, rrt_dtype_t>, 6> kNames{{
      {"float32", RRT_DTYPE_F32},
      {"float16", RRT_DTYPE_F16},
      {"bfloat16", RRT_DTYPE_BF16},
      {"int32", RRT_DTYPE_I32},
      {"int64", RRT_DTYPE_I64},
      {"uint8", RRT_DTYPE_U8},
  }};
  return enum_from_name(name, kNames, "a dtype");
}

// The numpy dtype that holds a parameter's elements, and how messages name the parameter's
// dtype. numpy has no bfloat16: a uint16 array holds its bits.
struct NumpyDtype {
  rrt_dtype_t dtype;
  const char *numpy;
  const char *described;
};

NumpyDtype numpy_dtype_of(rrt_dtype_t dtype) {
  static constexpr std::array<NumpyDtype, 6> kDtypes{{
      {RRT_DTYPE_F32, "float32", "float32"},
      {RRT_DTYPE_F16, "float16", "float16"},
      {RRT_DTYPE_BF16, "uint16", "bfloat16 (a uint16 array holds its bits)"},
      {RRT_DTYPE_I32, "int32", "int32"},
      {RRT_DTYPE_I64, "int64", "int64"},
      {RRT_DTYPE_U8, "uint8", "uint8"},
  }};
  for (const NumpyDtype &entry : kDtypes) {
    if (entry.dtype == dtype) {
      return entry;
    }
  }
  throw py::value_error("replayrt: unknown dtype value " + std::to_string(dtype));
}

std::string dtype_text(const py::dtype &dtype) {
  return py::str(static_cast<const py::object &>(dtype));
}

bool same_dtype(const py::dtype &a, const py::dtype &b) {
  return a.attr("__eq__")(b).cast<bool>();
}

// TypeError for a dtype of Python objects: replayrt copies bytes, and an object's bytes are a
// pointer that a copy would duplicate without a reference.
void refuse_objects(const py::dtype &dtype, const std::string &what) {
  if (dtype.attr("hasobject").cast<bool>()) {
    throw py::type_error("replayrt: " + what + " is an array of Python objects (dtype " +
                         dtype_text(dtype) + "); replayrt takes arrays of numbers only");
  }
}

// TypeError unless a copy's host array has its device array's dtype.
void require_same_dtype(const py::dtype &host, const py::dtype &device) {
  if (!same_dtype(host, device)) {
    throw py::type_error("replayrt: the device array is " + dtype_text(device) +
                         "; the host array is " + dtype_text(host) +
                         " (a copy moves bytes; it converts nothing)");
  }
}

rrt_direction_t direction_from_name(const std::string &name) {
  static constexpr std::array<std::pair<const char *, rrt_direction_t>, 3> kNames{{
      {"in", RRT_DIR_IN},
      {"out", RRT_DIR_OUT},
      {"inout", RRT_DIR_INOUT},
  }};
  return enum_from_name(name, kNames, "a direction");
}

rrt_platform_t platform_from_name(const std::string &name) {
  static constexpr std::array<std::pair<const char *, rrt_platform_t>, 2> kNames{{
      {"sim", RRT_PLATFORM_SIM},
      {"cuda", RRT_PLATFORM_CUDA},
  }};
  return enum_from_name(name, kNames, "a platform");
}

rrt_param_space_t space_from_name(const std::string &name) {
  static constexpr std::array<std::pair<const char *, rrt_param_space_t>, 3> kNames{{
      {"any", RRT_PARAM_SPACE_ANY},
      {"host", RRT_PARAM_SPACE_HOST},
      {"device", RRT_PARAM_SPACE_DEVICE},
  }};
  return enum_from_name(name, kNames, "a space");
}

// A context and the platform it was made on (DLPack names the device).
struct PythonContext : rrt::Context {
  explicit PythonContext(const rrt::ContextOptions &options)
      : rrt::Context(options), platform(options.platform), device_id(options.device_id) {}
  rrt_platform_t platform;
  std::int32_t device_id;
};

// Device memory with the shape and dtype numpy and DLPack need: a buffer the context allocated
// (Context.empty), or foreign memory it admitted (Context.register: a RegisteredArray, whose
// memory is empty once the registration is closed).
struct DeviceArray {
  std::shared_ptr<rrt::DeviceMemory> memory;
  std::size_t bytes = 0;
  std::vector<std::int64_t> shape;
  py::dtype dtype;
  rrt_platform_t platform = RRT_PLATFORM_SIM;
  std::int32_t device_id = 0;

  // The memory, which a closed registration no longer has (ValueError, as for a closed file).
  const rrt::DeviceMemory &live() const {
    if (!*memory) {
      throw py::value_error(
          "replayrt: the registered array is closed: its memory is no longer "
          "the context's");
    }
    return *memory;
  }
};

// Where DLPack says a device array's memory is: the CUDA device on CUDA; the host on the
// simulator, whose device memory is host memory (CPU has the one device 0, whatever the
// simulator context's device id).
DLDevice dlpack_device(const DeviceArray &array) {
  if (array.platform == RRT_PLATFORM_CUDA) {
    return {kDLCUDA, array.device_id};
  }
  return {kDLCPU, 0};
}

// A prepared callable and what its arguments are checked against.
struct PythonCallable {
  rrt::CallableId id;
  std::size_t task_count = 0;
  std::vector<rrt_direction_t> directions;  // per parameter
  std::vector<rrt_dtype_t> dtypes;          // per parameter
};

// The arguments of one run or launch, and the Python objects whose memory they name.
struct PythonArgs {
  rrt::Args args;
  py::list keep_alive;
};

// `value` as a HOST tensor, read (and, when `written`, written) in place: an array, or an
// object numpy views without a copy (a CPU torch tensor), C-contiguous, and writable when
// written. An object numpy could only copy (a list) would leave the results in the copy, so it
// is refused. `what` names the argument in the TypeError.
py::array host_array(const py::handle &value, bool written, const std::string &what) {
  py::array array = py::array::ensure(value);
  const bool copied = !py::isinstance<py::array>(value) && array && array.owndata();
  if (!array || copied || (array.flags() & py::array::c_style) == 0) {
    throw py::type_error("replayrt: " + what +
                         " must be a DeviceArray, or a C-contiguous array or an object numpy "
                         "views without a copy");
  }
  refuse_objects(array.dtype(), what);
  if (written && !array.writeable()) {
    throw py::type_error("replayrt: " + what + " is written, so its array must be writable");
  }
  return array;
}

// TypeError unless an argument's dtype is its parameter's (when the callable declares that
// parameter: a surplus argument is the C ABI's to refuse).
void require_param_dtype(const PythonCallable &callable, std::size_t param,
                         const py::dtype &given) {
  if (param >= callable.dtypes.size()) {
    return;
  }
  const NumpyDtype expected = numpy_dtype_of(callable.dtypes[param]);
  if (!same_dtype(given, py::dtype(expected.numpy))) {
    throw py::type_error("replayrt: parameter " + std::to_string(param) + " is " +
                         expected.described + "; the array is " + dtype_text(given));
  }
}

PythonArgs convert_args(const PythonCallable &callable, const py::sequence &values) {
  PythonArgs out;
  std::size_t param = 0;
  for (const py::handle value : values) {
    if (py::isinstance<DeviceArray>(value)) {
      const auto &array = value.cast<const DeviceArray &>();
      require_param_dtype(callable, param, array.dtype);
      out.args.device(array.live());
      out.keep_alive.append(value);
      ++param;
    } else if (py::isinstance<py::int_>(value)) {
      out.args.scalar(value.cast<std::uint64_t>());
    } else if (py::isinstance<py::float_>(value)) {
      out.args.scalar_f32(value.cast<float>());
    } else {
      const bool read_only =
          param < callable.directions.size() && callable.directions[param] == RRT_DIR_IN;
      const py::array array = host_array(value, !read_only, "parameter " + std::to_string(param));
      require_param_dtype(callable, param, array.dtype());
      // The runtime only reads an IN parameter's memory.
      out.args.host(const_cast<void *>(array.data()), static_cast<std::size_t>(array.nbytes()));
      out.keep_alive.append(array);
      ++param;
    }
  }
  return out;
}

// A stream and the Python objects its queued work reads or writes.
// Members are destroyed in reverse order: the stream first, which waits for its queued work,
// and only then the objects that work reads or writes, and last the native stream's owner
// (Context.wrap_stream), which must outlive the wrapper.
struct PythonStream {
  // What a wrapped stream's handle came from, if an object (Context.wrap_stream).
  py::object native_owner;
  py::list pending;   // until synchronize()
  py::list captured;  // since begin_capture()
  rrt::Stream stream;

  void hold(const py::list &objects) {
    py::list &into = stream.capturing() ? captured : pending;
    for (const py::handle object : objects) {
      into.append(object);
    }
  }
  // Lets go of the objects held for the work queued before the call, once that work has run.
  // Work that other threads queue while it waits (without the GIL) keeps its objects; so does
  // all of it when the wait fails.
  void synchronize() {
    py::list waited = std::exchange(pending, py::list());
    try {
      py::gil_scoped_release release;
      stream.synchronize();
    } catch (...) {
      for (const py::handle object : pending) {
        waited.append(object);
      }
      pending = std::move(waited);
      throw;
    }
  }
};

// The graph is destroyed before the objects its replays read or write.
struct PythonGraph {
  py::list keep_alive;
  rrt::Graph graph;
};

// A copy moves exactly the device array's bytes.
void require_same_bytes(const py::array &host, const DeviceArray &device) {
  if (static_cast<std::size_t>(host.nbytes()) != device.bytes) {
    throw py::value_error("replayrt: a copy needs a host array of exactly the device array's " +
                          std::to_string(device.bytes) + " bytes, not " +
                          std::to_string(host.nbytes()));
  }
}

// What a stream copy holds until it has run (or, captured, for the graph's life).
py::list both(const py::array &host, const py::object &device) {
  py::list objects;
  objects.append(host);
  objects.append(device);
  return objects;
}

// A prepared program-mode run. The run is destroyed first (finalizing it waits for its work),
// and only then the arguments it reads and writes.
struct PythonRun {
  PythonArgs args;
  rrt::Run run;
};

// `with stream.capture() as graph:` ends the capture on every path.
struct CaptureScope {
  std::shared_ptr<PythonStream> stream;
  std::shared_ptr<PythonGraph> graph = std::make_shared<PythonGraph>();

  std::shared_ptr<PythonGraph> enter() {
    stream->stream.begin_capture();
    stream->captured = py::list();
    return graph;
  }
  bool exit(const py::object &exception_type, const py::object &, const py::object &) {
    py::list captured = std::exchange(stream->captured, py::list());
    if (!exception_type.is_none()) {
      stream->stream.discard_capture();
      return false;
    }
    graph->graph = stream->stream.end_capture();
    graph->keep_alive = std::move(captured);
    return false;
  }
};

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
// taken from it, and the registration. The registration ends first; then the tensor and the
// producer are let go of, under the GIL, which the last owner may not hold (a consumer of a
// DLPack export of the registered array may drop it on any thread).
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
    registration = rrt::DeviceRegistration();
    const PyGILState_STATE gil = PyGILState_Ensure();
    tensor.reset();
    Py_XDECREF(producer.release().ptr());
    PyGILState_Release(gil);
  }
};

// A device array over foreign memory (Context.register). Its memory is the registration's.
struct RegisteredArray : DeviceArray {
  std::shared_ptr<ForeignMemory> foreign;
};

// The numpy dtype of a DLPack element type: signed and unsigned integers, floats and bools of
// one lane.
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
    case kDLBool:
      name = "bool";
      known = known && type.bits == 8;
      break;
    default:
      known = false;
  }
  if (!known) {
    throw py::type_error(
        "replayrt: register takes tensors of integers, floats or bools of one "
        "lane, not DLPack type code " +
        std::to_string(type.code) + " of " + std::to_string(type.bits) + " bits and " +
        std::to_string(type.lanes) + " lanes");
  }
  return py::dtype(type.code == kDLBool ? name : name + std::to_string(type.bits));
}

// DeviceArray.__dlpack__ with the array API standard's keywords. The capsule is always the
// unversioned one (the standard has a consumer that asks for `max_version` check what it got)
// and always a view: copy=True, another device than the array's, or a stream for CPU memory
// (the simulator's: the standard allows only None there) is a BufferError. On CUDA the stream
// orders nothing: the caller synchronizes the replayrt stream that wrote the array first.
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

// Context.register: `source`'s memory, taken through DLPack, admitted as DEVICE tensor memory.
RegisteredArray register_foreign(PythonContext &ctx, const py::object &source) {
  std::string what = py::str(py::type::handle_of(source).attr("__name__"));
  if (!py::hasattr(source, "__dlpack__")) {
    throw py::type_error(
        "replayrt: register takes a DLPack producer (an object with __dlpack__, "
        "such as a CUDA tensor of torch or CuPy), not " +
        what);
  }
  if (py::hasattr(source, "__dlpack_device__")) {
    what += " on DLPack device " + std::string(py::str(source.attr("__dlpack_device__")()));
  }
  const py::object capsule = source.attr("__dlpack__")();
  if (PyCapsule_IsValid(capsule.ptr(), "dltensor") == 0) {
    throw py::type_error(
        "replayrt: register needs __dlpack__() to return an unused DLPack "
        "capsule (named 'dltensor')");
  }
  auto *managed = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  auto foreign = std::make_shared<ForeignMemory>();
  // The tensor is this module's from here: the capsule no longer deletes it.
  if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) {
    throw py::error_already_set();
  }
  foreign->tensor.reset(managed);
  foreign->producer = source;

  const DLTensor &tensor = managed->dl_tensor;
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

py::dict stats_dict(const rrt_stats_t &stats) {
  py::dict out;
  out["device_alloc_calls"] = stats.device_alloc_calls;
  out["device_free_calls"] = stats.device_free_calls;
  out["live_bytes"] = stats.live_bytes;
  out["peak_bytes"] = stats.peak_bytes;
  out["launches"] = stats.launches;
  out["replays"] = stats.replays;
  out["stale_address_refusals"] = stats.stale_address_refusals;
  py::list refusals;
  for (const std::uint64_t count : stats.refusals) {
    refusals.append(count);
  }
  out["refusals"] = refusals;
  return out;
}

py::array profile_array(const std::vector<rrt_task_timing_t> &timings) {
  py::array_t<rrt_task_timing_t> out(static_cast<py::ssize_t>(timings.size()));
  std::copy(timings.begin(), timings.end(), out.mutable_data());
  return out;
}

// `with trace.host(name):` records the block as a host slice, also when it raises.
struct TraceHostScope {
  rrt::Trace *trace;
  std::string name;
  rrt::Trace::Clock::time_point start;

  void enter() { start = rrt::Trace::Clock::now(); }
  void exit(const py::args & /*exception*/) {
    trace->add_host_slice(name, start, rrt::Trace::Clock::now());
  }
};

std::vector<rrt::CallableId> callable_ids(const std::vector<PythonCallable> &launches) {
  std::vector<rrt::CallableId> ids;
  ids.reserve(launches.size());
  for (const PythonCallable &callable : launches) {
    ids.push_back(callable.id);
  }
  return ids;
}

std::vector<rrt_task_timing_t> timings_from_array(
    const py::array_t<rrt_task_timing_t, py::array::c_style | py::array::forcecast> &array) {
  const rrt_task_timing_t *first = array.data();
  return {first, first + array.size()};
}

}  // namespace

PYBIND11_MODULE(_replayrt, m) {
  m.doc() = "replayrt's extension module; import replayrt, not this";
  PYBIND11_NUMPY_DTYPE(rrt_task_timing_t, start_ns, end_ns, task, worker);
  // pybind11's translator type takes the exception_ptr by value.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  py::register_exception_translator([](std::exception_ptr pending) {
    try {
      if (pending) {
        std::rethrow_exception(pending);
      }
    } catch (const rrt::Error &error) {
      raise_error(error);
    }
  });
  m.def("_set_error_factory", [](py::object factory) { error_factory() = std::move(factory); });

  m.def(
      "dtype_value",
      [](const std::string &name) { return static_cast<std::uint32_t>(dtype_from_name(name)); },
      py::arg("name"), "The pinned rrt_dtype_t value of a dtype name (an immediate operand).");

  py::class_<rrt::Operand>(m, "Operand")
      .def_static("immediate", &rrt::Operand::immediate)
      .def_static("immediate_f32", &rrt::Operand::immediate_f32);

  py::class_<rrt::CallableBuilder>(m, "CallableBuilder")
      .def(py::init([](const std::string &bind) {
             return rrt::CallableBuilder(bind == "host" ? RRT_BIND_HOST_BUILD
                                                        : RRT_BIND_DEVICE_BUILD);
           }),
           py::arg("bind") = "device")
      .def(
          "param",
          [](rrt::CallableBuilder &b, std::string name, const rrt::CallableBuilder::Shape &shape,
             const std::string &dtype, const std::string &direction, const std::string &space) {
            return b.param(std::move(name), dtype_from_name(dtype), shape,
                           direction_from_name(direction), space_from_name(space));
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32",
          py::arg("direction") = "in", py::arg("space") = "any")
      .def(
          "intermediate",
          [](rrt::CallableBuilder &b, std::string name, const rrt::CallableBuilder::Shape &shape,
             const std::string &dtype) {
            return b.intermediate(std::move(name), dtype_from_name(dtype), shape);
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32")
      .def("scalar", &rrt::CallableBuilder::scalar, py::arg("name"))
      .def(
          "view",
          [](rrt::CallableBuilder &b, std::string name, const rrt::Operand &base,
             const rrt::CallableBuilder::Shape &shape, std::uint64_t offset,
             std::optional<rrt::Operand> offset_value, std::uint64_t stride, std::uint64_t max) {
            if (offset_value) {
              return b.view(std::move(name), base, shape, offset, *offset_value, stride, max);
            }
            return b.view(std::move(name), base, shape, offset);
          },
          py::arg("name"), py::arg("base"), py::arg("shape"), py::arg("offset") = 0,
          py::arg("offset_value") = py::none(), py::arg("stride") = 0, py::arg("max") = 0)
      .def("device_value", &rrt::CallableBuilder::device_value, py::arg("name"), py::arg("source"),
           py::arg("element"))
      .def(
          "task",
          [](rrt::CallableBuilder &b, std::string kernel, const std::vector<rrt::Operand> &operands)
              -> rrt::CallableBuilder & { return b.task(std::move(kernel), operands); },
          py::return_value_policy::reference_internal)
      .def("__getitem__", &rrt::CallableBuilder::operator[])
      .def_property_readonly("task_count", &rrt::CallableBuilder::task_count);

  py::class_<PythonCallable>(m, "Callable")
      .def_property_readonly("id", [](const PythonCallable &c) { return c.id.value; })
      .def_property_readonly("task_count", [](const PythonCallable &c) { return c.task_count; });

  py::class_<DeviceArray>(m, "DeviceArray")
      .def_property_readonly("shape",
                             [](const DeviceArray &a) { return py::tuple(py::cast(a.shape)); })
      .def_property_readonly("dtype", [](const DeviceArray &a) { return a.dtype; })
      .def_property_readonly("nbytes", [](const DeviceArray &a) { return a.bytes; })
      .def("upload",
           [](const DeviceArray &a, const py::array &source) {
             refuse_objects(source.dtype(), "an upload's source");
             require_same_dtype(source.dtype(), a.dtype);
             const py::array contiguous = py::array::ensure(source, py::array::c_style);
             if (static_cast<std::size_t>(contiguous.nbytes()) != a.bytes) {
               throw py::value_error("replayrt: upload needs exactly the array's bytes");
             }
             a.live().upload(contiguous.data(), a.bytes);
           })
      .def("__dlpack__", &dlpack_export, py::arg("stream") = py::none(), py::kw_only(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
           py::arg("copy") = py::none())
      .def("__dlpack_device__",
           [](const DeviceArray &a) {
             const DLDevice device = dlpack_device(a);
             return py::make_tuple(device.device_type, device.device_id);
           })
      .def("numpy", [](const DeviceArray &a) {
        py::array out(a.dtype, a.shape);
        a.live().download(out.mutable_data(), a.bytes);
        return out;
      });

  py::class_<RegisteredArray, DeviceArray>(
      m, "RegisteredArray",
      "Foreign device memory admitted as DEVICE tensor memory of a CUDA context "
      "(Context.register): a DeviceArray over the producer's memory, usable wherever one is. It "
      "holds the producer until it is itself collected; graphs that captured it hold it for "
      "their life. close() (or leaving `with`) ends the registration: graphs that captured it "
      "are stale from then on (StaleAddressError at replay), and using it is a ValueError.")
      .def(
          "close", [](RegisteredArray &a) { a.foreign->registration.unregister(); },
          "Ends the registration (rrt_device_unregister), after the work queued on the "
          "context's streams has run; closing again does nothing. The producer stays held "
          "until this object is collected, which graphs that used it delay.")
      .def_property_readonly("closed",
                             [](const RegisteredArray &a) { return !a.foreign->registration; })
      .def_property_readonly(
          "source", [](const RegisteredArray &a) { return a.foreign->producer; },
          "The producer whose memory this is.")
      .def("__enter__", [](const py::object &self) { return self; })
      .def("__exit__", [](RegisteredArray &a, const py::args & /*exception*/) {
        a.foreign->registration.unregister();
        return false;
      });

  py::class_<PythonRun>(m, "Run")
      .def(
          "launch",
          [](PythonRun &r, PythonStream *stream) {
            if (stream == nullptr) {
              r.run.launch();
            } else {
              r.run.launch(stream->stream);
              // Captured, the launch reads and writes them at every replay of the graph.
              stream->hold(r.args.keep_alive);
            }
          },
          py::arg("stream") = py::none())
      .def("wait",
           [](PythonRun &r) {
             py::gil_scoped_release release;
             r.run.wait();
           })
      .def("profile", [](const PythonRun &r) { return profile_array(r.run.profile()); })
      .def("finalize", [](PythonRun &r) { r.run.finalize(); });

  py::class_<rrt::Event>(m, "Event")
      .def("synchronize",
           [](const rrt::Event &e) {
             py::gil_scoped_release release;
             e.synchronize();
           })
      .def("query", &rrt::Event::query);

  py::class_<PythonGraph, std::shared_ptr<PythonGraph>>(m, "Graph")
      .def("replay",
           [](const std::shared_ptr<PythonGraph> &g, PythonStream &stream) {
             g->graph.replay(stream.stream);
             py::list self;
             self.append(py::cast(g));
             stream.hold(self);
           })
      .def("__bool__", [](const PythonGraph &g) { return static_cast<bool>(g.graph); });

  py::class_<CaptureScope>(m, "_CaptureScope")
      .def("__enter__", &CaptureScope::enter)
      .def("__exit__", &CaptureScope::exit);

  py::class_<PythonStream, std::shared_ptr<PythonStream>>(m, "Stream")
      .def("synchronize", &PythonStream::synchronize)
      .def("query", [](const PythonStream &s) { return s.stream.query(); })
      .def("record", [](PythonStream &s, const rrt::Event &e) { s.stream.record(e); })
      .def("wait", [](PythonStream &s, const rrt::Event &e) { s.stream.wait(e); })
      .def("capture", [](const std::shared_ptr<PythonStream> &s) { return CaptureScope{s}; })
      .def_property_readonly(
          "native_handle",
          [](const PythonStream &s) {
            return reinterpret_cast<std::uintptr_t>(s.stream.native_handle());
          },
          "The native stream behind this one, as an int (CUDA: its cudaStream_t; a wrapped "
          "stream's is the one it wraps), for another library to order its work with "
          "replayrt's (torch.cuda.ExternalStream(handle)). UnsupportedError on the simulator.")
      .def(
          "upload",
          [](PythonStream &s, const py::object &destination, const py::object &source) {
            const auto &device = destination.cast<const DeviceArray &>();
            const py::array array = host_array(source, false, "an upload's source");
            require_same_dtype(array.dtype(), device.dtype);
            require_same_bytes(array, device);
            s.stream.upload(device.live(), array.data(), device.bytes);
            s.hold(both(array, destination));
          },
          py::arg("destination"), py::arg("source"))
      .def(
          "download",
          [](PythonStream &s, const py::object &destination, const py::object &source) {
            const auto &device = source.cast<const DeviceArray &>();
            const py::array array = host_array(destination, true, "a download's destination");
            require_same_dtype(array.dtype(), device.dtype);
            require_same_bytes(array, device);
            s.stream.download(const_cast<void *>(array.data()), device.live(), device.bytes);
            s.hold(both(array, source));
          },
          py::arg("destination"), py::arg("source"));

  py::class_<PythonContext>(m, "Context")
      .def(py::init([](const std::string &platform, std::uint32_t workers, bool profiling,
                       std::int32_t device) {
             rrt::ContextOptions options;
             options.platform = platform_from_name(platform);
             options.device_workers = workers;
             options.profiling = profiling;
             options.device_id = device;
             return std::make_unique<PythonContext>(options);
           }),
           py::arg("platform") = "sim", py::arg("workers") = 0, py::arg("profiling") = false,
           py::arg("device") = 0,
           "A context on `platform` ('sim' or 'cuda'); `device` is the CUDA device ordinal "
           "(rrt_context_options_t.device_id).")
      .def_property_readonly("platform",
                             [](const PythonContext &ctx) {
                               return ctx.platform == RRT_PLATFORM_CUDA ? "cuda" : "sim";
                             })
      .def_property_readonly("device", [](const PythonContext &ctx) { return ctx.device_id; })
      .def("program_init", &rrt::Context::program_init)
      .def(
          "kernel_init",
          [](PythonContext &ctx, const std::vector<rrt::CallableBuilder *> &callables,
             std::uint32_t profiling_tasks) {
            ctx.kernel_init(ctx.fit_kernel_config(callables, profiling_tasks));
          },
          py::arg("callables"), py::arg("profiling_tasks") = 0)
      .def("prepare",
           [](PythonContext &ctx, rrt::CallableBuilder &callable) {
             return PythonCallable{ctx.prepare(callable), callable.task_count(),
                                   callable.param_directions(), callable.param_dtypes()};
           })
      .def(
          "empty",
          [](PythonContext &ctx, const std::vector<std::int64_t> &shape,
             const py::object &dtype_like) {
            const py::dtype dtype = py::dtype::from_args(dtype_like);
            refuse_objects(dtype, "Context.empty's");
            auto bytes = static_cast<std::size_t>(dtype.itemsize());
            for (const std::int64_t extent : shape) {
              if (extent < 0) {
                throw py::value_error("replayrt: a shape's extents are >= 0");
              }
              bytes *= static_cast<std::size_t>(extent);
            }
            DeviceArray array;
            array.memory = std::make_shared<rrt::DeviceBuffer>(ctx.allocate(bytes));
            array.bytes = bytes;
            array.shape = shape;
            array.dtype = dtype;
            array.platform = ctx.platform;
            array.device_id = ctx.device_id;
            return array;
          },
          py::arg("shape"), py::arg("dtype") = "float32")
      .def("register", &register_foreign, py::arg("source"),
           "Admits a DLPack producer's device memory (an object with __dlpack__, such as a "
           "torch CUDA tensor of this context's device) as DEVICE tensor memory: a "
           "RegisteredArray (rrt_device_register). The tensor must be C-contiguous; its "
           "producer's pending writes must be done, or ordered before replayrt's use, first. "
           "UnsupportedError on the simulator; InvalidArgumentError for memory that is not "
           "device memory of this device or that the context already tracks.")
      .def("stream",
           [](PythonContext &ctx) {
             auto stream = std::make_shared<PythonStream>();
             stream->stream = ctx.stream();
             return stream;
           })
      .def(
          "wrap_stream",
          [](PythonContext &ctx, const py::object &native) {
            auto stream = std::make_shared<PythonStream>();
            std::uintptr_t handle = 0;
            if (py::isinstance<py::int_>(native)) {
              handle = native.cast<std::uintptr_t>();
            } else if (py::hasattr(native, "cuda_stream")) {
              handle = native.attr("cuda_stream").cast<std::uintptr_t>();
              stream->native_owner = native;
            } else {
              throw py::type_error(
                  "replayrt: wrap_stream takes a native stream: an int (a cudaStream_t) or an "
                  "object with a cuda_stream attribute (torch.cuda.Stream), not " +
                  std::string(py::str(py::type::handle_of(native).attr("__name__"))));
            }
            stream->stream = ctx.wrap_stream(reinterpret_cast<void *>(handle));
            return stream;
          },
          py::arg("native"),
          "A Stream over a native stream the caller owns (rrt_stream_wrap_native): an int "
          "(a cudaStream_t of this context's device) or an object with a cuda_stream attribute "
          "(torch.cuda.Stream), which the Stream then holds. Launches, copies, events, capture "
          "and replay work on it as on ctx.stream(), ordered with the owner's work on the same "
          "stream; dropping it never destroys the native stream, which must outlive it (an int "
          "is not held). Launches recorded into the owner's own capture (torch.cuda.graph) "
          "have their arrays held only as queued work's are (until a synchronize after that "
          "capture): keep them, and the context, alive while the owner's graph may replay. "
          "UnsupportedError on the simulator.")
      .def("event", &rrt::Context::event)
      .def("run",
           [](PythonContext &ctx, const PythonCallable &callable, const py::sequence &values) {
             PythonArgs args = convert_args(callable, values);
             py::gil_scoped_release release;
             ctx.run(callable.id, args.args);
           })
      .def("launch",
           [](PythonContext &ctx, const PythonCallable &callable, const py::sequence &values,
              PythonStream &stream) {
             PythonArgs args = convert_args(callable, values);
             ctx.launch(callable.id, args.args, stream.stream);
             stream.hold(args.keep_alive);
           })
      .def("prepare_run",
           [](PythonContext &ctx, const PythonCallable &callable, const py::sequence &values) {
             auto run = std::make_unique<PythonRun>();
             run->args = convert_args(callable, values);
             run->run = ctx.prepare_run(callable.id, run->args.args);
             return run;
           })
      .def("stats", [](const PythonContext &ctx) { return stats_dict(ctx.stats()); })
      .def("profile", [](const PythonContext &ctx) { return profile_array(ctx.profile()); });

  py::class_<TraceHostScope>(m, "_TraceHostScope")
      .def("__enter__", &TraceHostScope::enter)
      .def("__exit__", &TraceHostScope::exit);

  py::class_<rrt::Trace>(m, "Trace")
      .def(py::init([](bool separate_device_clock) {
             return std::make_unique<rrt::Trace>(separate_device_clock
                                                     ? rrt::Trace::DeviceClock::separate
                                                     : rrt::Trace::DeviceClock::host_steady);
           }),
           py::arg("separate_device_clock") = false)
      .def(
          "name_callable",
          [](rrt::Trace &trace, const PythonCallable &callable, std::string name,
             const rrt::CallableBuilder &builder) {
            trace.name_callable(callable.id, std::move(name), builder);
          },
          py::arg("callable"), py::arg("name"), py::arg("builder"))
      .def(
          "host",
          [](rrt::Trace &trace, std::string name) {
            return TraceHostScope{&trace, std::move(name), {}};
          },
          py::arg("name"), py::keep_alive<0, 1>())
      .def(
          "add_device_work",
          [](rrt::Trace &trace, const PythonContext &ctx, const std::string &name,
             const std::vector<PythonCallable> &launches) {
            trace.add_device_work(ctx, name, callable_ids(launches));
          },
          py::arg("context"), py::arg("name"), py::arg("launches"))
      .def(
          "add_device_work",
          [](rrt::Trace &trace, const std::string &name,
             const std::vector<PythonCallable> &launches,
             const py::array_t<rrt_task_timing_t, py::array::c_style | py::array::forcecast>
                 &timings) {
            trace.add_device_work(name, callable_ids(launches), timings_from_array(timings));
          },
          py::arg("name"), py::arg("launches"), py::arg("timings"))
      .def_property_readonly("slice_count", &rrt::Trace::slice_count)
      .def("json", &rrt::Trace::json)
      .def("write", &rrt::Trace::write, py::arg("path"));
}
