// The Python package's context and device memory: a context that knows its platform, and
// device memory with the shape and dtype numpy and DLPack need.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <replayrt/replayrt.hpp>

namespace replayrt::python {

namespace py = pybind11;

// A context and the platform it was made on (DLPack names the device).
struct PythonContext : rrt::Context {
  explicit PythonContext(const rrt::ContextOptions &options)
      : rrt::Context(options), platform(options.platform), device_id(options.device_id) {}
  rrt_platform_t platform;
  std::int32_t device_id;
};

// Device memory with the shape and dtype numpy and DLPack need: a buffer the context allocated
// (Context.empty), or foreign memory it admitted (Context.register: a RegisteredArray, whose
// memory is empty once the registration is closed).
struct DeviceArray {
  std::shared_ptr<rrt::DeviceMemory> memory;
  std::size_t bytes = 0;
  std::vector<std::int64_t> shape;
  py::dtype dtype;
  rrt_platform_t platform = RRT_PLATFORM_SIM;
  std::int32_t device_id = 0;

  // The memory, which a closed registration no longer has (ValueError, as for a closed file).
  const rrt::DeviceMemory &live() const {
    if (!*memory) {
      throw py::value_error(
          "replayrt: the registered array is closed: its memory is no longer "
          "the context's");
    }
    return *memory;
  }
};

}  // namespace replayrt::python
