// A stream, a graph, a program-mode run and a capture scope as Python holds them, each with the
// Python objects whose memory its work reads or writes. Their member functions are defined
// beside their bindings, in bind_streams.cpp.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <replayrt/replayrt.hpp>

#include "arguments.h"
#include "device_array.h"

namespace replayrt::python {

namespace py = pybind11;

// A stream and the Python objects its queued work reads or writes.
// The stream is destroyed first (without the GIL: it waits for its queued work), and only then
// the objects that work reads or writes, and last the native stream's owner
// (Context.wrap_stream), which must outlive the wrapper.
struct PythonStream {
  PythonStream() = default;
  PythonStream(const PythonStream &) = delete;
  PythonStream &operator=(const PythonStream &) = delete;
  ~PythonStream();

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
  void synchronize();
};

// The graph is destroyed before the objects its replays read or write.
struct PythonGraph {
  py::list keep_alive;
  rrt::Graph graph;
};

// A prepared program-mode run. Its calls that wait for device work (launch on the slot's own
// stream, wait, finalize) let go of the GIL, so two Python threads can be in the run's calls at
// once: every call on `run` holds `calls`, which guards the handle that finalize frees. A thread
// takes `calls` either after letting go of the GIL (without_gil) or while holding it for a call
// that does not wait, and never takes the GIL while holding `calls`, so the two locks cannot
// deadlock. The run is destroyed first (finalizing it, without the GIL), and only then the
// arguments it reads and writes.
struct PythonRun {
  PythonArgs args;
  std::mutex calls;
  rrt::Run run;

  PythonRun() = default;
  PythonRun(const PythonRun &) = delete;
  PythonRun &operator=(const PythonRun &) = delete;
  ~PythonRun();

  // call(run) without the GIL, holding `calls`.
  template <class Call>
  void without_gil(Call &&call) {
    const py::gil_scoped_release release;
    const std::lock_guard<std::mutex> lock(calls);
    std::forward<Call>(call)(run);
  }
  // call(run) with the GIL held, holding `calls`: for the calls that do not wait.
  template <class Call>
  auto with_gil(Call &&call) {
    const std::lock_guard<std::mutex> lock(calls);
    return std::forward<Call>(call)(run);
  }
};

// `with stream.capture() as graph:` ends the capture on every path: the graph receives what
// the capture's work holds, and an exception discards the capture. Each `with` on one scope
// makes a new graph.
struct CaptureScope {
  std::shared_ptr<PythonStream> stream;
  std::shared_ptr<PythonGraph> graph = nullptr;

  std::shared_ptr<PythonGraph> enter();
  bool exit(const py::object &exception_type, const py::object &, const py::object &);
};

}  // namespace replayrt::python
