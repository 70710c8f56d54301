// Every allocation of a multi-step scenario over the whole memory core of a two-slot pipeline
// (arena banks, retained and host staging blocks, graph-definition stores, profiling
// collectors) fails in turn, by a null return and by a throw, in both modes. Steps size
// blocks alone and in transactions shaped like the context's calls (kernel init's commit, a
// slot's per-run reservation). The failing step must return OUT_OF_MEMORY and leave every
// published base and capacity as it was; after a retry the scenario completes, and after
// teardown every allocation has been freed.
#include "support/allocation_failure_sweep.h"

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "memory/arena_bank.h"
#include "memory/block_transaction.h"
#include "memory/graph_definition_store.h"
#include "memory/guarded_block.h"
#include "memory/profiling_collectors.h"

namespace replayrt {
namespace {

constexpr std::uint64_t kSweepKiB = 1024;
constexpr int kSlots = 2;

struct Slot {
  explicit Slot(BlockHost &host)
      : bank(host),
        retained(host, GrowthPoint::kRetainedStaging),
        definitions(host),
        host_staging(host, GrowthPoint::kHostStaging) {}

  ArenaBank bank;
  GuardedBlock retained;
  GraphDefinitionStore definitions;
  GuardedBlock host_staging;
};

struct MemoryCore {
  explicit MemoryCore(BlockHost &host)
      : slots{std::make_unique<Slot>(host), std::make_unique<Slot>(host)},
        collectors(host, kSlots) {}

