// KernelLauncher: kernel-mode launches of one context's resident callables, and what the
// profile of the most recent launch or replay covers.
#pragma once

#include <cstdint>
#include <map>

#include "common/status.h"
#include "context/device_context.h"
#include "platform/device.h"
#include "runtime/bound_run.h"
#include "runtime/callable_table.h"
#include "runtime/launch_order.h"
#include "runtime/launch_profile.h"
#include "runtime/validated_device_ranges.h"

namespace replayrt {

// A launch binds into slot 0 inside a LaunchScope, so any growth or allocation is refused,
// and enqueues copies, the launch and copy-backs on the caller's stream, ordered with the
// context's other work (LaunchOrder) outside captures.
//
// Profiling: by default the launches one capture holds write their task records one after
// another (a graph needs the sum of their tasks). After
// profile_each_launch_from_the_first_record() every launch writes its records from the first
// one on, overwriting the capture's earlier launches' (the ABI 1.1 rule), so a replay reports
// its graph's last launch and the collectors need only the largest callable's tasks.
//
// Thread safety: launch(), profile() and the capture hooks take the launch order's lock;
// replayed() requires it held. profile_each_launch_from_the_first_record() must come before
// the first launch.
class KernelLauncher {
 public:
  // Every reference must outlive the launcher.
  KernelLauncher(Device &device, DeviceContext &context, Executor &executor,
                 LaunchOrder &order) noexcept
      : device_(device), context_(context), executor_(executor), order_(order) {}

  Status launch(std::int32_t callable_id, const CallableTable::Record &record,
                const RunArgsView &args, Stream &caller);
  // The profile of the most recent launch or replay (a replay's covers every kernel-mode
  // launch its capture holds, in launch order; after
  // profile_each_launch_from_the_first_record, only its last one), once it has completed.
  Status profile(LaunchProfile *out) const;

  void profile_each_launch_from_the_first_record() noexcept {
    each_launch_from_the_first_record_ = true;
  }
  // Requires the launch order's lock. A replay whose capture's launches hold
  // `profile_tasks` task records was enqueued outside a capture.
  void replayed(std::uint32_t profile_tasks) noexcept { last_profile_tasks_ = profile_tasks; }
  // Requires the launch order's lock. `stream` begins a capture or is destroyed: its next
  // captured launch writes from the first record.
  void forget_capture(const Stream &stream) { capture_profile_tasks_.erase(&stream); }
  // Requires the launch order's lock. A capture on `stream` ended (made a graph or not): the
  // task records its launches hold, which its next capture's launches no longer add to.
  std::uint32_t take_capture_profile_tasks(const Stream &stream);

 private:
  Device &device_;
  DeviceContext &context_;
  Executor &executor_;
  LaunchOrder &order_;
  // Under the launch order's lock.
  BoundRun scratch_;
  // Under the launch order's lock: the DEVICE tensors of the last launch whose arguments
  // passed, which the next launch with the same tensors need not look up again while nothing
  // was freed. rrt_device_free takes the same lock, so a free comes wholly before a launch
  // (which then sees the epoch it advanced) or after it.
  ValidatedDeviceRanges validated_ranges_;
  // Under the launch order's lock, with profiling: per capturing stream, the task records
  // its captured launches hold (the next one's profile_offset; with
  // each_launch_from_the_first_record_, the last launch's tasks); and how many records the
  // most recent launch or replay writes.
  std::map<const Stream *, std::uint32_t> capture_profile_tasks_;
  std::uint32_t last_profile_tasks_ = 0;
  bool each_launch_from_the_first_record_ = false;
};

}  // namespace replayrt
