// Checks the arguments of one run against its callable.
#pragma once

#include <span>
#include <vector>

#include "common/status.h"
#include "platform/device.h"
#include "runtime/bound_run.h"
#include "runtime/callable.h"
#include "runtime/validated_device_ranges.h"

namespace replayrt {

// RRT_ERR_INVALID_ARGUMENT, naming the tensor or scalar, unless: there is one tensor per
// parameter, each with the parameter's exact byte size, the declared address space for a HOST
// or DEVICE parameter and a non-null address; every DEVICE tensor lies inside
// one live allocation of `device`; and there is one scalar per declared scalar. Touches no
// state but `*validated`, when given: the DEVICE ranges it covers at the device's current free
// epoch are not looked up again, and ranges that pass the lookup are remembered in it. The
// caller serializes the calls that share one `*validated`.
Status validate_run_args(const Callable &callable, const RunArgsView &args, const Device &device,
                         ValidatedDeviceRanges *validated = nullptr);

// The live allocation each DEVICE tensor of `args` lies in, in tensor order, into *out (left
// unchanged on failure); `args` passed validate_run_args on `device`. Each range is checked
// against the allocation recorded for it, since a free may have landed since the validation:
// RRT_ERR_INVALID_ARGUMENT, as validate_run_args words it, for one that no longer lies wholly
// in a live allocation. A run records them when it is prepared and checks them when it is
// launched, since its arguments' memory may be freed in between.
Status device_tensor_allocations(const RunArgsView &args, const Device &device,
                                 std::vector<CapturedAddress> *out);
// OK while every address still lies in the allocation (base and generation) recorded for it;
// RRT_ERR_INVALID_ARGUMENT naming the first that does not (its allocation was freed, even if
// another now covers the address). Touches no state.
Status check_device_tensor_allocations(std::span<const CapturedAddress> recorded,
                                       const Device &device);

}  // namespace replayrt
