// The arena bank: the three device regions one pipeline slot's runs live in, and the rule
// that sizes them.
#pragma once

#include <array>
#include <cstdint>

#include "memory/block_transaction.h"
#include "memory/guarded_block.h"

namespace replayrt {

// gm_heap holds a run's intermediates, gm_sm the device scheduler's state, runtime_pool the
// runtime image (device-build) or the scheduler seed and state (host-build); in kernel mode
// runtime_pool is also the resident pool every prepared callable is placed in.
enum class BankRegion : int { kGmHeap = 0, kGmSm = 1, kRuntimePool = 2 };
inline constexpr int kBankRegionCount = 3;

GrowthPoint growth_point_of(BankRegion region) noexcept;
const char *bank_region_name(BankRegion region) noexcept;

// Bytes each region must hold; zero keeps the region as it is.
struct BankRequest {
  std::uint64_t gm_heap = 0;
  std::uint64_t gm_sm = 0;
  std::uint64_t runtime_pool = 0;

  std::uint64_t bytes(BankRegion region) const noexcept;
};

struct BankBases {
  void *gm_heap = nullptr;
  void *gm_sm = nullptr;
  void *runtime_pool = nullptr;

  bool operator==(const BankBases &) const = default;
};

// Three guarded blocks (gm_heap, gm_sm, runtime_pool). Sizes never shrink: a smaller request
// is served by the region as it is.
//
// The commit rule: plan(txn, request) adds all three regions to a transaction, so every
// region is decided before anything is touched; a refusal (kernel mode: growing a committed
// region) returns with nothing allocated or freed, also when an earlier region would have
// been a legal first commit. The transaction then stages every new backing, publishes them
// at once and frees superseded ones last; an allocation failure changes nothing, in both
// modes. commit(request) runs that rule in a transaction of its own.
//
// Ownership: the bank owns every backing; callers never free a base it hands out.
// Thread safety: none; the context serializes access to a bank.
class ArenaBank {
 public:
  explicit ArenaBank(BlockHost &host) noexcept;

  Status plan(BlockTransaction &txn, const BankRequest &request);
  Status commit(const BankRequest &request);

  // Null when the region is not committed.
  void *base(BankRegion which) const noexcept { return region(which).base(); }
  BankBases bases() const noexcept;
  // The bases once a transaction that staged the bank's regions publishes them.
  BankBases bases_after_publish() const noexcept;
  std::uint64_t capacity(BankRegion which) const noexcept { return region(which).capacity(); }
  BankRequest capacities() const noexcept;

  GuardedBlock &region(BankRegion which) noexcept {
    return regions_[static_cast<std::size_t>(which)];
  }
  const GuardedBlock &region(BankRegion which) const noexcept {
    return regions_[static_cast<std::size_t>(which)];
  }

  void release_all() noexcept;

 private:
  std::array<GuardedBlock, kBankRegionCount> regions_;
};

}  // namespace replayrt
