// The Python package's context and device memory: a context that knows its platform, and
// device memory with the shape and dtype numpy and DLPack need.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <replayrt/replayrt.hpp>

namespace replayrt::python {

namespace py = pybind11;

// A context, the platform it was made on (DLPack names the device), and a number no other
// context of the process has, which the callables it prepares carry (callable ids are per
// context).
struct PythonContext : rrt::Context {
  explicit PythonContext(const rrt::ContextOptions &options)
      : rrt::Context(options),
        platform(options.platform),
        device_id(options.device_id),
        serial(next_serial.fetch_add(1, std::memory_order_relaxed)) {}
  rrt_platform_t platform;
  std::int32_t device_id;
  std::uint64_t serial;

 private:
  static inline std::atomic<std::uint64_t> next_serial{1};
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

// `value` as a DeviceArray; TypeError naming `what` and the type otherwise.
const DeviceArray &device_array(const py::handle &value, const std::string &what);

}  // namespace replayrt::python
