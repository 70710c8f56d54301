// ProfilingCollectors: the profiling buffers the device writes while it runs: per-task timing
// records with a latched shape, and a device-wall record per area.
#pragma once

#include <cstdint>

#include "memory/block_transaction.h"
#include "memory/guarded_block.h"
#include "platform/launch/profile_records.h"

namespace replayrt {

// `areas` areas (one per pipeline slot), each with room for shape() task records, in one
// timing block; plus one device-wall block with a LaunchRecord per area. Both blocks are
// growth point profiling collectors (dfx_collectors).
//
// Call order: plan(txn, tasks) → txn.stage() → zero_staged() → txn.publish() → latch_shape().
//   - a shape that already holds `tasks` records is kept;
//   - empty collectors take their first allocation (both blocks), in kernel mode too, but not
//     while a launch is encoded;
//   - a larger shape in program mode rebuilds the timing block at the new shape (new block
//     first, the old one freed after; a failed allocation keeps the old one);
//   - a larger shape in kernel mode is refused: the shape is fixed once published.
// zero_staged() zeroes, through the device, every backing the transaction staged (before
// anything refers to it; a failure leaves the transaction to undo); latch_shape() then adopts
// the published blocks and latches the shape. Nothing that can fail runs after publish().
//
// Thread safety: none; the context serializes access.
class ProfilingCollectors {
 public:
  ProfilingCollectors(BlockHost &host, int areas) noexcept;

  Status plan(BlockTransaction &txn, std::uint32_t tasks);
  Status zero_staged();
  void latch_shape() noexcept;
  // The refusal plan() would return, or OK; touches and counts nothing.
  Status preflight(std::uint32_t tasks) const;
  // True when plan(tasks) would replace the published timing block (a program-mode rebuild).
  bool would_rebuild(std::uint32_t tasks) const noexcept;

  std::uint32_t shape() const noexcept { return shape_; }
  // Null until the first latch_shape() after a publish.
  TaskTiming *timings(int area) const noexcept;
  LaunchRecord *wall(int area) const noexcept;
  // Where timings(area) and wall(area) lie once the transaction that staged the collectors
  // publishes (the published ones when it staged nothing); null where there is nothing.
  TaskTiming *timings_after_publish(int area) const noexcept;
  LaunchRecord *wall_after_publish(int area) const noexcept;
  std::uint64_t pool_bytes() const noexcept { return timings_.capacity(); }

  GuardedBlock &timing_block() noexcept { return timings_; }
  GuardedBlock &wall_block() noexcept { return wall_; }
  const GuardedBlock &timing_block() const noexcept { return timings_; }
  const GuardedBlock &wall_block() const noexcept { return wall_; }

  void release() noexcept;

 private:
  std::uint64_t timing_bytes(std::uint32_t tasks) const noexcept;
  std::uint64_t wall_bytes() const noexcept;

  int areas_;
  GuardedBlock timings_;
  GuardedBlock wall_;
  BlockHost &host_;
  std::uint32_t shape_ = 0;
  const void *zeroed_timings_ = nullptr;
  const void *zeroed_wall_ = nullptr;
};

}  // namespace replayrt
