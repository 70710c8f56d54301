#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include <replayrt/replayrt.hpp>

#include "arguments.h"
#include "bindings.h"
#include "names.h"

namespace replayrt::python {

namespace py = pybind11;

void bind_builder(py::module_ &m) {
  py::class_<rrt::Operand>(m, "Operand")
      .def_static("immediate", &rrt::Operand::immediate)
      .def_static("immediate_f32", &rrt::Operand::immediate_f32);

  py::class_<rrt::CallableBuilder>(m, "CallableBuilder")
      .def(py::init([](const std::string &bind) {
             return rrt::CallableBuilder(bind == "host" ? RRT_BIND_HOST_BUILD
                                                        : RRT_BIND_DEVICE_BUILD);
           }),
           py::arg("bind") = "device")
      .def(
          "param",
          [](rrt::CallableBuilder &b, std::string name, const rrt::CallableBuilder::Shape &shape,
             const std::string &dtype, const std::string &direction, const std::string &space) {
            return b.param(std::move(name), dtype_from_name(dtype), shape,
                           direction_from_name(direction), space_from_name(space));
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32",
          py::arg("direction") = "in", py::arg("space") = "any")
      .def(
          "intermediate",
          [](rrt::CallableBuilder &b, std::string name, const rrt::CallableBuilder::Shape &shape,
             const std::string &dtype) {
            return b.intermediate(std::move(name), dtype_from_name(dtype), shape);
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32")
      .def("scalar", &rrt::CallableBuilder::scalar, py::arg("name"))
      .def(
          "view",
          [](rrt::CallableBuilder &b, std::string name, const rrt::Operand &base,
             const rrt::CallableBuilder::Shape &shape, std::uint64_t offset,
             std::optional<rrt::Operand> offset_value, std::uint64_t stride, std::uint64_t max) {
            if (offset_value) {
              return b.view(std::move(name), base, shape, offset, *offset_value, stride, max);
            }
            return b.view(std::move(name), base, shape, offset);
          },
          py::arg("name"), py::arg("base"), py::arg("shape"), py::arg("offset") = 0,
          py::arg("offset_value") = py::none(), py::arg("stride") = 0, py::arg("max") = 0)
      .def("device_value", &rrt::CallableBuilder::device_value, py::arg("name"), py::arg("source"),
           py::arg("element"))
      .def(
          "task",
          [](rrt::CallableBuilder &b, std::string kernel, const std::vector<rrt::Operand> &operands)
              -> rrt::CallableBuilder & { return b.task(std::move(kernel), operands); },
          py::return_value_policy::reference_internal)
      .def("__getitem__", &rrt::CallableBuilder::operator[])
      .def_property_readonly("task_count", &rrt::CallableBuilder::task_count);

  py::class_<PythonCallable>(m, "Callable")
      .def_property_readonly("id", [](const PythonCallable &c) { return c.id.value; })
      .def_property_readonly("task_count", [](const PythonCallable &c) { return c.task_count; });
}

}  // namespace replayrt::python
