#include "memory/arena_bank.h"

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

ArenaBank::ArenaBank(BlockHost &host) noexcept
    : regions_{GuardedBlock(host, GrowthPoint::kArenaGmHeap),
               GuardedBlock(host, GrowthPoint::kArenaGmSm),
               GuardedBlock(host, GrowthPoint::kArenaRuntimePool)} {}

Status ArenaBank::plan(BlockTransaction &txn, const BankRequest &request) {
  for (const BankRegion which : kRegions) {
    RRT_RETURN_IF_ERROR(txn.add(region(which), request.bytes(which)));
  }
  return Status::ok();
}

Status ArenaBank::commit(const BankRequest &request) {
  BlockTransaction txn;
  RRT_RETURN_IF_ERROR(plan(txn, request));
  return txn.commit();
}

BankBases ArenaBank::bases() const noexcept {
  return BankBases{base(BankRegion::kGmHeap), base(BankRegion::kGmSm),
                   base(BankRegion::kRuntimePool)};
}

BankBases ArenaBank::bases_after_publish() const noexcept {
  return BankBases{region(BankRegion::kGmHeap).base_after_publish(),
                   region(BankRegion::kGmSm).base_after_publish(),
                   region(BankRegion::kRuntimePool).base_after_publish()};
}

BankRequest ArenaBank::capacities() const noexcept {
  return BankRequest{capacity(BankRegion::kGmHeap), capacity(BankRegion::kGmSm),
                     capacity(BankRegion::kRuntimePool)};
}

void ArenaBank::release_all() noexcept {
  for (GuardedBlock &block : regions_) {
    block.release();
  }
}

}  // namespace replayrt
