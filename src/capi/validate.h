// Structural validation of C ABI arguments. Each validator is pure (it reads its arguments
// and touches no state) and returns OK or RRT_ERR_INVALID_ARGUMENT with a message naming the
// offending argument or field. Callers validate before touching any state.
#pragma once

#include <cstddef>
#include <cstring>

#include <replayrt/replayrt.h>

#include "common/status.h"

namespace replayrt::capi {

// The first published size of each versioned struct; smaller sizes are rejected, larger ones
// come from newer callers and their extra fields are ignored. A field appended later is read
// only when the caller's struct_size covers it (has_field).
inline constexpr uint32_t kContextOptionsV1Size = offsetof(rrt_context_options_t, profiling);
inline constexpr uint32_t kKernelConfigV1Size =
    offsetof(rrt_kernel_config_t, profiling_task_capacity);
inline constexpr uint32_t kCallableDescV1Size = offsetof(rrt_callable_desc_t, num_views);
inline constexpr uint32_t kRunArgsV1Size = sizeof(rrt_run_args_t);
inline constexpr uint32_t kStatsV1Size = sizeof(rrt_stats_t);

inline constexpr uint32_t kMaxDeviceWorkers = 64;

// True when a caller's struct of `struct_size` bytes holds the field at [offset, offset + size).
constexpr bool has_field(uint32_t struct_size, std::size_t offset, std::size_t size) {
  return struct_size >= offset + size;
}

// Writes `value` to a caller's versioned out-struct whose struct_size was validated: the
// first min(out->struct_size, sizeof(T)) bytes, so an older caller's smaller struct is never
// written past its end; value.struct_size is written as it is.
template <class T>
void write_versioned_out(T *out, const T &value) {
  const std::size_t bytes = out->struct_size < sizeof(T) ? out->struct_size : sizeof(T);
  std::memcpy(out, &value, bytes);
}

// OK when a caller's struct named `name` has `size` >= `minimum` bytes, else an error that says
// to set its struct_size.
Status check_struct_size(const char *name, uint32_t size, uint32_t minimum);

Status validate_context_options(const rrt_context_options_t *options);
Status validate_kernel_config(const rrt_kernel_config_t *config);
Status validate_stats_out(const rrt_stats_t *out);

}  // namespace replayrt::capi
