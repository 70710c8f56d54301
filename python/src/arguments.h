// A prepared callable as Python holds it, and the conversion of a run's or launch's Python
// arguments (DeviceArrays, arrays numpy views in place, ints and floats) into rrt::Args.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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
  std::vector<rrt_direction_t> directions;                // per parameter
  std::vector<rrt_dtype_t> dtypes;                        // per parameter
  std::vector<std::optional<rrt_dtype_t>> scalar_dtypes;  // per scalar; none: untyped
};

// The arguments of one run or launch, and the Python objects whose memory they name.
struct PythonArgs {
  rrt::Args args;
  py::list keep_alive;
};

// `value` as a HOST tensor, read (and, when `written`, written) in place: an array, an
// object numpy views without a copy (a CPU torch tensor), or a bfloat16 tensor numpy cannot
// view, taken through DLPack as its uint16 bits (bfloat16_host_view); C-contiguous, with at
// least one element, and writable when written. An object numpy could only copy (a list) would
// leave the results in the copy, so it is refused. `what` names the argument in the TypeError
// (ValueError for no elements), which says which of these failed.
py::array host_array(const py::handle &value, bool written, const std::string &what);

// Each argument in order: a DeviceArray is a DEVICE tensor; an int, a float or a numpy scalar
// is the next scalar; anything else is a HOST tensor (host_array). A scalar declared float32 is
// converted to float32, one declared int32 or int64 must be an integer in that range
// (OverflowError; a float is a TypeError) and is sign-extended; an untyped scalar passes an
// integer as 64 bits (a negative one in two's complement; OverflowError outside
// [-2**63, 2**64)) and a float as float32. An array's dtype must be its parameter's (TypeError
// otherwise); keep_alive holds every array and DeviceArray the arguments name.
PythonArgs convert_args(const PythonCallable &callable, const py::sequence &values);

}  // namespace replayrt::python
