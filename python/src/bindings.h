// The extension module's classes, bound in this order by PYBIND11_MODULE (module.cpp): a class
// a signature names is bound before it, so that docstrings name the Python class.
#pragma once

#include <pybind11/pybind11.h>

namespace replayrt::python {

// Operand, CallableBuilder, Callable.
void bind_builder(pybind11::module_ &m);
// DeviceArray (numpy copies, DLPack export), RegisteredArray (Context.register).
void bind_arrays(pybind11::module_ &m);
// Run, Event, Graph, _CaptureScope, Stream.
void bind_streams(pybind11::module_ &m);
// Context.
void bind_context(pybind11::module_ &m);
// _TraceHostScope, Trace.
void bind_trace(pybind11::module_ &m);

}  // namespace replayrt::python
