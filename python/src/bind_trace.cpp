#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <replayrt/replayrt.hpp>
#include <replayrt/trace.hpp>

#include "arguments.h"
#include "bindings.h"
#include "device_array.h"

namespace replayrt::python {

namespace py = pybind11;

namespace {

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

void bind_trace(py::module_ &m) {
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
      .def(
          "write",
          [](const rrt::Trace &trace, const py::object &path) {
            py::module_::import("pathlib").attr("Path")(path).attr("write_text")(
                trace.json(), py::arg("encoding") = "utf-8");
          },
          py::arg("path"),
          "Writes the trace's JSON to `path` (a str or path-like); OSError when it cannot.");
}

}  // namespace replayrt::python
