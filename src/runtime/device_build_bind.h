// The device-build bind (upstream TRB): HOST tensors staged through the pipeline slot's
// retained buffer, the task-graph image built on the host with baked gm_sm / gm_heap pointers
// and uploaded into the bank's runtime pool.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "context/host_api.h"
#include "runtime/bound_run.h"
#include "runtime/callable.h"

namespace replayrt {

struct BindRequest {
  const Callable *callable = nullptr;
  std::int32_t callable_id = -1;
  std::uint64_t generation = 0;
  RunArgsView args;
  // Kernel mode: the image placed in the frozen capacity when the callable was prepared (the
  // runtime image in runtime_pool, or the host-build definition), and for host-build the
  // scheduler seed and state behind it in runtime_pool. Null in program mode.
  const void *resident_image = nullptr;
  const void *resident_scheduler = nullptr;
  // Where the device writes per-task timings and the launch's device-wall record (both null:
  // profiling off).
  void *profile_timings = nullptr;
  void *profile_wall = nullptr;
};

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

// Writes the invocation for `request` with `image` as its image address into out->invocation.
void encode_invocation(const BindRequest &request, ExecutionMode mode, const void *image,
                       std::span<void *const> tensor_addresses, BoundRun *out);

// The prebuilt-image cache key of a callable generation.
std::uint64_t image_cache_key(const Callable &callable, std::uint64_t generation) noexcept;

}  // namespace replayrt
