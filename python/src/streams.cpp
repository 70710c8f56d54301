#include "streams.h"

#include <string>
#include <utility>

namespace replayrt::python {

namespace py = pybind11;

void PythonStream::synchronize() {
  py::list waited = std::exchange(pending, py::list());
  try {
    py::gil_scoped_release release;
    stream.synchronize();
  } catch (...) {
    for (const py::handle object : pending) {
      waited.append(object);
    }
    pending = std::move(waited);
    throw;
  }
}

void require_same_bytes(const py::array &host, const DeviceArray &device) {
  if (static_cast<std::size_t>(host.nbytes()) != device.bytes) {
    throw py::value_error("replayrt: a copy needs a host array of exactly the device array's " +
                          std::to_string(device.bytes) + " bytes, not " +
                          std::to_string(host.nbytes()));
  }
}

py::list both(const py::array &host, const py::object &device) {
  py::list objects;
  objects.append(host);
  objects.append(device);
  return objects;
}

std::shared_ptr<PythonGraph> CaptureScope::enter() {
  stream->stream.begin_capture();
  stream->captured = py::list();
  return graph;
}

bool CaptureScope::exit(const py::object &exception_type, const py::object &, const py::object &) {
  py::list captured = std::exchange(stream->captured, py::list());
  if (!exception_type.is_none()) {
    stream->stream.discard_capture();
    return false;
  }
  graph->graph = stream->stream.end_capture();
  graph->keep_alive = std::move(captured);
  return false;
}

}  // namespace replayrt::python
