#include "statistics.h"

#include <algorithm>
#include <cstdint>

namespace replayrt::python {

namespace py = pybind11;

py::dict stats_dict(const rrt_stats_t &stats) {
  py::dict out;
  out["device_alloc_calls"] = stats.device_alloc_calls;
  out["device_free_calls"] = stats.device_free_calls;
  out["live_bytes"] = stats.live_bytes;
  out["peak_bytes"] = stats.peak_bytes;
  out["launches"] = stats.launches;
  out["replays"] = stats.replays;
  out["stale_address_refusals"] = stats.stale_address_refusals;
  py::list refusals;
  for (const std::uint64_t count : stats.refusals) {
    refusals.append(count);
  }
  out["refusals"] = refusals;
  return out;
}

py::array profile_array(const std::vector<rrt_task_timing_t> &timings) {
  py::array_t<rrt_task_timing_t> out(static_cast<py::ssize_t>(timings.size()));
  std::copy(timings.begin(), timings.end(), out.mutable_data());
  return out;
}

}  // namespace replayrt::python
