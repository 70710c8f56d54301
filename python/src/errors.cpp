#include "errors.h"

namespace replayrt::python {

namespace py = pybind11;

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

}  // namespace replayrt::python
