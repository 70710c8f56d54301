#include "memory/arena_bank.h"

#include "common/format.h"

namespace replayrt {

namespace {
constexpr std::array<BankRegion, kBankRegionCount> kRegions = {
    BankRegion::kGmHeap, BankRegion::kGmSm, BankRegion::kRuntimePool};
}  // namespace

GrowthPoint growth_point_of(BankRegion region) noexcept {
  switch (region) {
    case BankRegion::kGmHeap:
      return GrowthPoint::kArenaGmHeap;
    case BankRegion::kGmSm:
      return GrowthPoint::kArenaGmSm;
    case BankRegion::kRuntimePool:
      return GrowthPoint::kArenaRuntimePool;
  }
  return GrowthPoint::kNone;
}

const char *bank_region_name(BankRegion region) noexcept {
  return growth_point_name(growth_point_of(region));
}

std::uint64_t BankRequest::bytes(BankRegion region) const noexcept {
  switch (region) {
    case BankRegion::kGmHeap:
      return gm_heap;
    case BankRegion::kGmSm:
      return gm_sm;
    case BankRegion::kRuntimePool:
      return runtime_pool;
  }
  return 0;
}

ArenaBank::ArenaBank(DeviceAllocator allocator) noexcept
    : regions_{Region(allocator), Region(allocator), Region(allocator)} {}

BankCommitOutcome ArenaBank::commit(const BankRequest &request, GrowthContext context) {
  std::array<GrowthDecision, kBankRegionCount> decisions{};

  // 1. Preflight: decide every region from untouched state.
  for (const BankRegion which : kRegions) {
    const Region &r = region(which);
    const GrowthRequest growth{
        .point = growth_point_of(which),
        .context = context,
        .published = r.arena.is_committed(),
        .capacity = r.cached_size,
        .required = request.bytes(which),
        .zero = ZeroRequest::kReleases,
    };
    const GrowthDecision decision = decide_growth(growth);
    if (decision == GrowthDecision::kRefuse) {
      return {refuse_growth(growth), false};
    }
    decisions[static_cast<std::size_t>(which)] = decision;
  }

  // 2. Stage every new backing; published bases are untouched until all succeed.
  for (const BankRegion which : kRegions) {
    const GrowthDecision decision = decisions[static_cast<std::size_t>(which)];
    if (decision != GrowthDecision::kFirstAllocate && decision != GrowthDecision::kGrow) {
      continue;
    }
    if (!region(which).arena.stage_replacement(request.bytes(which))) {
      for (Region &r : regions_) {
        r.arena.abort_replacement();
      }
      const unsigned long long bytes = request.bytes(which);
      return {Status::error(RRT_ERR_OUT_OF_MEMORY,
                            format("device allocation of %llu bytes for arena region %s failed; "
                                   "the bank is unchanged",
                                   bytes, bank_region_name(which))),
              false};
    }
  }

  // 3. Publish all at once, then free what was superseded or released.
  bool bases_changed = false;
  for (const BankRegion which : kRegions) {
    Region &r = region(which);
    switch (decisions[static_cast<std::size_t>(which)]) {
      case GrowthDecision::kGrow:
        ++r.base_changes;
        [[fallthrough]];
      case GrowthDecision::kFirstAllocate:
        r.arena.publish_replacement();
        r.cached_size = request.bytes(which);
        bases_changed = true;
        break;
      case GrowthDecision::kRelease:
        ++r.base_changes;
        r.cached_size = 0;
        bases_changed = true;
        break;
      case GrowthDecision::kKeep:
      case GrowthDecision::kRefuse:
        break;
    }
  }
  for (const BankRegion which : kRegions) {
    Region &r = region(which);
    r.arena.free_superseded();
    if (decisions[static_cast<std::size_t>(which)] == GrowthDecision::kRelease) {
      r.arena.release();
    }
  }
  return {Status::ok(), bases_changed};
}

void *ArenaBank::base(BankRegion which) const noexcept {
  return region(which).arena.base();
}

BankBases ArenaBank::bases() const noexcept {
  return BankBases{base(BankRegion::kGmHeap), base(BankRegion::kGmSm),
                   base(BankRegion::kRuntimePool)};
}

bool ArenaBank::is_committed(BankRegion which) const noexcept {
  return region(which).arena.is_committed();
}

std::uint64_t ArenaBank::cached_size(BankRegion which) const noexcept {
  return region(which).cached_size;
}

std::uint64_t ArenaBank::base_changes(BankRegion which) const noexcept {
  return region(which).base_changes;
}

std::uint64_t ArenaBank::alloc_count() const noexcept {
  std::uint64_t total = 0;
  for (const Region &r : regions_) {
    total += r.arena.alloc_count();
  }
  return total;
}

std::uint64_t ArenaBank::free_count() const noexcept {
  std::uint64_t total = 0;
  for (const Region &r : regions_) {
    total += r.arena.free_count();
  }
  return total;
}

void ArenaBank::release_all() noexcept {
  for (Region &r : regions_) {
    r.arena.release();
    r.cached_size = 0;
  }
}

void ArenaBank::abandon_all() noexcept {
  for (Region &r : regions_) {
    r.arena.abandon_after_device_failure();
    r.cached_size = 0;
  }
}

}  // namespace replayrt
