#include "names.h"

#include <array>
#include <cstddef>
#include <utility>

namespace replayrt::python {

namespace py = pybind11;

namespace {

// The enumerator `table` names `name`; ValueError listing the names otherwise.
template <typename Enum, std::size_t N>
Enum enum_from_name(const std::string &name,
                    const std::array<std::pair<const char *, Enum>, N> &table, const char *what) {
  std::string known;
  for (const auto &[candidate, value] : table) {
    if (name == candidate) {
      return value;
    }
    known += known.empty() ? "'" : ", '";
    known += candidate;
    known += "'";
  }
  throw py::value_error("replayrt: " + std::string(what) + " must be one of " + known + ", not '" +
                        name + "'");
}

}  // namespace

rrt_dtype_t dtype_from_name(const std::string &name) {
  static constexpr std::array<std::pair<const char *, rrt_dtype_t>, 6> kNames{{
      {"float32", RRT_DTYPE_F32},
      {"float16", RRT_DTYPE_F16},
      {"bfloat16", RRT_DTYPE_BF16},
      {"int32", RRT_DTYPE_I32},
      {"int64", RRT_DTYPE_I64},
      {"uint8", RRT_DTYPE_U8},
  }};
  return enum_from_name(name, kNames, "a dtype");
}

rrt_dtype_t scalar_dtype_from_name(const std::string &name) {
  static constexpr std::array<std::pair<const char *, rrt_dtype_t>, 3> kNames{{
      {"float32", RRT_DTYPE_F32},
      {"int32", RRT_DTYPE_I32},
      {"int64", RRT_DTYPE_I64},
  }};
  return enum_from_name(name, kNames, "a scalar's dtype");
}

NumpyDtype numpy_dtype_of(rrt_dtype_t dtype) {
  static constexpr std::array<NumpyDtype, 6> kDtypes{{
      {RRT_DTYPE_F32, "float32", "float32"},
      {RRT_DTYPE_F16, "float16", "float16"},
      {RRT_DTYPE_BF16, "uint16", "bfloat16 (a uint16 array holds its bits)"},
      {RRT_DTYPE_I32, "int32", "int32"},
      {RRT_DTYPE_I64, "int64", "int64"},
      {RRT_DTYPE_U8, "uint8", "uint8"},
  }};
  for (const NumpyDtype &entry : kDtypes) {
    if (entry.dtype == dtype) {
      return entry;
    }
  }
  throw py::value_error("replayrt: unknown dtype value " + std::to_string(dtype));
}

std::string type_name(const py::handle &value) {
  return py::str(py::type::handle_of(value).attr("__name__"));
}

std::string dtype_text(const py::dtype &dtype) {
  return py::str(static_cast<const py::object &>(dtype));
}

bool same_dtype(const py::dtype &a, const py::dtype &b) {
  return a.attr("__eq__")(b).cast<bool>();
}

void refuse_objects(const py::dtype &dtype, const std::string &what) {
  if (dtype.attr("hasobject").cast<bool>()) {
    throw py::type_error("replayrt: " + what + " is an array of Python objects (dtype " +
                         dtype_text(dtype) + "); replayrt takes arrays of numbers only");
  }
}

void require_same_dtype(const py::dtype &host, const py::dtype &device) {
  if (!same_dtype(host, device)) {
    throw py::type_error("replayrt: the device array is " + dtype_text(device) +
                         "; the host array is " + dtype_text(host) +
                         " (a copy moves bytes; it converts nothing)");
  }
}

rrt_direction_t direction_from_name(const std::string &name) {
  static constexpr std::array<std::pair<const char *, rrt_direction_t>, 3> kNames{{
      {"in", RRT_DIR_IN},
      {"out", RRT_DIR_OUT},
      {"inout", RRT_DIR_INOUT},
  }};
  return enum_from_name(name, kNames, "a direction");
}

rrt_platform_t platform_from_name(const std::string &name) {
  static constexpr std::array<std::pair<const char *, rrt_platform_t>, 2> kNames{{
      {"sim", RRT_PLATFORM_SIM},
      {"cuda", RRT_PLATFORM_CUDA},
  }};
  return enum_from_name(name, kNames, "a platform");
}

rrt_bind_strategy_t bind_from_name(const std::string &name) {
  static constexpr std::array<std::pair<const char *, rrt_bind_strategy_t>, 2> kNames{{
      {"device", RRT_BIND_DEVICE_BUILD},
      {"host", RRT_BIND_HOST_BUILD},
  }};
  return enum_from_name(name, kNames, "a bind");
}

const char *platform_name(rrt_platform_t platform) {
  return platform == RRT_PLATFORM_CUDA ? "cuda" : "sim";
}

rrt_param_space_t space_from_name(const std::string &name) {
  static constexpr std::array<std::pair<const char *, rrt_param_space_t>, 3> kNames{{
      {"any", RRT_PARAM_SPACE_ANY},
      {"host", RRT_PARAM_SPACE_HOST},
      {"device", RRT_PARAM_SPACE_DEVICE},
  }};
  return enum_from_name(name, kNames, "a space");
}

}  // namespace replayrt::python
