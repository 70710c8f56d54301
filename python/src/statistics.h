// A context's statistics and task timings as Python sees them: a dict, and a numpy structured
// array of rrt_task_timing_t records (start_ns, end_ns, task, worker; the module registers the
// dtype at import).
#pragma once

#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <replayrt/replayrt.hpp>

namespace replayrt::python {

pybind11::dict stats_dict(const rrt_stats_t &stats);
pybind11::array profile_array(const std::vector<rrt_task_timing_t> &timings);

}  // namespace replayrt::python
