// The replayrt Python extension (_replayrt) over replayrt.hpp. Lifetimes: every Python object
// that wraps an owner keeps what the C ABI needs alive for as long as it needs it. A stream
// holds the host arrays of the work it has queued until synchronize(); a capture hands the
// arrays of its work to its graph, which holds them for every replay.
#include <array>
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

// A device buffer with the shape and dtype numpy and DLPack need.
struct DeviceArray {
  std::shared_ptr<rrt::DeviceBuffer> buffer;
  std::vector<std::int64_t> shape;
  py::dtype dtype;
  rrt_platform_t platform = RRT_PLATFORM_SIM;
  std::int32_t device_id = 0;
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
  if (written && !array.writeable()) {
    throw py::type_error("replayrt: " + what + " is written, so its array must be writable");
  }
  return array;
}

PythonArgs convert_args(const PythonCallable &callable, const py::sequence &values) {
  PythonArgs out;
  std::size_t param = 0;
  for (const py::handle value : values) {
    if (py::isinstance<DeviceArray>(value)) {
      const auto &array = value.cast<const DeviceArray &>();
      out.args.device(*array.buffer);
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
// and only then the objects that work reads or writes.
struct PythonStream {
  py::list pending;   // until synchronize()
  py::list captured;  // since begin_capture()
  rrt::Stream stream;

  void hold(const py::list &objects) {
    py::list &into = stream.capturing() ? captured : pending;
    for (const py::handle object : objects) {
      into.append(object);
    }
  }
  void synchronize() {
    {
      py::gil_scoped_release release;
      stream.synchronize();
    }
    pending = py::list();
  }
};

// The graph is destroyed before the objects its replays read or write.
struct PythonGraph {
  py::list keep_alive;
  rrt::Graph graph;
};

// A copy moves exactly the device array's bytes.
void require_same_bytes(const py::array &host, const DeviceArray &device) {
  if (static_cast<std::size_t>(host.nbytes()) != device.buffer->size()) {
    throw py::value_error("replayrt: a copy needs a host array of exactly the device array's " +
                          std::to_string(device.buffer->size()) + " bytes, not " +
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

// What a DLPack capsule owns: the tensor it hands over, its shape, and the buffer.
struct DlpackExport {
  DLManagedTensor managed{};
  std::vector<std::int64_t> shape;
  std::shared_ptr<rrt::DeviceBuffer> buffer;
};

DLDataType dlpack_dtype(const py::dtype &dtype) {
  DLDataType out{};
  out.bits = static_cast<std::uint8_t>(dtype.itemsize() * 8);
  out.lanes = 1;
  switch (dtype.kind()) {
    case 'f':
      out.code = 2;
      break;
    case 'i':
      out.code = 0;
      break;
    case 'u':
      out.code = 1;
      break;
    default:
      throw py::type_error("replayrt: DLPack export needs an integer or floating dtype");
  }
  return out;
}

py::capsule dlpack_capsule(const DeviceArray &array) {
  auto owned = std::make_unique<DlpackExport>();
  owned->shape = array.shape;
  owned->buffer = array.buffer;
  DLTensor &tensor = owned->managed.dl_tensor;
  tensor.data = array.buffer->data();
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
      .def_property_readonly("nbytes", [](const DeviceArray &a) { return a.buffer->size(); })
      .def("upload",
           [](const DeviceArray &a, const py::array &source) {
             const py::array contiguous = py::array::ensure(source, py::array::c_style);
             if (static_cast<std::size_t>(contiguous.nbytes()) != a.buffer->size()) {
               throw py::value_error("replayrt: upload needs exactly the array's bytes");
             }
             a.buffer->upload(contiguous.data(), a.buffer->size());
           })
      .def(
          "__dlpack__", [](const DeviceArray &a, const py::object &) { return dlpack_capsule(a); },
          py::arg("stream") = py::none())
      .def("__dlpack_device__",
           [](const DeviceArray &a) {
             const DLDevice device = dlpack_device(a);
             return py::make_tuple(device.device_type, device.device_id);
           })
      .def("numpy", [](const DeviceArray &a) {
        py::array out(a.dtype, a.shape);
        a.buffer->download(out.mutable_data(), a.buffer->size());
        return out;
      });

  py::class_<PythonRun>(m, "Run")
      .def(
          "launch",
          [](PythonRun &r, PythonStream *stream) {
            if (stream == nullptr) {
              r.run.launch();
            } else {
              r.run.launch(stream->stream);
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
      .def(
          "upload",
          [](PythonStream &s, const py::object &destination, const py::object &source) {
            const auto &device = destination.cast<const DeviceArray &>();
            const py::array array = host_array(source, false, "an upload's source");
            require_same_bytes(array, device);
            s.stream.upload(*device.buffer, array.data(), device.buffer->size());
            s.hold(both(array, destination));
          },
          py::arg("destination"), py::arg("source"))
      .def(
          "download",
          [](PythonStream &s, const py::object &destination, const py::object &source) {
            const auto &device = source.cast<const DeviceArray &>();
            const py::array array = host_array(destination, true, "a download's destination");
            require_same_bytes(array, device);
            s.stream.download(const_cast<void *>(array.data()), *device.buffer,
                              device.buffer->size());
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
                                   callable.param_directions()};
           })
      .def(
          "empty",
          [](PythonContext &ctx, const std::vector<std::int64_t> &shape,
             const py::object &dtype_like) {
            const py::dtype dtype = py::dtype::from_args(dtype_like);
            auto bytes = static_cast<std::size_t>(dtype.itemsize());
            for (const std::int64_t extent : shape) {
              if (extent < 0) {
                throw py::value_error("replayrt: a shape's extents are >= 0");
              }
              bytes *= static_cast<std::size_t>(extent);
            }
            DeviceArray array;
            array.buffer = std::make_shared<rrt::DeviceBuffer>(ctx.allocate(bytes));
            array.shape = shape;
            array.dtype = dtype;
            array.platform = ctx.platform;
            array.device_id = ctx.device_id;
            return array;
          },
          py::arg("shape"), py::arg("dtype") = "float32")
      .def("stream",
           [](PythonContext &ctx) {
             auto stream = std::make_shared<PythonStream>();
             stream->stream = ctx.stream();
             return stream;
           })
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
