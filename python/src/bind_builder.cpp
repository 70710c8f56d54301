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
  py::class_<rrt::Operand>(m, "Operand",
                           "A task operand: a tensor, scalar, view or device value a "
                           "CallableBuilder declared, or an immediate.")
      .def_static("immediate", &rrt::Operand::immediate, py::arg("value"),
                  "A 32-bit integer fixed in the callable.")
      .def_static("immediate_f32", &rrt::Operand::immediate_f32, py::arg("value"),
                  "A float32 fixed in the callable.");

  py::class_<rrt::CallableBuilder>(
      m, "CallableBuilder",
      "Declares a callable: its parameters, intermediates, scalars, views and device values by "
      "name, and its tasks by kernel name, for Context.kernel_init and Context.prepare.")
      .def(py::init(
               [](const std::string &bind) { return rrt::CallableBuilder(bind_from_name(bind)); }),
           py::arg("bind") = "device",
           "`bind` is 'device' (the device builds the task graph) or 'host'.")
      .def(
          "param",
          [](rrt::CallableBuilder &b, std::string name, const rrt::CallableBuilder::Shape &shape,
             const std::string &dtype, const std::string &direction, const std::string &space) {
            return b.param(std::move(name), dtype_from_name(dtype), shape,
                           direction_from_name(direction), space_from_name(space));
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32",
          py::arg("direction") = "in", py::arg("space") = "any",
          "Declares the next parameter (argument order is declaration order): `direction` "
          "'in', 'out' or 'inout'; `space` 'any', 'host' or 'device'. Returns its Operand.")
      .def(
          "intermediate",
          [](rrt::CallableBuilder &b, std::string name, const rrt::CallableBuilder::Shape &shape,
             const std::string &dtype) {
            return b.intermediate(std::move(name), dtype_from_name(dtype), shape);
          },
          py::arg("name"), py::arg("shape"), py::arg("dtype") = "float32",
          "Declares an intermediate tensor, device memory the callable's plan holds between "
          "tasks. Returns its Operand.")
      .def(
          "scalar",
          [](rrt::CallableBuilder &b, std::string name, const std::optional<std::string> &dtype) {
            if (dtype) {
              return b.scalar(std::move(name), scalar_dtype_from_name(*dtype));
            }
            return b.scalar(std::move(name));
          },
          py::arg("name"), py::arg("dtype") = py::none(),
          "Declares the next per-run scalar. With `dtype` 'float32', each argument for it (an "
          "int, a float or a numpy number) is converted to float32 (OverflowError for a finite "
          "value beyond its range); with 'int32' or 'int64' it "
          "must be an integer in that dtype's range (a float is a TypeError). Without a dtype, "
          "an int is passed as 64 bits and a float as float32. Returns its Operand.")
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
          py::arg("offset_value") = py::none(), py::arg("stride") = 0, py::arg("max") = 0,
          "Declares a view of `base`: `shape` elements, `offset` elements in, plus `stride` "
          "elements per unit of the device value `offset_value` when given (read when the task "
          "runs; it must lie in [0, max]). Returns its Operand.")
      .def("device_value", &rrt::CallableBuilder::device_value, py::arg("name"), py::arg("source"),
           py::arg("element"),
           "Declares a value read on the device from element `element` of tensor `source` "
           "when a task runs. Returns its Operand.")
      .def(
          "task",
          [](rrt::CallableBuilder &b, std::string kernel, const std::vector<rrt::Operand> &operands)
              -> rrt::CallableBuilder & { return b.task(std::move(kernel), operands); },
          py::return_value_policy::reference_internal, py::arg("kernel"), py::arg("operands"),
          "Appends a task running kernel `kernel` (a built-in's or a registered kernel's name) "
          "on `operands`. Returns the builder.")
      .def("__getitem__", &rrt::CallableBuilder::operator[], py::arg("name"),
           "The Operand declared as `name`.")
      .def_property_readonly("task_count", &rrt::CallableBuilder::task_count);

  py::class_<PythonCallable>(m, "Callable",
                             "A callable a context prepared (Context.prepare); only that "
                             "context runs or launches it.")
      .def_property_readonly("id", [](const PythonCallable &c) { return c.id.value; })
      .def_property_readonly("task_count", [](const PythonCallable &c) { return c.task_count; });
}

}  // namespace replayrt::python
