#include "arguments.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "device_array.h"
#include "dlpack_interop.h"
#include "names.h"

namespace replayrt::python {

namespace py = pybind11;

py::array host_array(const py::handle &value, bool written, const std::string &what) {
  py::array array = py::array::ensure(value);
  const std::string type = type_name(value);
  const char *const expected =
      " (a DeviceArray, or a C-contiguous array or an object numpy views without a copy, such "
      "as a CPU torch tensor)";
  if (!array && py::hasattr(value, "__dlpack__")) {
    try {
      array = bfloat16_host_view(value, what);
    } catch (py::error_already_set &error) {
      if (!error.matches(PyExc_Exception)) {
        throw;
      }
      const std::string reason =
          type_name(error.value()) + ": " + py::str(error.value()).cast<std::string>();
      throw py::type_error("replayrt: " + what + ": numpy cannot view this " + type +
                           ", and taking it through DLPack failed (" + reason + ")" + expected);
    }
  }
  if (!array) {
    throw py::type_error("replayrt: " + what + ": numpy cannot view this " + type + expected);
  }
  if (array.size() == 0) {
    throw py::value_error("replayrt: " + what + ": this " + type +
                          " holds no elements (a tensor has at least one)");
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

// What a scalar argument is: an integer (a Python int or bool, a numpy integer or bool) or a
// floating point number (a Python float, a numpy floating scalar). Anything else is not a
// scalar.
enum class ScalarKind { kNotScalar, kInteger, kFloat };

ScalarKind scalar_kind(const py::handle &value) {
  if (py::isinstance<py::int_>(value)) {
    return ScalarKind::kInteger;
  }
  if (py::isinstance<py::float_>(value)) {
    return ScalarKind::kFloat;
  }
  if (py::isinstance<py::array>(value)) {
    return ScalarKind::kNotScalar;
  }
  const py::module_ numpy = py::module_::import("numpy");
  if (py::isinstance(value, numpy.attr("integer")) || py::isinstance(value, numpy.attr("bool_"))) {
    return ScalarKind::kInteger;
  }
  if (py::isinstance(value, numpy.attr("floating"))) {
    return ScalarKind::kFloat;
  }
  return ScalarKind::kNotScalar;
}

[[noreturn]] void throw_overflow(const std::string &message) {
  PyErr_SetString(PyExc_OverflowError, message.c_str());
  throw py::error_already_set();
}

// An integer argument's 64 bits for scalar number `scalar`. Untyped, a value in [0, 2**64) is
// itself and one in [-2**63, 0) its two's complement; declared int64 or int32, the value must
// lie in that dtype's range and is sign-extended. OverflowError otherwise.
std::uint64_t integer_scalar(const py::handle &value, std::size_t scalar,
                             std::optional<rrt_dtype_t> dtype) {
  const std::string name = "replayrt: scalar " + std::to_string(scalar);
  // A numpy bool is an integer as Python's bool is; numpy deprecates its __index__.
  const bool numpy_bool = PyLong_Check(value.ptr()) == 0 &&
                          py::isinstance(value, py::module_::import("numpy").attr("bool_"));
  const auto integer = py::reinterpret_steal<py::object>(numpy_bool ? PyNumber_Long(value.ptr())
                                                                    : PyNumber_Index(value.ptr()));
  if (!integer) {
    PyErr_Clear();
    throw py::type_error(name + ": " + py::repr(value).cast<std::string>() +
                         " is no integer (a scalar is an int, a float or a numpy number)");
  }
  int overflow = 0;
  const long long as_signed = PyLong_AsLongLongAndOverflow(integer.ptr(), &overflow);
  if (overflow == 0 && as_signed == -1 && PyErr_Occurred() != nullptr) {
    throw py::error_already_set();
  }
  if (dtype == RRT_DTYPE_I32 && (overflow != 0 || as_signed < INT32_MIN || as_signed > INT32_MAX)) {
    throw_overflow(name + " is int32: " + py::repr(integer).cast<std::string>() +
                   " lies outside [-2**31, 2**31)");
  }
  if (dtype == RRT_DTYPE_I64 && overflow != 0) {
    throw_overflow(name + " is int64: " + py::repr(integer).cast<std::string>() +
                   " lies outside [-2**63, 2**63)");
  }
  if (overflow == 0) {
    return static_cast<std::uint64_t>(as_signed);
  }
  if (overflow > 0) {
    const unsigned long long as_unsigned = PyLong_AsUnsignedLongLong(integer.ptr());
    if (PyErr_Occurred() == nullptr) {
      return as_unsigned;
    }
    PyErr_Clear();
  }
  throw_overflow(name + " does not fit 64 bits: an int scalar lies in [-2**63, 2**64)");
}

// A number as float32 for scalar number `scalar`: rounded to the nearest float32, NaN and the
// infinities as themselves. OverflowError for a finite value beyond float32's range.
float float32_scalar(const py::handle &value, std::size_t scalar) {
  const std::string name = "replayrt: scalar " + std::to_string(scalar) + " is float32: ";
  const double as_double = PyFloat_AsDouble(value.ptr());
  if (as_double == -1.0 && PyErr_Occurred() != nullptr) {
    if (PyErr_ExceptionMatches(PyExc_OverflowError) == 0) {
      throw py::error_already_set();
    }
    PyErr_Clear();
    throw_overflow(name + "the int does not fit a float");
  }
  if (std::isfinite(as_double) && std::fabs(as_double) > FLT_MAX) {
    throw_overflow(name + py::repr(value).cast<std::string>() +
                   " lies outside its range (its largest magnitude is 3.4028235e+38)");
  }
  return static_cast<float>(as_double);
}

// A scalar argument's 64 bits for scalar number `scalar` of declared dtype `dtype` (none: the
// argument's own kind decides). TypeError for a float passed for an integer dtype.
std::uint64_t scalar_bits(const py::handle &value, ScalarKind kind, std::size_t scalar,
                          std::optional<rrt_dtype_t> dtype) {
  if (dtype == RRT_DTYPE_F32 || (!dtype && kind == ScalarKind::kFloat)) {
    return rrt_scalar_from_f32(float32_scalar(value, scalar));
  }
  if (kind == ScalarKind::kFloat) {
    throw py::type_error("replayrt: scalar " + std::to_string(scalar) + " is " +
                         numpy_dtype_of(*dtype).described + "; pass an int, not " +
                         py::repr(value).cast<std::string>());
  }
  return integer_scalar(value, scalar, dtype);
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
    } else if (const ScalarKind kind = scalar_kind(value); kind != ScalarKind::kNotScalar) {
      const std::optional<rrt_dtype_t> dtype =
          scalar < callable.scalar_dtypes.size() ? callable.scalar_dtypes[scalar] : std::nullopt;
      out.args.scalar(scalar_bits(value, kind, scalar, dtype));
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
