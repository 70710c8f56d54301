// Every allocation of a multi-step scenario over two banks and two retained slots fails in
// turn, by a null return and by a throw. The failing step must return OUT_OF_MEMORY and leave
// every published base and remembered size as it was; after a retry the scenario completes,
// and after teardown every allocation has been freed.
#include "support/allocation_failure_sweep.h"

#include <functional>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "memory/arena_bank.h"
#include "memory/retained_buffer.h"
#include "support/device_rig.h"

namespace replayrt {
namespace {

constexpr std::uint64_t kKiB = 1024;

struct MemoryCore {
  explicit MemoryCore(DeviceAllocator allocator)
      : banks{std::make_unique<ArenaBank>(allocator), std::make_unique<ArenaBank>(allocator)},
        slots{std::make_unique<RetainedBuffer>(allocator),
              std::make_unique<RetainedBuffer>(allocator)} {}

  std::unique_ptr<ArenaBank> banks[2];
  std::unique_ptr<RetainedBuffer> slots[2];
};

struct PublishedBlock {
  const void *base;
  std::uint64_t size;
  bool operator==(const PublishedBlock &) const = default;
};

// Every published address with its remembered size.
std::vector<PublishedBlock> published_state(const MemoryCore &core) {
  std::vector<PublishedBlock> state;
  for (const auto &bank : core.banks) {
    for (int r = 0; r < kBankRegionCount; ++r) {
      const auto region = static_cast<BankRegion>(r);
      state.push_back({bank->base(region), bank->cached_size(region)});
    }
  }
  for (const auto &slot : core.slots) {
    state.push_back({slot->address(), slot->capacity()});
  }
  return state;
}

using Step = testing::SweepStep<MemoryCore>;

Step commit(int bank, BankRequest request, GrowthContext context) {
  return [=](MemoryCore &core) { return core.banks[bank]->commit(request, context).status; };
}

Step begin(int slot, std::uint64_t required, GrowthContext context) {
  return [=](MemoryCore &core) { return core.slots[slot]->begin(required, context); };
}

std::vector<Step> scenario(ExecutionMode mode) {
  const GrowthContext context{mode, false};
  if (mode == ExecutionMode::kProgram) {
    return {
        commit(0, {64 * kKiB, 8 * kKiB, 16 * kKiB}, context),
        begin(0, 2 * kKiB, context),
        commit(1, {64 * kKiB, 8 * kKiB, 16 * kKiB}, context),
        begin(1, kKiB, context),
        commit(0, {128 * kKiB, 8 * kKiB, 32 * kKiB}, context),
        begin(0, 4 * kKiB, context),
        commit(0, {128 * kKiB, 0, 32 * kKiB}, context),
        commit(1, {32 * kKiB, 16 * kKiB, 16 * kKiB}, context),
    };
  }
  return {
      commit(0, {64 * kKiB, 0, 16 * kKiB}, context),        begin(0, 2 * kKiB, context),
      commit(0, {64 * kKiB, 8 * kKiB, 16 * kKiB}, context), begin(1, kKiB, context),
      commit(1, {64 * kKiB, 8 * kKiB, 16 * kKiB}, context), begin(0, 2 * kKiB, context),
  };
}

std::vector<const void *> live_addresses(const std::vector<PublishedBlock> &state) {
  std::vector<const void *> addresses;
  for (const PublishedBlock &block : state) {
    if (block.base != nullptr) {
      addresses.push_back(block.base);
    }
  }
  return addresses;
}

testing::SweepSubject<MemoryCore, std::vector<PublishedBlock>> core_subject() {
  return {[](DeviceAllocator allocator) { return std::make_unique<MemoryCore>(allocator); },
          published_state, live_addresses};
}

class AllocationFailureSweepTest : public ::testing::TestWithParam<testing::SweepParam> {};

TEST_P(AllocationFailureSweepTest, EveryAllocationPointFailsWithoutSideEffects) {
  const auto [mode, throws] = GetParam();
  testing::sweep_allocation_failures(core_subject(), scenario(mode), throws, 6);
}

INSTANTIATE_TEST_SUITE_P(ModesAndFailureKinds, AllocationFailureSweepTest, testing::sweep_params(),
                         testing::sweep_param_name);

}  // namespace
}  // namespace replayrt
