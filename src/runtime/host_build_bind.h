// The host-build bind strategy: the run's task graph is built on the host into the slot's
// graph-definition store, the scheduler seed and working state live in the bank's runtime
// pool, and HOST tensors are staged through the slot's host staging.
#pragma once

#include <cstdint>

#include "runtime/bind.h"

namespace replayrt {

// Footprint: gm_heap for the intermediates, runtime_pool for the scheduler seed the host
// builds followed by the working state the device resets from it, graph_definition for the
// definition, host staging for the HOST tensors.
//
// bind():
//   1. program mode: one slot transaction sizes host staging for the run's HOST tensors, the
//      profiling collectors, the bank on a miss of its prebuilt seed (one arena sizing per
//      bind, never a second growing one) and the definition's place in the store; then the
//      seed is uploaded on a miss and the definition whenever the store says it needs one
//      (a new key, or a key whose bank bases moved);
//   2. kernel mode: the transaction sizes only staging and profiling; the definition and
//      the seed are the resident ones placed at prepare: no arena call, no upload;
//   3. stages HOST tensors and encodes the invocation, whose image is the definition.
class HostBuildBind final : public BindStrategy {
 public:
  Footprint footprint(const Callable &callable) const noexcept override;
  Status place_resident(DeviceContext &context, const Callable &callable, std::int32_t id,
                        std::uint64_t generation, ResidentPlacement *out) const override;
  Status bind(SlotView &slot, const BindRequest &request, BoundRun *out) const override;
};

}  // namespace replayrt
