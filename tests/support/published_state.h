// PublishedState: everything of an engine's context that a failed call must leave as it was,
// read in one go so that two readings compare: the live bytes and the allocations held, every
// region's capacity, use and base changes, every pipeline slot's bank bases, and the keys the
// context published (each slot's stored graph-definition keys and prebuilt image, the end of
// the resident pool). One thing a failed call may change: it may drop a slot's prebuilt image
// (a failed fill may have written into the runtime pool the image lives in), never add or
// change one. Part of the testing library.
#pragma once

#include <cstdint>
#include <vector>

#include "common/growth_point.h"
#include "context/device_context.h"
#include "runtime/engine.h"
#include "support/engine_inspector.h"

namespace replayrt::testing {

struct PublishedState {
  std::uint64_t live_bytes = 0;
  std::int64_t unfreed_allocations = 0;
  std::vector<std::uint64_t> regions;
  std::vector<BankBases> banks;
  DeviceContext::PublishedKeys keys;

  static PublishedState of(Engine &engine) {
    DeviceContext &context = EngineInspector::context(engine);
    PublishedState s;
    s.keys = context.published_keys();
    const ContextCounters &counters = context.counters();
    s.live_bytes = counters.live_bytes.load();
    s.unfreed_allocations = static_cast<std::int64_t>(counters.device_alloc_calls.load()) -
                            static_cast<std::int64_t>(counters.device_free_calls.load());
    for (int point = 0; point < kGrowthPointCount; ++point) {
      const RegionStats stats = context.region_stats(static_cast<GrowthPoint>(point));
      s.regions.insert(s.regions.end(), {stats.capacity, stats.used, stats.base_changes});
    }
    for (int slot = 0; slot < DeviceContext::kPipelineDepth; ++slot) {
      s.banks.push_back(context.slot(slot).bank_bases());
    }
    return s;
  }

  // True when this reading, taken after a failed call, shows nothing changed since `before`
  // but, perhaps, a dropped prebuilt image.
  bool unchanged_by_a_failure_since(const PublishedState &before) const {
    if (banks.size() != before.banks.size()) {
      return false;
    }
    for (std::size_t slot = 0; slot < banks.size(); ++slot) {
      if (!(banks[slot] == before.banks[slot])) {
        return false;
      }
    }
    DeviceContext::PublishedKeys kept = keys;
    for (std::size_t slot = 0; slot < kept.prebuilt_images.size(); ++slot) {
      if (!kept.prebuilt_images[slot].has_value()) {
        kept.prebuilt_images[slot] = before.keys.prebuilt_images[slot];
      }
    }
    return live_bytes == before.live_bytes && unfreed_allocations == before.unfreed_allocations &&
           regions == before.regions && kept == before.keys;
  }
};

}  // namespace replayrt::testing
