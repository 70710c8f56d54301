// Decoding a caller's rrt_callable_desc_t into the core's CallableSpec: the one place that
// reads a callable descriptor.
#pragma once

#include <replayrt/replayrt.h>

#include "common/status.h"
#include "runtime/callable_spec.h"

namespace replayrt::capi {

// Decodes *desc into *out, checking what only the C struct can get wrong; each violation is
// RRT_ERR_INVALID_ARGUMENT naming the field, and *out is then unspecified:
//   - desc is not null and its struct_size is at least the ABI 1.1 size. A desc of the 1.2 size
//     (struct_size >= sizeof(rrt_callable_desc_t)) is read with its appended fields: device
//     values, views and the params' `space`. A smaller one is read as ABI 1.1: no views, no
//     device values, every param RRT_PARAM_SPACE_ANY, and operand kinds VIEW and DEVICE_VALUE
//     unknown.
//   - a known bind strategy; counts within Callable's limits, 1 to Callable::kMaxTasks tasks,
//     at most Callable::kMaxOperandsPerTask operands per task, and no null array with a nonzero
//     count (an array longer than its limit is refused by its count, without reading it);
//   - every enum field a known value, read as the integer a C caller stored (dtype, a param's
//     direction and space, operand kinds, a view's base kind, a device value's source kind);
//   - tensors and views with at most RRT_MAX_DIMS dimensions.
// Thread safety: pure; reads *desc and the arrays it points into.
Status decode_callable_desc(const rrt_callable_desc_t *desc, CallableSpec *out);

}  // namespace replayrt::capi
