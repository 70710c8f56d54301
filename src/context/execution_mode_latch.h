// ExecutionModeLatch: the write-once execution identity of one context.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/execution_mode.h"
#include "common/status.h"

namespace replayrt {

// A context is created mode-less. The first latch() fixes its mode for good:
//   - latching the mode already held is OK (idempotent);
//   - latching the other mode returns RRT_ERR_INVALID_STATE and changes nothing;
//   - there is no unlatch: not on finalize, not on error.
// Every kernel-mode guard reads is_kernel(). The mode never comes from an environment
// variable or a macro.
// Thread safety: every member may be called from any thread; concurrent conflicting latches
// resolve to exactly one winner (compare-exchange).
class ExecutionModeLatch {
 public:
  Status latch(ExecutionMode mode);
  bool is_latched() const noexcept;
  bool is_kernel() const noexcept;
  // Meaningful only when is_latched().
  ExecutionMode latched_mode() const noexcept;

 private:
  static constexpr std::uint32_t kUnlatched = 0;
  static constexpr std::uint32_t kProgram = 1;
  static constexpr std::uint32_t kKernel = 2;

  std::atomic<std::uint32_t> state_{kUnlatched};
};

}  // namespace replayrt
