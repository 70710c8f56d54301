// What the two bind strategies share: the request, the strategy interface with its
// footprint, the staging layout of HOST tensors, and the encoding of the invocation with
// every device address the launch may reference.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/execution_mode.h"
#include "common/status.h"
#include "context/device_context.h"
#include "context/slot_view.h"
#include "runtime/bound_run.h"
#include "runtime/callable.h"

namespace replayrt {

// Kernel mode: where a callable was placed in the frozen capacity when it was prepared. The
// image is the runtime image (device-build) or the host-built definition (host-build); the
// scheduler is the state the device resets (device-build: gm_sm) or the seed it resets from
// (host-build: in the resident pool, the working state behind it).
struct ResidentPlacement {
  const void *image = nullptr;
  const void *scheduler = nullptr;
  const void *gm_heap = nullptr;
};

struct BindRequest {
  const Callable *callable = nullptr;
  std::int32_t callable_id = -1;
  std::uint64_t generation = 0;
  RunArgsView args;
  ResidentPlacement resident;        // kernel mode only
  std::uint32_t profile_offset = 0;  // kernel mode: SlotRequest::profile_offset
};

// What a strategy occupies for one callable, declared once. Plan fit, kernel-mode placement
// and per-run binding all size from it.
struct Footprint {
  std::uint64_t gm_heap = 0;           // intermediates
  std::uint64_t gm_sm = 0;             // device-build: the scheduler state
  std::uint64_t runtime_pool = 0;      // device-build: the image; host-build: seed and state
  std::uint64_t graph_definition = 0;  // host-build: the definition
  std::uint64_t staging_all_host = 0;  // staging when every HOST and ANY parameter is HOST
  StagingKind staging = StagingKind::kRetained;
};

// One bind strategy. Implementations are stateless singletons (bind_strategy()).
class BindStrategy {
 public:
  BindStrategy() = default;
  virtual ~BindStrategy() = default;
  BindStrategy(const BindStrategy &) = delete;
  BindStrategy &operator=(const BindStrategy &) = delete;
  BindStrategy(BindStrategy &&) = delete;
  BindStrategy &operator=(BindStrategy &&) = delete;

  virtual Footprint footprint(const Callable &callable) const noexcept = 0;
  // Kernel mode, at prepare: places the callable in the frozen capacity in one context
  // transaction (DeviceContext::ResidentTransaction) that also spans the build and the
  // upload of what it needs there, and commits last. A failure at any point (a refusal, a
  // device or host allocation, an upload) leaves the capacity as before.
  virtual Status place_resident(DeviceContext &context, const Callable &callable, std::int32_t id,
                                std::uint64_t generation, ResidentPlacement *out) const = 0;
  // One run (program mode) or one launch (kernel mode, inside a LaunchScope): reserves the
  // slot's blocks in one transaction, uploads what a program-mode run needs, stages HOST
  // tensors and encodes the invocation. Nothing here frees a published buffer.
  virtual Status bind(SlotView &slot, const BindRequest &request, BoundRun *out) const = 0;
};

const BindStrategy &bind_strategy(rrt_bind_strategy_t bind) noexcept;

// The bytes one HOST tensor of `bytes` bytes takes in staging (rounded up to
// kDeviceAddressAlignment).
std::uint64_t staging_slice_bytes(std::uint64_t bytes) noexcept;
// The staging a run needs: the slices of its HOST tensors.
std::uint64_t run_staging_bytes(const RunArgsView &args) noexcept;

// Lays the run's HOST tensors out from `staging` (slices in parameter order) and plans
// their copies (host-to-device unless the parameter is OUT, device-to-host back unless it is
// IN); DEVICE tensors pass through. Writes every tensor's device address to
// out->tensor_addresses.
void stage_host_tensors(const BindRequest &request, void *staging, BoundRun *out);

// Writes the invocation for `request` with `image` as its image address and no profiling
// records into out->invocation.
void encode_invocation(const BindRequest &request, ExecutionMode mode, const void *image,
                       std::span<void *const> tensor_addresses, BoundRun *out);

// Encodes the invocation (with the grant's profiling records) and lists what the launch may
// reference: the image, the scheduler
// state, gm_heap when the callable has intermediates, the profiling records, every tensor.
void finish_bind(ExecutionMode mode, const BindRequest &request, const void *image,
                 const void *scheduler, const void *gm_heap, const SlotGrant &grant, BoundRun *out);

// The prebuilt-image cache key of a callable generation.
std::uint64_t image_cache_key(const Callable &callable, std::uint64_t generation) noexcept;

}  // namespace replayrt
