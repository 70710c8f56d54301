#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <replayrt/replayrt.hpp>

#include "arguments.h"
#include "bindings.h"
#include "device_array.h"
#include "dlpack_interop.h"
#include "names.h"
#include "streams.h"
#include "timings.h"

namespace replayrt::python {

namespace py = pybind11;

namespace {

// The bytes of a C-contiguous array of `shape` and `dtype`. ValueError for a negative extent,
// or for a shape whose element count does not fit an int64 (numpy's size) or whose bytes do not
// fit a size_t.
std::size_t shape_bytes(const std::vector<std::int64_t> &shape, const py::dtype &dtype) {
  constexpr auto kMaxElements = static_cast<std::uint64_t>(INT64_MAX);
  const auto itemsize = static_cast<std::uint64_t>(dtype.itemsize());
  std::uint64_t elements = 1;
  for (const std::int64_t extent : shape) {
    if (extent < 0) {
      throw py::value_error("replayrt: a shape's extents are >= 0");
    }
    const auto count = static_cast<std::uint64_t>(extent);
    if (count != 0 && elements > kMaxElements / count) {
      elements = kMaxElements + 1;
      break;
    }
    elements *= count;
  }
  if (elements > kMaxElements || (itemsize != 0 && elements > SIZE_MAX / itemsize)) {
    throw py::value_error(
        "replayrt: the shape is too large: its elements or bytes do not fit "
        "64 bits");
  }
  if (elements == 0) {
    throw py::value_error(
        "replayrt: the shape holds no elements: a DeviceArray holds at least one (a device "
        "allocation is never empty)");
  }
  return static_cast<std::size_t>(elements * itemsize);
}

// `callable`, which `ctx` must have prepared: InvalidArgumentError otherwise, since the same id
// names another callable, or none, in another context. (rrt::Context refuses it too, naming its
// own calls; this says it in the package's words.)
const PythonCallable &own(const PythonContext &ctx, const PythonCallable &callable) {
  if (callable.context_serial != ctx.serial) {
    throw rrt::detail::invalid_argument(
        "replayrt: the callable was prepared by another context (callable ids are per "
        "context)");
  }
  return callable;
}

// Context.stats(): rrt_stats_t as a dict, its refusals a dict from growth point name
// ("RRT_GROWTH_ARENA_GM_HEAP", ...) to count, every growth point present.
py::dict stats_dict(const rrt_stats_t &stats) {
  py::dict out;
  out["device_alloc_calls"] = stats.device_alloc_calls;
  out["device_free_calls"] = stats.device_free_calls;
  out["live_bytes"] = stats.live_bytes;
  out["peak_bytes"] = stats.peak_bytes;
  out["launches"] = stats.launches;
  out["replays"] = stats.replays;
  out["stale_address_refusals"] = stats.stale_address_refusals;
  py::dict refusals;
  for (int point = 0; point < RRT_GROWTH_POINT_COUNT; ++point) {
    refusals[rrt_growth_point_name(static_cast<rrt_growth_point_t>(point))] = stats.refusals[point];
  }
  out["refusals"] = refusals;
  return out;
}

}  // namespace

void bind_context(py::module_ &m) {
  py::class_<PythonContext>(
      m, "Context",
      "A replayrt context on the simulator or a CUDA device: program mode (program_init) or "
      "kernel mode (kernel_init), then prepare callables and run, launch or capture them.")
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
      .def_property_readonly(
          "platform", [](const PythonContext &ctx) { return platform_name(ctx.platform); },
          "'sim' or 'cuda'.")
      .def_property_readonly(
          "device", [](const PythonContext &ctx) { return ctx.device_id; },
          "The device ordinal the context was made with.")
      .def("__repr__",
           [](const PythonContext &ctx) {
             return std::string("replayrt.Context(platform='") + platform_name(ctx.platform) +
                    "', device=" + std::to_string(ctx.device_id) + ")";
           })
      .def(
          "finalize",
          [](PythonContext &ctx) {
            const py::gil_scoped_release release;
            ctx.finalize();
          },
          "Waits for the context's queued work, then releases its prepared callables, pending "
          "runs and planned memory (rrt_context_finalize): its later calls raise "
          "InvalidStateError (program_init may start a program context again, with nothing "
          "prepared) and its graphs replay no more; its DeviceArrays stay usable. A kernel "
          "failure still pending on one of its streams is raised here, the context finalized "
          "all the same. Finalizing again does nothing.")
      .def("__enter__", [](const py::object &self) { return self; })
      .def(
          "__exit__",
          [](PythonContext &ctx, const py::args & /*exception*/) {
            const py::gil_scoped_release release;
            ctx.finalize();
          },
          "Finalizes the context (Context.finalize) on leaving a `with` block.")
      .def("program_init", &rrt::Context::program_init,
           "Puts the context in program mode (rrt_program_init): buffers grow on demand. Call "
           "once, before prepare; InvalidStateError for a context that has a mode.")
      .def(
          "kernel_init",
          [](PythonContext &ctx, const std::vector<rrt::CallableBuilder *> &callables,
             std::uint32_t profiling_tasks) {
            for (std::size_t i = 0; i < callables.size(); ++i) {
              if (callables[i] == nullptr) {
                throw py::type_error("replayrt: kernel_init takes CallableBuilders; callables[" +
                                     std::to_string(i) + "] is None");
              }
            }
            ctx.kernel_init(ctx.fit_kernel_config(callables, profiling_tasks));
          },
          py::arg("callables"), py::arg("profiling_tasks") = 0,
          "Puts the context in kernel mode with the capacity that every CallableBuilder in "
          "`callables` needs, frozen from then on (rrt_context_kernel_config_fit, "
          "rrt_kernel_init); `profiling_tasks` raises the profiling shape (a graph capturing "
          "several launches needs the sum of their tasks). A later request the plan cannot "
          "hold is a CapacityError that changes nothing.")
      .def(
          "prepare",
          [](PythonContext &ctx, rrt::CallableBuilder &callable) {
            return PythonCallable{ctx.prepare(callable),   ctx.serial,
                                  callable.task_count(),   callable.param_directions(),
                                  callable.param_dtypes(), callable.scalar_dtypes()};
          },
          py::arg("callable"),
          "Prepares a CallableBuilder (rrt_callable_prepare): a Callable that this context's "
          "run, launch and prepare_run take.")
      .def(
          "empty",
          [](PythonContext &ctx, const std::vector<std::int64_t> &shape,
             const py::object &dtype_like) {
            // numpy has no bfloat16: a uint16 array holds its bits.
            const bool bfloat16 =
                py::isinstance<py::str>(dtype_like) && dtype_like.cast<std::string>() == "bfloat16";
            const py::dtype dtype =
                bfloat16 ? py::dtype("uint16") : py::dtype::from_args(dtype_like);
            refuse_objects(dtype, "Context.empty's");
            const std::size_t bytes = shape_bytes(shape, dtype);
            DeviceArray array;
            array.memory = std::make_shared<rrt::DeviceBuffer>(ctx.allocate(bytes));
            array.bytes = bytes;
            array.shape = shape;
            array.dtype = dtype;
            array.platform = ctx.platform;
            array.device_id = ctx.device_id;
            return array;
          },
          py::arg("shape"), py::arg("dtype") = "float32",
          "A new DeviceArray of `shape` and `dtype` (rrt_device_alloc), uninitialized; "
          "'bfloat16' makes a uint16 array, which holds its bits. A shape "
          "without elements or too large to count in 64 bits is a ValueError.")
      .def("register", &register_foreign, py::arg("source"),
           "Admits a DLPack producer's device memory (an object with __dlpack__, such as a "
           "torch CUDA tensor of this context's device) as DEVICE tensor memory: a "
           "RegisteredArray (rrt_device_register). The tensor must be C-contiguous; its "
           "producer's pending writes must be done, or ordered before replayrt's use, first. "
           "UnsupportedError on the simulator; InvalidArgumentError for memory that is not "
           "device memory of this device or that the context already tracks.")
      .def(
          "stream",
          [](PythonContext &ctx) {
            auto stream = std::make_shared<PythonStream>();
            stream->stream = ctx.stream();
            return stream;
          },
          "A new Stream of this context (rrt_stream_create).")
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
      .def("event", &rrt::Context::event, "A new Event of this context (rrt_event_create).")
      .def(
          "run",
          [](PythonContext &ctx, const PythonCallable &callable, const py::sequence &values) {
            PythonArgs args = convert_args(own(ctx, callable), values);
            py::gil_scoped_release release;
            ctx.run(callable.id, args.args);
          },
          py::arg("callable"), py::arg("args"),
          "One program-mode run of `callable` over `args` (rrt_run), to completion, without the "
          "GIL while it runs.")
      .def(
          "launch",
          [](PythonContext &ctx, const PythonCallable &callable, const py::sequence &values,
             PythonStream &stream) {
            PythonArgs args = convert_args(own(ctx, callable), values);
            ctx.launch(callable.id, args.args, stream.stream);
            stream.hold(args.keep_alive);
          },
          py::arg("callable"), py::arg("args"), py::arg("stream"),
          "Queues a kernel-mode launch of `callable` over `args` on `stream` "
          "(rrt_kernel_launch), or records it into the stream's capture. The stream (or the "
          "graph) holds the arrays until the work is done.")
      .def(
          "prepare_run",
          [](PythonContext &ctx, const PythonCallable &callable, const py::sequence &values) {
            auto run = std::make_unique<PythonRun>();
            run->args = convert_args(own(ctx, callable), values);
            // A prepare may wait for the slot's last run.
            run->without_gil([&](rrt::Run &prepared) {
              prepared = ctx.prepare_run(callable.id, run->args.args);
            });
            return run;
          },
          py::arg("callable"), py::arg("args"),
          "A program-mode Run of `callable` over `args`, prepared (rrt_run_prepare) and not yet "
          "launched.")
      .def(
          "stats", [](const PythonContext &ctx) { return stats_dict(ctx.stats()); },
          "The context's counters (rrt_context_stats) as a dict; its 'refusals' a dict from "
          "growth point name to count.")
      .def(
          "profile", [](const PythonContext &ctx) { return profile_array(ctx.profile()); },
          "The task timings of the context's latest completed launch or replay (profiling on), "
          "as a numpy structured array of start_ns, end_ns, task and worker.");
}

}  // namespace replayrt::python
