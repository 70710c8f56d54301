// The names Python passes for the C ABI's enumerations (dtypes, directions, platforms, spaces)
// and the dtype checks every copy and argument goes through. Each lookup throws ValueError
// listing the accepted names; each check throws TypeError naming both dtypes.
#pragma once

#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <replayrt/replayrt.hpp>

namespace replayrt::python {

rrt_dtype_t dtype_from_name(const std::string &name);
// A scalar's dtype: 'float32', 'int32' or 'int64'.
rrt_dtype_t scalar_dtype_from_name(const std::string &name);
rrt_direction_t direction_from_name(const std::string &name);
rrt_platform_t platform_from_name(const std::string &name);
rrt_bind_strategy_t bind_from_name(const std::string &name);
// "sim" or "cuda": the name platform_from_name takes for `platform`.
const char *platform_name(rrt_platform_t platform);
rrt_param_space_t space_from_name(const std::string &name);

// The numpy dtype that holds a parameter's elements, and how messages name the parameter's
// dtype. numpy has no bfloat16: a uint16 array holds its bits.
struct NumpyDtype {
  rrt_dtype_t dtype;
  const char *numpy;
  const char *described;
};

// ValueError for a value no dtype name stands for.
NumpyDtype numpy_dtype_of(rrt_dtype_t dtype);

// How messages name the type of `value` ("ndarray", "Tensor", "list").
std::string type_name(const pybind11::handle &value);

// How messages name a numpy dtype.
std::string dtype_text(const pybind11::dtype &dtype);

// numpy's dtype equality (so that '<f4' and float32 are one dtype).
bool same_dtype(const pybind11::dtype &a, const pybind11::dtype &b);

// TypeError for a dtype of Python objects: replayrt copies bytes, and an object's bytes are a
// pointer that a copy would duplicate without a reference.
void refuse_objects(const pybind11::dtype &dtype, const std::string &what);

// TypeError unless a copy's host array has its device array's dtype.
void require_same_dtype(const pybind11::dtype &host, const pybind11::dtype &device);

}  // namespace replayrt::python
