// A prepared callable as Python holds it, and the conversion of a run's or launch's Python
// arguments (DeviceArrays, arrays numpy views in place, ints and floats) into rrt::Args.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <replayrt/replayrt.hpp>

namespace replayrt::python {

namespace py = pybind11;

// A prepared callable, the serial of the context that prepared it (PythonContext::serial), and
// what its arguments are checked against.
struct PythonCallable {
  rrt::CallableId id;
  std::uint64_t context_serial = 0;
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
// is refused. `what` names the argument in the TypeError, which says which of these failed.
py::array host_array(const py::handle &value, bool written, const std::string &what);

// Each argument in order: a DeviceArray is a DEVICE tensor, an int a 64-bit scalar (a negative
// one in two's complement; OverflowError outside [-2**63, 2**64)), a float a float32 scalar,
// anything else a HOST tensor (host_array). An array's dtype must be its parameter's
// (TypeError otherwise); keep_alive holds every array and DeviceArray the arguments name.
PythonArgs convert_args(const PythonCallable &callable, const py::sequence &values);

}  // namespace replayrt::python
