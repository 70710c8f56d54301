// How an rrt::Error reaches Python: as the exception the package's factory makes for it
// (replayrt/__init__.py registers one at import: the replayrt.Error subclass of its status), or
// as a RuntimeError while none is registered.
#pragma once

#include <pybind11/pybind11.h>

#include <replayrt/replayrt.hpp>

namespace replayrt::python {

// The registered factory (empty until _set_error_factory): called with the status name, the
// message, the code, the growth point, and the requested and frozen bytes.
pybind11::object &error_factory();

// Sets Python's error indicator for `error`; the caller then returns to Python.
void raise_error(const rrt::Error &error);

}  // namespace replayrt::python
