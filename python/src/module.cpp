// The replayrt Python extension (_replayrt) over replayrt.hpp. Lifetimes: every Python object
// that wraps an owner keeps what the C ABI needs alive for as long as it needs it. A stream
// holds the host arrays and device arrays of the work it has queued until synchronize(); a
// capture hands the arrays of its work to its graph, which holds them for every replay. A
// registered array holds its producer (and the DLPack tensor it took from it) for as long as it
// lives, so that nothing queued or captured can reach freed memory.
// The classes are bound in bind_*.cpp (bindings.h); this file makes the module.
#include <cstdint>
#include <exception>
#include <string>
#include <utility>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <replayrt/replayrt.hpp>

#include "bindings.h"
#include "names.h"

namespace py = pybind11;
namespace binding = replayrt::python;

namespace {

// The factory replayrt/__init__.py registers at import (_set_error_factory): called with the
// status name, the message, the code, the growth point, and the requested and frozen bytes, it
// makes the replayrt.Error subclass of the status. Empty until registered.
py::object &error_factory() {
  static py::object factory;
  return factory;
}

// Sets Python's error indicator for `error`: the registered factory's exception, or a
// RuntimeError while none is registered.
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
  m.def("_growth_point_name",
        [](int point) { return rrt_growth_point_name(static_cast<rrt_growth_point_t>(point)); });
  m.def("_set_error_factory", [](py::object factory) { error_factory() = std::move(factory); });

  m.def(
      "dtype_value",
      [](const std::string &name) {
        return static_cast<std::uint32_t>(binding::dtype_from_name(name));
      },
      py::arg("name"), "The pinned rrt_dtype_t value of a dtype name (an immediate operand).");

  binding::bind_builder(m);
  binding::bind_arrays(m);
  binding::bind_streams(m);
  binding::bind_context(m);
  binding::bind_trace(m);
}
