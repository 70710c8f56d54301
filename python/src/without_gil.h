// Letting go of the GIL where a destructor or a call waits for device work, so that the
// process's other Python threads run meanwhile.
#pragma once

#include <utility>

#include <pybind11/pybind11.h>

namespace replayrt::python {

// Destroys what `owner` holds (it is empty afterwards), which may wait for device work,
// without the GIL when this thread holds it, and with this thread holding the GIL again
// afterwards. Uses only the interpreter's own calls, which cannot throw, so destructors call
// it.
template <class Owner>
void destroy_without_gil(Owner &owner) noexcept {
  if (PyGILState_Check() == 0) {
    const Owner doomed = std::move(owner);
    return;
  }
  PyThreadState *const released = PyEval_SaveThread();
  { const Owner doomed = std::move(owner); }
  PyEval_RestoreThread(released);
}

}  // namespace replayrt::python
