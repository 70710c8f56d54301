#include "arguments.h"

#include <cstdint>

#include "device_array.h"
#include "names.h"

namespace replayrt::python {

namespace py = pybind11;

py::array host_array(const py::handle &value, bool written, const std::string &what) {
  py::array array = py::array::ensure(value);
  const bool copied = !py::isinstance<py::array>(value) && array && array.owndata();
  if (!array || copied || (array.flags() & py::array::c_style) == 0) {
    throw py::type_error("replayrt: " + what +
                         " must be a DeviceArray, or a C-contiguous array or an object numpy "
                         "views without a copy");
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

}  // namespace

PythonArgs convert_args(const PythonCallable &callable, const py::sequence &values) {
  PythonArgs out;
  std::size_t param = 0;
  for (const py::handle value : values) {
    if (py::isinstance<DeviceArray>(value)) {
      const auto &array = value.cast<const DeviceArray &>();
      require_param_dtype(callable, param, array.dtype);
      out.args.device(array.live());
      out.keep_alive.append(value);
      ++param;
    } else if (py::isinstance<py::int_>(value)) {
      out.args.scalar(value.cast<std::uint64_t>());
    } else if (py::isinstance<py::float_>(value)) {
      out.args.scalar_f32(value.cast<float>());
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
