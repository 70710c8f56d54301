// Task timings as Python sees them: a numpy structured array of rrt_task_timing_t records
// (start_ns, end_ns, task, worker), whose dtype the module registers at import.
#pragma once

#include <algorithm>
#include <vector>

#include <pybind11/numpy.h>

#include <replayrt/replayrt.hpp>

namespace replayrt::python {

inline pybind11::array profile_array(const std::vector<rrt_task_timing_t> &timings) {
  pybind11::array_t<rrt_task_timing_t> out(static_cast<pybind11::ssize_t>(timings.size()));
  std::copy(timings.begin(), timings.end(), out.mutable_data());
  return out;
}

}  // namespace replayrt::python
