#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <replayrt/replayrt.hpp>

#include "bindings.h"
#include "device_array.h"
#include "dlpack_interop.h"
#include "names.h"

namespace replayrt::python {

namespace py = pybind11;

namespace {

// "shape=(4, 3), dtype=float32, device='sim:0'": what a device array's repr says of it.
std::string describe(const DeviceArray &a) {
  return "shape=" + std::string(py::repr(py::tuple(py::cast(a.shape)))) +
         ", dtype=" + dtype_text(a.dtype) + ", device='" + platform_name(a.platform) + ":" +
         std::to_string(a.device_id) + "'";
}

}  // namespace

const DeviceArray &device_array(const py::handle &value, const std::string &what) {
  if (!py::isinstance<DeviceArray>(value)) {
    throw py::type_error("replayrt: " + what + " must be a DeviceArray, not " + type_name(value));
  }
  return value.cast<const DeviceArray &>();
}

void bind_arrays(py::module_ &m) {
  py::class_<DeviceArray>(m, "DeviceArray",
                          "Device memory of a context with a shape and a dtype (Context.empty): "
                          "a DEVICE tensor argument, copied with upload and numpy, viewed "
                          "through DLPack.")
      .def_property_readonly("shape",
                             [](const DeviceArray &a) { return py::tuple(py::cast(a.shape)); })
      .def_property_readonly("dtype", [](const DeviceArray &a) { return a.dtype; })
      .def_property_readonly("nbytes", [](const DeviceArray &a) { return a.bytes; })
      .def_property_readonly("itemsize", [](const DeviceArray &a) { return a.dtype.itemsize(); })
      .def_property_readonly("ndim", [](const DeviceArray &a) { return a.shape.size(); })
      .def_property_readonly("size",
                             [](const DeviceArray &a) {
                               return std::accumulate(a.shape.begin(), a.shape.end(),
                                                      std::int64_t{1}, std::multiplies<>());
                             })
      .def("__len__",
           [](const DeviceArray &a) {
             if (a.shape.empty()) {
               throw py::type_error("len() of unsized replayrt.DeviceArray");
             }
             return a.shape.front();
           })
      .def("__array__",
           [](const DeviceArray &, const py::args &, const py::kwargs &) -> py::object {
             throw py::type_error(
                 "replayrt: a DeviceArray does not convert to a numpy array implicitly: use "
                 ".numpy() for a copy, numpy.from_dlpack for a view");
           })
      .def("__repr__",
           [](const DeviceArray &a) { return "replayrt.DeviceArray(" + describe(a) + ")"; })
      .def(
          "upload",
          [](const DeviceArray &a, const py::object &source) {
            // A copy now: any object numpy converts will do, copied if it must be, and a
            // bfloat16 tensor numpy cannot view, through DLPack.
            py::array contiguous = py::array::ensure(source, py::array::c_style);
            if (!contiguous && py::hasattr(source, "__dlpack__")) {
              contiguous = py::array::ensure(bfloat16_host_view(source, "an upload's source"),
                                             py::array::c_style);
            }
            if (!contiguous) {
              throw py::type_error(
                  "replayrt: an upload's source must be an array or an object "
                  "numpy converts, not " +
                  type_name(source));
            }
            refuse_objects(contiguous.dtype(), "an upload's source");
            require_same_dtype(contiguous.dtype(), a.dtype);
            if (static_cast<std::size_t>(contiguous.nbytes()) != a.bytes) {
              throw py::value_error("replayrt: upload needs exactly the array's bytes");
            }
            a.live().upload(contiguous.data(), a.bytes);
          },
          py::arg("source"),
          "Copies `source` (of the array's dtype and bytes; a bfloat16 torch tensor for a "
          "uint16 array) into the array now, unordered with queued work.")
      .def("__dlpack__", &dlpack_export, py::arg("stream") = py::none(), py::kw_only(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
           py::arg("copy") = py::none())
      .def("__dlpack_device__",
           [](const DeviceArray &a) {
             const DLDevice device = dlpack_device(a);
             return py::make_tuple(device.device_type, device.device_id);
           })
      .def(
          "numpy",
          [](const DeviceArray &a) {
            py::array out(a.dtype, a.shape);
            a.live().download(out.mutable_data(), a.bytes);
            return out;
          },
          "A new numpy array holding a copy of the array's bytes now, unordered with queued "
          "work.");

  py::class_<RegisteredArray, DeviceArray>(
      m, "RegisteredArray",
      "Foreign device memory admitted as DEVICE tensor memory of a CUDA context "
      "(Context.register): a DeviceArray over the producer's memory, usable wherever one is. It "
      "holds the producer until it is itself collected; graphs that captured it hold it for "
      "their life. close() (or leaving `with`) ends the registration: graphs that captured it "
      "are stale from then on (StaleAddressError at replay), and using it is a ValueError.")
      .def(
          "close", [](RegisteredArray &a) { a.foreign->close(); },
          "Ends the registration (rrt_device_unregister), after the work queued on the "
          "context's streams has run, letting go of the GIL meanwhile; closing again does "
          "nothing. The producer stays held "
          "until this object is collected, which graphs that used it delay.")
      .def_property_readonly("closed",
                             [](const RegisteredArray &a) { return !a.foreign->registration; })
      .def("__repr__",
           [](const RegisteredArray &a) {
             return "replayrt.RegisteredArray(" + describe(a) +
                    ", closed=" + (a.foreign->registration ? "False" : "True") + ")";
           })
      .def_property_readonly(
          "source", [](const RegisteredArray &a) { return a.foreign->producer; },
          "The producer whose memory this is.")
      .def("__enter__", [](const py::object &self) { return self; })
      .def("__exit__", [](RegisteredArray &a, const py::args & /*exception*/) {
        a.foreign->close();
        return false;
      });
}

}  // namespace replayrt::python
