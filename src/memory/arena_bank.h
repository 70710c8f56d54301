// The arena bank: the three device regions one pipeline slot's runs live in, and the rule
// that sizes them.
#pragma once

#include <array>
#include <cstdint>

#include "memory/device_allocator.h"
#include "memory/device_arena.h"
#include "memory/growth_guard.h"

namespace replayrt {

enum class BankRegion : int { kGmHeap = 0, kGmSm = 1, kRuntimePool = 2 };
inline constexpr int kBankRegionCount = 3;

GrowthPoint growth_point_of(BankRegion region) noexcept;
const char *bank_region_name(BankRegion region) noexcept;

// Bytes a run needs in each region. Zero asks for the region to be released.
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

struct BankCommitOutcome {
  Status status;
  // True only when a published base changed (a region was allocated, replaced or released):
  // anything built against the previous bases (a prebuilt runtime image) is stale.
  bool bases_changed = false;
};

// Three regions (gm_heap, gm_sm, runtime_pool), each one DeviceArena with one region, plus
// the size each region is remembered to hold. Remembered sizes never shrink: a smaller
// request is served from the region as it is.
//
// The commit rule (commit()):
//   1. Preflight. Every region's request goes through the growth guard before anything is
//      touched. If any region is refused (kernel mode: growing or releasing a committed
//      region), the call returns that refusal and nothing is allocated, freed or changed,
//      also when an earlier region would have been a legal first commit.
//   2. Stage. Every region that needs memory (a first commit or a growth) gets its new
//      backing staged; published bases stay as they are. If any allocation fails (null or a
//      throw), every staged backing is freed and the call returns RRT_ERR_OUT_OF_MEMORY with
//      nothing changed, in both modes.
//   3. Publish. All staged backings become the published ones at once and their remembered
//      sizes are written; then superseded backings and released regions are freed, last.
//
// Ownership: the bank owns every backing; callers must never free a base it hands out.
// Thread safety: none; the context serializes access to a bank.
class ArenaBank {
 public:
  explicit ArenaBank(DeviceAllocator allocator) noexcept;
  ~ArenaBank() = default;
  ArenaBank(const ArenaBank &) = delete;
  ArenaBank &operator=(const ArenaBank &) = delete;
  ArenaBank(ArenaBank &&) = delete;
  ArenaBank &operator=(ArenaBank &&) = delete;

  BankCommitOutcome commit(const BankRequest &request, GrowthContext context);

  // Null when the region is not committed.
  void *base(BankRegion which) const noexcept;
  BankBases bases() const noexcept;
  bool is_committed(BankRegion which) const noexcept;
  std::uint64_t cached_size(BankRegion which) const noexcept;

  // How often a published base of the region moved or was released (teardown excluded).
  std::uint64_t base_changes(BankRegion which) const noexcept;

  // Successful allocator calls over the three regions.
  std::uint64_t alloc_count() const noexcept;
  std::uint64_t free_count() const noexcept;

  // Teardown: frees every region and zeroes every remembered size.
  void release_all() noexcept;
  // Teardown after a device failure: forgets every region without freeing it.
  void abandon_all() noexcept;

 private:
  struct Region {
    explicit Region(DeviceAllocator allocator) noexcept : arena(allocator) {}
    DeviceArena arena;
    std::uint64_t cached_size = 0;
    std::uint64_t base_changes = 0;
  };

  Region &region(BankRegion which) noexcept { return regions_[static_cast<std::size_t>(which)]; }
  const Region &region(BankRegion which) const noexcept {
    return regions_[static_cast<std::size_t>(which)];
  }

  std::array<Region, kBankRegionCount> regions_;
};

}  // namespace replayrt