  std::unique_ptr<Slot> slots[kSlots];
  ProfilingCollectors collectors;
};

struct PublishedBlock {
  const void *base;
  std::uint64_t capacity;
  bool operator==(const PublishedBlock &) const = default;
};

struct PublishedCore {
  std::vector<PublishedBlock> blocks;
  std::vector<std::uint64_t> definitions_used;
  std::uint32_t profile_shape;
  bool operator==(const PublishedCore &) const = default;
};

void add_block(const GuardedBlock &block, PublishedCore *state) {
  state->blocks.push_back({block.base(), block.capacity()});
}

// Every published address with its capacity.
PublishedCore core_published_state(const MemoryCore &core) {
  PublishedCore state;
  for (const auto &slot : core.slots) {
    for (int r = 0; r < kBankRegionCount; ++r) {
      add_block(slot->bank.region(static_cast<BankRegion>(r)), &state);
    }
    add_block(slot->retained, &state);
    add_block(slot->definitions.block(), &state);
    add_block(slot->host_staging, &state);
    state.definitions_used.push_back(slot->definitions.used());
  }
  add_block(core.collectors.timing_block(), &state);
  // The wall block's capacity is fixed by the area count; its base is what can change.
  state.blocks.push_back({core.collectors.wall(0), 0});
  state.profile_shape = core.collectors.shape();
  return state;
}

std::vector<const void *> core_live_addresses(const PublishedCore &state) {
  std::vector<const void *> addresses;
  for (const PublishedBlock &block : state.blocks) {
    if (block.base != nullptr) {
      addresses.push_back(block.base);
    }
  }
  return addresses;
}

using CoreStep = testing::SweepStep<MemoryCore>;

// The shape of kernel init's commit: slot 0's bank, staging blocks and store, and the
// collectors, in one transaction.
struct InitPlan {
  BankRequest bank;
  std::uint64_t retained = 0;
  std::uint64_t definitions = 0;
  std::uint64_t host_staging = 0;
  std::uint32_t profile_tasks = 0;
};

CoreStep init(InitPlan plan) {
  return [=](MemoryCore &core) {
    Slot &slot = *core.slots[0];
    BlockTransaction txn;
    RRT_RETURN_IF_ERROR(slot.bank.plan(txn, plan.bank));
    RRT_RETURN_IF_ERROR(txn.add(slot.retained, plan.retained));
    RRT_RETURN_IF_ERROR(txn.add(slot.definitions.block(), plan.definitions));
    RRT_RETURN_IF_ERROR(txn.add(slot.host_staging, plan.host_staging));
    RRT_RETURN_IF_ERROR(core.collectors.plan(txn, plan.profile_tasks));
    RRT_RETURN_IF_ERROR(txn.stage());
    RRT_RETURN_IF_ERROR(core.collectors.zero_staged());
    txn.publish();
    core.collectors.latch_shape();
    return Status::ok();
  };
}

// The shape of one run's slot reservation: collectors, staging, bank and definition in one
// transaction, the definition placed after the publish.
struct RunPlan {
  int slot = 0;
  bool host_build = false;
  std::uint64_t staging = 0;
  BankRequest bank;
  std::uint64_t definition_key = 0;  // 0: no definition
  std::uint64_t definition_bytes = 0;
  std::uint32_t profile_tasks = 0;
};

CoreStep run(RunPlan plan) {
  return [=](MemoryCore &core) {
    Slot &slot = *core.slots[plan.slot];
    BlockTransaction txn;
    RRT_RETURN_IF_ERROR(core.collectors.plan(txn, plan.profile_tasks));
    RRT_RETURN_IF_ERROR(txn.add(plan.host_build ? slot.host_staging : slot.retained, plan.staging));
    RRT_RETURN_IF_ERROR(slot.bank.plan(txn, plan.bank));
    GraphDefinitionStore::Pending pending;
    if (plan.definition_key != 0) {
      pending = slot.definitions.plan(plan.definition_key, plan.definition_bytes);
      RRT_RETURN_IF_ERROR(txn.add(slot.definitions.block(), pending.required));
    }
    RRT_RETURN_IF_ERROR(txn.stage());
    RRT_RETURN_IF_ERROR(core.collectors.zero_staged());
    txn.publish();
    core.collectors.latch_shape();
    if (plan.definition_key != 0) {
      (void)slot.definitions.place(std::move(pending), 0, false);
    }
    return Status::ok();
  };
}

CoreStep reserve_retained(int slot, std::uint64_t required) {
  return [=](MemoryCore &core) { return core.slots[slot]->retained.reserve(required); };
}

CoreStep commit_bank(int slot, BankRequest request) {
  return [=](MemoryCore &core) { return core.slots[slot]->bank.commit(request); };
}

std::vector<CoreStep> core_scenario(ExecutionMode mode) {
  if (mode == ExecutionMode::kProgram) {
    return {
        commit_bank(0, {64 * kSweepKiB, 8 * kSweepKiB, 16 * kSweepKiB}),
        reserve_retained(0, 2 * kSweepKiB),
        run({.slot = 1,
             .staging = kSweepKiB,
             .bank = {64 * kSweepKiB, 8 * kSweepKiB, 16 * kSweepKiB},
             .profile_tasks = 8}),
        run({.slot = 0,
             .staging = 4 * kSweepKiB,
             .bank = {128 * kSweepKiB, 8 * kSweepKiB, 32 * kSweepKiB},
             .profile_tasks = 16}),
        run({.slot = 0,
             .host_build = true,
             .staging = 2 * kSweepKiB,
             .bank = {128 * kSweepKiB, 0, 32 * kSweepKiB},
             .definition_key = 1,
             .definition_bytes = 3000}),
        run({.slot = 0,
             .host_build = true,
             .staging = 2 * kSweepKiB,
             .bank = {128 * kSweepKiB, 0, 32 * kSweepKiB},
             .definition_key = 2,
             .definition_bytes = 5000,
             .profile_tasks = 64}),
        run({.slot = 0,
             .host_build = true,
             .staging = 2 * kSweepKiB,
             .bank = {128 * kSweepKiB, 0, 32 * kSweepKiB},
             .definition_key = 1,
             .definition_bytes = 3000}),
        commit_bank(1, {32 * kSweepKiB, 16 * kSweepKiB, 16 * kSweepKiB}),
        reserve_retained(1, 8 * kSweepKiB),
    };
  }
  return {
      init({.bank = {64 * kSweepKiB, 8 * kSweepKiB, 16 * kSweepKiB},
            .retained = 4 * kSweepKiB,
            .definitions = 8 * kSweepKiB,
            .host_staging = 2 * kSweepKiB,
            .profile_tasks = 16}),
      run({.slot = 0,
           .staging = 4 * kSweepKiB,
           .bank = {64 * kSweepKiB, 8 * kSweepKiB, 16 * kSweepKiB},
           .profile_tasks = 16}),
      run({.slot = 0,
           .host_build = true,
           .staging = 2 * kSweepKiB,
           .bank = {32 * kSweepKiB, 0, 16 * kSweepKiB},
           .definition_key = 1,
           .definition_bytes = 3000,
           .profile_tasks = 8}),
      reserve_retained(1, kSweepKiB),
      run({.slot = 1,
           .staging = kSweepKiB,
           .bank = {64 * kSweepKiB, 8 * kSweepKiB, 16 * kSweepKiB}}),
      run({.slot = 1,
           .host_build = true,
           .staging = kSweepKiB,
           .bank = {},
           .definition_key = 1,
           .definition_bytes = 1000}),
      run({.slot = 0,
           .host_build = true,
           .staging = 2 * kSweepKiB,
           .bank = {},
           .definition_key = 2,
           .definition_bytes = 4000}),
  };
}

testing::SweepSubject<MemoryCore, PublishedCore> core_subject() {
  return {[](BlockHost &host) { return std::make_unique<MemoryCore>(host); }, core_published_state,
          core_live_addresses};
}

class AllocationFailureSweepTest : public ::testing::TestWithParam<testing::SweepParam> {};

TEST_P(AllocationFailureSweepTest, EveryAllocationPointFailsWithoutSideEffects) {
  const auto [mode, throws] = GetParam();
  testing::sweep_allocation_failures(core_subject(), core_scenario(mode), mode, throws, 10);
}

INSTANTIATE_TEST_SUITE_P(ModesAndFailureKinds, AllocationFailureSweepTest, testing::sweep_params(),
                         testing::sweep_param_name);

// A single guarded block, sized again and again.
class GuardedBlockSweepTest : public ::testing::TestWithParam<testing::SweepParam> {};

TEST_P(GuardedBlockSweepTest, EveryAllocationPointFailsWithoutSideEffects) {
  const auto [mode, throws] = GetParam();
  const testing::SweepSubject<GuardedBlock, PublishedBlock> subject{
      [](BlockHost &host) {
        return std::make_unique<GuardedBlock>(host, GrowthPoint::kHostStaging);
      },
      [](const GuardedBlock &block) {
        return PublishedBlock{block.base(), block.capacity()};
      },
      [](const PublishedBlock &state) {
        return state.base == nullptr ? std::vector<const void *>{}
                                     : std::vector<const void *>{state.base};
      }};
  std::vector<testing::SweepStep<GuardedBlock>> steps;
  const std::vector<std::uint64_t> sizes =
      mode == ExecutionMode::kProgram
          ? std::vector<std::uint64_t>{kSweepKiB,     0,
                                       2 * kSweepKiB, kSweepKiB,
                                       8 * kSweepKiB, 8 * kSweepKiB,
                                       64 * kSweepKiB}
          : std::vector<std::uint64_t>{0, 4 * kSweepKiB, kSweepKiB, 4 * kSweepKiB, 0};
  for (const std::uint64_t bytes : sizes) {
    steps.emplace_back([=](GuardedBlock &block) { return block.reserve(bytes); });
  }
  testing::sweep_allocation_failures(subject, steps, mode, throws, 1);
}

INSTANTIATE_TEST_SUITE_P(ModesAndFailureKinds, GuardedBlockSweepTest, testing::sweep_params(),
                         testing::sweep_param_name);

}  // namespace
}  // namespace replayrt
