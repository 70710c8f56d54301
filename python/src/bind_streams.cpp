#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <replayrt/replayrt.hpp>

#include "arguments.h"
#include "bindings.h"
#include "device_array.h"
#include "names.h"
#include "streams.h"
#include "timings.h"
#include "without_gil.h"

namespace replayrt::python {

namespace py = pybind11;

PythonStream::~PythonStream() {
  destroy_without_gil(stream);
}

PythonRun::~PythonRun() {
  destroy_without_gil(run);
}

void PythonStream::synchronize() {
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

std::shared_ptr<PythonGraph> CaptureScope::enter() {
  stream->stream.begin_capture();
  graph = std::make_shared<PythonGraph>();
  stream->captured = py::list();
  return graph;
}

bool CaptureScope::exit(const py::object &exception_type, const py::object &, const py::object &) {
  py::list captured = std::exchange(stream->captured, py::list());
  if (!exception_type.is_none()) {
    stream->stream.discard_capture();
    return false;
  }
  graph->graph = stream->stream.end_capture();
  graph->keep_alive = std::move(captured);
  return false;
}

namespace {

// `run`, unless it was finalized: InvalidArgumentError naming the Run method `call` then.
rrt::Run &live(rrt::Run &run, const char *call) {
  if (!run) {
    throw rrt::detail::invalid_argument(std::string("replayrt: Run.") + call +
                                        ": the run was finalized");
  }
  return run;
}

// ValueError unless `host` holds exactly the device array's bytes (a copy moves them all).
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

}  // namespace

void bind_streams(py::module_ &m) {
  py::class_<PythonRun>(m, "Run",
                        "A prepared program-mode run (Context.prepare_run): launch, wait, then "
                        "finalize, or use it in `with`, which finalizes it on leaving.")
      .def(
          "launch",
          [](PythonRun &r, PythonStream *stream) {
            if (stream == nullptr) {
              // The slot's own stream: the run holds its arguments until it is finalized.
              r.without_gil([](rrt::Run &run) { live(run, "launch").launch(); });
              return;
            }
            // With the GIL held from the launch to the hold: a capture that another thread
            // ends in between would otherwise lose the arguments its graph replays.
            r.with_gil([stream](rrt::Run &run) { live(run, "launch").launch(stream->stream); });
            // Captured, the launch reads and writes them at every replay of the graph.
            stream->hold(r.args.keep_alive);
          },
          py::arg("stream") = py::none(),
          "Queues the run on `stream`, or on its slot's own stream when None (rrt_run_launch).")
      .def(
          "wait",
          [](PythonRun &r) { r.without_gil([](rrt::Run &run) { live(run, "wait").wait(); }); },
          "Waits for the launched run to complete (rrt_run_wait), without the GIL.")
      .def(
          "profile",
          [](PythonRun &r) {
            return profile_array(
                r.with_gil([](rrt::Run &run) { return live(run, "profile").profile(); }));
          },
          "The completed run's task timings (profiling on), as Context.profile returns them.")
      .def(
          "finalize", [](PythonRun &r) { r.without_gil([](rrt::Run &run) { run.finalize(); }); },
          "Waits for a launched run and releases its slot (rrt_run_finalize), without the GIL; "
          "a finalized run's finalize does nothing.")
      .def("__enter__", [](const py::object &self) { return self; })
      .def("__exit__", [](PythonRun &r, const py::args & /*exception*/) {
        r.without_gil([](rrt::Run &run) { run.finalize(); });
        return false;
      });

  py::class_<rrt::Event>(m, "Event", "An event of a context (Context.event).")
      .def(
          "synchronize",
          [](const rrt::Event &e) {
            py::gil_scoped_release release;
            e.synchronize();
          },
          "Waits, without the GIL, until the work before the event's latest record is done.")
      .def("query", &rrt::Event::query,
           "Whether the work before the event's latest record is done, without waiting.");

  py::class_<PythonGraph, std::shared_ptr<PythonGraph>>(
      m, "Graph",
      "The work a capture recorded (`with stream.capture() as graph:`), replayed as often as "
      "needed at the addresses it captured; it holds every array its work names.")
      .def(
          "replay",
          [](const std::shared_ptr<PythonGraph> &g, PythonStream &stream) {
            if (!g->graph) {
              throw rrt::detail::invalid_argument(
                  "replayrt: Graph.replay: the graph holds no captured work: its capture has "
                  "not ended, or an exception discarded it");
            }
            g->graph.replay(stream.stream);
            py::list self;
            self.append(py::cast(g));
            stream.hold(self);
          },
          py::arg("stream"),
          "Queues one replay of the captured work on `stream` (rrt_graph_replay). "
          "StaleAddressError when an address it captured no longer names the same allocation.")
      .def("__bool__", [](const PythonGraph &g) { return static_cast<bool>(g.graph); });

  py::class_<CaptureScope>(m, "_CaptureScope")
      .def("__enter__", &CaptureScope::enter)
      .def("__exit__", &CaptureScope::exit);

  py::class_<PythonStream, std::shared_ptr<PythonStream>>(
      m, "Stream", "A stream of a context (Context.stream or Context.wrap_stream).")
      .def("synchronize", &PythonStream::synchronize,
           "Waits, without the GIL, for the work queued on the stream, and raises the failure "
           "of any of it; then lets go of the arrays that work held.")
      .def(
          "query", [](const PythonStream &s) { return s.stream.query(); },
          "Whether the work queued on the stream is done, without waiting.")
      .def(
          "record", [](PythonStream &s, const rrt::Event &e) { s.stream.record(e); },
          py::arg("event"), "Records `event` after the work queued so far.")
      .def(
          "wait", [](PythonStream &s, const rrt::Event &e) { s.stream.wait(e); }, py::arg("event"),
          "Orders the stream's later work after `event`'s latest record.")
      .def(
          "capture", [](const std::shared_ptr<PythonStream> &s) { return CaptureScope{s}; },
          "A capture scope: `with stream.capture() as graph:` records the block's work on the "
          "stream into a new Graph instead of running it.")
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
            const DeviceArray &device = device_array(destination, "an upload's destination");
            const py::array array = host_array(source, false, "an upload's source");
            require_same_dtype(array.dtype(), device.dtype);
            require_same_bytes(array, device);
            s.stream.upload(device.live(), array.data(), device.bytes);
            s.hold(both(array, destination));
          },
          py::arg("destination"), py::arg("source"),
          "Queues (or captures) a copy of host array `source` into DeviceArray `destination`; "
          "the same dtype and bytes.")
      .def(
          "download",
          [](PythonStream &s, const py::object &destination, const py::object &source) {
            const DeviceArray &device = device_array(source, "a download's source");
            const py::array array = host_array(destination, true, "a download's destination");
            require_same_dtype(array.dtype(), device.dtype);
            require_same_bytes(array, device);
            s.stream.download(const_cast<void *>(array.data()), device.live(), device.bytes);
            s.hold(both(array, source));
          },
          py::arg("destination"), py::arg("source"),
          "Queues (or captures) a copy of DeviceArray `source` into writable host array "
          "`destination`; the same dtype and bytes.");
}

}  // namespace replayrt::python
