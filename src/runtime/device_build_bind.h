// The device-build bind strategy: HOST tensors staged through the slot's retained staging;
// the task-graph image built on the host with baked gm_sm / gm_heap pointers and uploaded
// into the bank's runtime pool.
#pragma once

#include "runtime/bind.h"

namespace replayrt {

// Footprint: gm_heap for the intermediates, gm_sm for the scheduler state, runtime_pool for
// the image, retained staging for the HOST tensors.
//
// bind():
//   1. program mode: probes the bank's prebuilt image. One slot transaction sizes retained
//      staging for the run's HOST tensors, the profiling collectors and, on a miss, the
//      bank; a miss then builds the image against the bank's bases, uploads it and caches
//      it. A hit sizes no bank region and uploads nothing;
//   2. kernel mode: the transaction sizes only staging and profiling (any growth is refused
//      inside a launch); the image is the resident one placed at prepare;
//   3. stages HOST tensors and encodes the invocation.
class DeviceBuildBind final : public BindStrategy {
 public:
  Footprint footprint(const Callable &callable) const noexcept override;
  Status place_resident(DeviceContext &context, const Callable &callable, std::int32_t id,
                        std::uint64_t generation, ResidentPlacement *out) const override;
  Status bind(SlotView &slot, const BindRequest &request, BoundRun *out) const override;
};

}  // namespace replayrt
