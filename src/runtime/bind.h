// What the two bind strategies share: the request, the staging of HOST tensors, and the
// encoding of the invocation with every device address the launch may reference.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/execution_mode.h"
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
  // Kernel mode: where the callable was placed in the frozen capacity when it was prepared:
  // its image (the runtime image in runtime_pool, or the host-build definition), the
  // scheduler state it uses (gm_sm, or the host-build seed with the state behind it in
  // runtime_pool) and the gm_heap it baked. Null in program mode.
  const void *resident_image = nullptr;
  const void *resident_scheduler = nullptr;
  const void *resident_gm_heap = nullptr;
  // Where the device writes per-task timings and the launch's device-wall record (both null:
  // profiling off).
  void *profile_timings = nullptr;
  void *profile_wall = nullptr;
};

// Where a bind's HOST tensors get their device copies: the retained buffer (device-build) or
// host staging (host-build). `begin` sizes the source for the run, `slice` hands out one
// piece per tensor.
struct StagingSource {
  const char *name;
  Status (*begin)(const HostApi &api, std::uint64_t required);
  Status (*slice)(const HostApi &api, std::uint64_t bytes, void **out);
};

extern const StagingSource kRetainedStagingSource;
extern const StagingSource kHostStagingSource;

// Sizes `source` for every HOST tensor of the run (each rounded up to 1024 bytes), takes one
// piece per HOST tensor and plans its copies (host-to-device unless the parameter is OUT,
// device-to-host back unless it is IN); DEVICE tensors pass through. Writes every tensor's
// device address to *addresses. The source's growth guard runs in `begin`, before any piece
// is taken.
Status stage_host_tensors(const HostApi &api, const BindRequest &request,
                          const StagingSource &source, std::vector<void *> *addresses,
                          BoundRun *out);

// Writes the invocation for `request` with `image` as its image address into out->invocation.
void encode_invocation(const BindRequest &request, ExecutionMode mode, const void *image,
                       std::span<void *const> tensor_addresses, BoundRun *out);

// Encodes the invocation and lists what the launch may reference: the image, the scheduler
// state, gm_heap when the callable has intermediates, the profiling records, every tensor.
void finish_bind(const HostApi &api, const BindRequest &request, const void *image,
                 const void *scheduler, const void *gm_heap,
                 std::span<void *const> tensor_addresses, BoundRun *out);

// The prebuilt-image cache key of a callable generation.
std::uint64_t image_cache_key(const Callable &callable, std::uint64_t generation) noexcept;

}  // namespace replayrt
