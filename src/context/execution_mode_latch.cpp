#include "context/execution_mode_latch.h"

namespace replayrt {

namespace {
const char *mode_name(ExecutionMode mode) {
  return mode == ExecutionMode::kKernel ? "KERNEL" : "PROGRAM";
}
}  // namespace

Status ExecutionModeLatch::latch(ExecutionMode mode) {
  const std::uint32_t wanted = mode == ExecutionMode::kKernel ? kKernel : kProgram;
  std::uint32_t expected = kUnlatched;
  if (state_.compare_exchange_strong(expected, wanted, std::memory_order_acq_rel) ||
      expected == wanted) {
    return Status::ok();
  }
  const ExecutionMode held = expected == kKernel ? ExecutionMode::kKernel : ExecutionMode::kProgram;
  return Status::error(RRT_ERR_INVALID_STATE, std::string("context is latched to ") +
                                                  mode_name(held) + " mode; it cannot become a " +
                                                  mode_name(mode) + " context");
}

bool ExecutionModeLatch::is_latched() const noexcept {
  return state_.load(std::memory_order_acquire) != kUnlatched;
}

bool ExecutionModeLatch::is_kernel() const noexcept {
  return state_.load(std::memory_order_acquire) == kKernel;
}

ExecutionMode ExecutionModeLatch::latched_mode() const noexcept {
  return state_.load(std::memory_order_acquire) == kKernel ? ExecutionMode::kKernel
                                                           : ExecutionMode::kProgram;
}

}  // namespace replayrt
