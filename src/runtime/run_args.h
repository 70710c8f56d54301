// Checks the arguments of one run against its callable.
#pragma once

#include "common/status.h"
#include "platform/device.h"
#include "runtime/bound_run.h"
#include "runtime/callable.h"

namespace replayrt {

// RRT_ERR_INVALID_ARGUMENT, naming the tensor or scalar, unless: there is one tensor per
// parameter, each with the parameter's exact byte size, a known address space (the declared
// one for a HOST or DEVICE parameter) and a non-null address; every DEVICE tensor lies inside
// one live allocation of `device`; and there is one scalar per declared scalar. Touches no
// state.
Status validate_run_args(const Callable &callable, const RunArgsView &args, const Device &device);

}  // namespace replayrt
