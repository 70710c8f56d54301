// The host-build bind (upstream HBG): the run's task graph is built on the host into the
// slot's graph-definition store, the scheduler seed and working state live in the bank's
// runtime pool, and HOST tensors are staged per run.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "context/host_api.h"
#include "runtime/bind.h"
#include "runtime/bound_run.h"
#include "runtime/callable.h"

namespace replayrt {

// Bytes of runtime pool a host-build run of `callable` uses: the scheduler seed the host
// builds, then the working state the device resets from it.
std::uint64_t host_build_pool_bytes(const Callable &callable) noexcept;

// The graph-definition key of a callable generation bound to the given gm_heap and scheduler
// addresses (the definition bakes them).
std::uint64_t host_build_definition_key(const Callable &callable, std::uint64_t generation,
                                        const void *gm_heap, const void *scheduler) noexcept;

// Binds one run through `api` (its slot and bank):
//   1. stages HOST tensors (growth point host_staging): program mode into fresh device
//      allocations freed when the run ends, kernel mode into slices of the frozen region; a
//      host-to-device copy unless OUT, a copy back unless IN; DEVICE tensors pass through;
//   2. program mode: sizes the runtime pool once for the seed and the working state (one
//      arena call on a miss of the bank's prebuilt cache, none on a hit; never a second,
//      growing call), uploads the seed, and places the definition in the slot's store (growth
//      point graph_definition), uploading it only for a key the store does not hold yet.
//      Kernel mode uses the resident definition and scheduler placed at prepare: no arena
//      call, no upload, no allocation;
//   3. encodes the invocation, whose image is the definition.
Status bind_host_build(const HostApi &api, const BindRequest &request, BoundRun *out);

}  // namespace replayrt
