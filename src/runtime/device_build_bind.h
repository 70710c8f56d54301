// The device-build bind (upstream TRB): HOST tensors staged through the pipeline slot's
// retained buffer, the task-graph image built on the host with baked gm_sm / gm_heap pointers
// and uploaded into the bank's runtime pool.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "context/host_api.h"
#include "runtime/bind.h"
#include "runtime/bound_run.h"

namespace replayrt {

// Binds one run through `api` (its slot and bank):
//   1. sizes the retained buffer for the run's HOST tensors (growth point retained_staging)
//      and slices one 1024-aligned piece per HOST tensor: a host-to-device copy unless the
//      parameter is OUT, a device-to-host copy back unless it is IN; DEVICE tensors pass
//      through;
//   2. program mode: probes the bank's prebuilt image; a hit makes no arena call; a miss
//      commits the bank (gm_heap for the intermediates, gm_sm for the scheduler state,
//      runtime_pool for the image), builds the image against the bank's bases, uploads it
//      synchronously and stores it in the cache. Kernel mode uses the resident image, so a
//      launch makes no arena call and no synchronous copy;
//   3. encodes the invocation.
// Every refusal or failure returns before the run is usable; nothing here frees a published
// buffer.
Status bind_device_build(const HostApi &api, const BindRequest &request, BoundRun *out);

}  // namespace replayrt
