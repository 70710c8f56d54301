#include "arguments.h"

#include <cstdint>
#include <string>

#include "device_array.h"
#include "names.h"

namespace replayrt::python {

namespace py = pybind11;

py::array host_array(const py::handle &value, bool written, const std::string &what) {
  py::array array = py::array::ensure(value);
  const std::string type = type_name(value);
  const char *const expected =
      " (a DeviceArray, or a C-contiguous array or an object numpy views without a copy, such "
      "as a CPU torch tensor)";
  if (!array) {
    throw py::type_error("replayrt: " + what + ": numpy cannot view this " + type + expected);
  }
  if (!py::isinstance<py::array>(value) && array.owndata()) {
    throw py::type_error("replayrt: " + what + ": numpy would copy this " + type +
                         ", and the results would land in the copy" + expected);
  }
  if ((array.flags() & py::array::c_style) == 0) {
    throw py::type_error("replayrt: " + what + ": this " + type +
                         " is not C-contiguous; pass a contiguous one "
                         "(numpy.ascontiguousarray) and read the results from it");
  }
  refuse_objects(array.dtype(), what);
  if (written && !array.writeable()) {
    throw py::type_error("replayrt: " + what + " is written, so its array must be writable");
  }
  return array;
}

namespace {

// TypeError unless an argument's dtype is its parameter's (when the callable declares that
// parameter: a surplus argument is the C ABI's to refuse).
void require_param_dtype(const PythonCallable &callable, std::size_t param,
                         const py::dtype &given) {
  if (param >= callable.dtypes.size()) {
    return;
  }
  const NumpyDtype expected = numpy_dtype_of(callable.dtypes[param]);
  if (!same_dtype(given, py::dtype(expected.numpy))) {
    throw py::type_error("replayrt: parameter " + std::to_string(param) + " is " +
                         expected.described + "; the array is " + dtype_text(given));
  }
}

// An int scalar's 64 bits: a value in [0, 2**64) as itself, a negative one in [-2**63, 0) as
// its two's complement. OverflowError for any other int. `scalar` counts the scalars before it.
std::uint64_t int_scalar(const py::handle &value, std::size_t scalar) {
  int overflow = 0;
  const long long as_signed = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow == 0) {
    if (as_signed == -1 && PyErr_Occurred() != nullptr) {
      throw py::error_already_set();
    }
    return static_cast<std::uint64_t>(as_signed);
  }
  if (overflow > 0) {
    const unsigned long long as_unsigned = PyLong_AsUnsignedLongLong(value.ptr());
    if (PyErr_Occurred() == nullptr) {
      return as_unsigned;
    }
    PyErr_Clear();
  }
  const std::string message = "replayrt: scalar " + std::to_string(scalar) +
                              " does not fit 64 bits: an int scalar lies in [-2**63, 2**64)";
  PyErr_SetString(PyExc_OverflowError, message.c_str());
  throw py::error_already_set();
}

}  // namespace

PythonArgs convert_args(const PythonCallable &callable, const py::sequence &values) {
  PythonArgs out;
  std::size_t param = 0;
  std::size_t scalar = 0;
  for (const py::handle value : values) {
    if (py::isinstance<DeviceArray>(value)) {
      const auto &array = value.cast<const DeviceArray &>();
      require_param_dtype(callable, param, array.dtype);
      out.args.device(array.live());
      out.keep_alive.append(value);
      ++param;
    } else if (py::isinstance<py::int_>(value)) {
      out.args.scalar(int_scalar(value, scalar++));
    } else if (py::isinstance<py::float_>(value)) {
      out.args.scalar_f32(value.cast<float>());
      ++scalar;
    } else {
      const bool read_only =
          param < callable.directions.size() && callable.directions[param] == RRT_DIR_IN;
      const py::array array = host_array(value, !read_only, "parameter " + std::to_string(param));
      require_param_dtype(callable, param, array.dtype());
      // The runtime only reads an IN parameter's memory.
      out.args.host(const_cast<void *>(array.data()), static_cast<std::size_t>(array.nbytes()));
      out.keep_alive.append(array);
      ++param;
    }
  }
  return out;
}

}  // namespace replayrt::python
