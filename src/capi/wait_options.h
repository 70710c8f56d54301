// The host wait policy of a context, read from its creation options.
#pragma once

#include <replayrt/replayrt.h>

#include "common/status.h"
#include "platform/device.h"

namespace replayrt::capi {

// The policy `options` asks for: wait_policy and wait_spin_us when options->struct_size
// covers them (wait_spin_us 0: 250 us), the default spin-then-block of 250 us otherwise.
// RRT_ERR_INVALID_ARGUMENT naming the value for a wait_policy that is no rrt_wait_policy_t.
// Requires options validated by validate_context_options. Pure: touches no state.
Status context_wait_policy(const rrt_context_options_t &options, HostWaitPolicy *out);

}  // namespace replayrt::capi
