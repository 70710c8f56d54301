// BlockHostRig: the BlockHost the memory-object tests create their blocks on. It allocates
// through a DeviceRig's fault injector, takes its growth context from the test, and records
// every call a block makes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <utility>
#include <vector>

#include "common/format.h"
#include "common/growth_point.h"
#include "common/status.h"
#include "memory/growth_guard.h"
#include "memory/guarded_block.h"
#include "support/device_rig.h"

namespace replayrt::testing {

// allocate(): the nth allocate() call from refuse_nth_allocation(n) returns the host's own
// capacity refusal (growth point launch_allocation) without reaching the device; otherwise it
// asks the fault injector, and a null return or a throw becomes RRT_ERR_OUT_OF_MEMORY.
// free(): frees on the device; while reject_frees(true), returns false and frees nothing.
// After fill_allocations_with(byte), every new backing is filled with `byte` on the device, so
// a test sees whether its owner zeroed it.
// zero(): a device memset; fail_next_zero() makes the next one fail with RRT_ERR_INTERNAL.
// count_refusal(): counted per growth point.
// Every successful allocation, every free and every zero is appended to events() in order.
// Thread safety: none.
class BlockHostRig final : public BlockHost {
 public:
  enum class EventKind { kAllocate, kFree, kZero };
  struct Event {
    EventKind kind;
    const void *ptr;
    std::size_t bytes;  // kAllocate and kZero
    GrowthPoint point;  // kAllocate: the block's growth point
  };

  BlockHostRig() = default;
  explicit BlockHostRig(GrowthContext context) : context_(context) {}

  // The growth context every block on this host sees from now on.
  void set_context(GrowthContext context) noexcept { context_ = context; }
  void set_mode(ExecutionMode mode) noexcept { context_.mode = mode; }
  void set_in_launch(bool in_launch) noexcept { context_.in_launch = in_launch; }

  // The device's nth allocation from now returns null or, when `throws`, throws.
  void fail_nth_allocation(std::uint64_t n, bool throws) {
    if (throws) {
      rig_.faults.throw_on_nth_allocation(n);
    } else {
      rig_.faults.fail_nth_allocation(n);
    }
  }
  void refuse_nth_allocation(std::uint64_t n) noexcept { refuse_at_ = allocate_calls_ + n; }
  void reject_frees(bool reject) noexcept { reject_frees_ = reject; }
  void fail_next_zero() noexcept { fail_next_zero_ = true; }
  void fill_allocations_with(int byte) noexcept {
    fill_ = true;
    fill_byte_ = byte;
  }
  // Called with the pointer before each free() reaches the device; a test clears it
  // (on_free(nullptr)) before anything the hook captures goes out of scope.
  void on_free(std::function<void(const void *)> hook) { on_free_ = std::move(hook); }

  GrowthContext growth_context() const noexcept override { return context_; }

  Status allocate(const GuardedBlock &block, std::size_t bytes, void **out) noexcept override {
    ++allocate_calls_;
    if (allocate_calls_ == refuse_at_) {
      return Status::capacity_refusal(GrowthPoint::kLaunchAllocation, bytes, block.capacity(),
                                      format("test host refuses a %zu-byte allocation", bytes));
    }
    void *ptr = nullptr;
    try {
      ptr = rig_.faults.allocate(bytes);
    } catch (const std::bad_alloc &) {
      ptr = nullptr;
    }
    if (ptr == nullptr) {
      return Status::error(RRT_ERR_OUT_OF_MEMORY,
                           format("test device cannot allocate %zu bytes", bytes));
    }
    if (fill_ && !rig_.faults.memset(ptr, fill_byte_, bytes).is_ok()) {
      (void)rig_.faults.free(ptr);
      return Status::error(RRT_ERR_INTERNAL, "test device cannot fill a new backing");
    }
    events_.push_back({EventKind::kAllocate, ptr, bytes, block.point()});
    *out = ptr;
    return Status::ok();
  }

  bool free(void *ptr, std::size_t /*bytes*/) noexcept override {
    if (on_free_) {
      on_free_(ptr);
    }
    if (reject_frees_) {
      ++rejected_frees_;
      return false;
    }
    events_.push_back({EventKind::kFree, ptr, 0, GrowthPoint::kNone});
    return rig_.faults.free(ptr).is_ok();
  }

  Status zero(void *ptr, std::size_t bytes) noexcept override {
    events_.push_back({EventKind::kZero, ptr, bytes, GrowthPoint::kNone});
    if (fail_next_zero_) {
      fail_next_zero_ = false;
      return Status::error(RRT_ERR_INTERNAL, "test device memset fails");
    }
    return rig_.faults.memset(ptr, 0, bytes);
  }

  void count_refusal(GrowthPoint point) noexcept override {
    const int index = growth_point_index(point);
    if (index >= 0 && index < kGrowthPointCount) {
      ++refusals_[static_cast<std::size_t>(index)];
    }
  }

  sim::SimDevice &device() noexcept { return rig_.device; }
  FaultInjectingDevice &faults() noexcept { return rig_.faults; }
  MemoryCounters counters() const { return rig_.counters(); }
  bool is_live(const void *ptr) const { return rig_.device.find_allocation(ptr).has_value(); }

  // allocate() calls, the refused and failed ones included.
  std::uint64_t allocate_calls() const noexcept { return allocate_calls_; }
  std::uint64_t rejected_frees() const noexcept { return rejected_frees_; }
  std::uint64_t refusals(GrowthPoint point) const noexcept {
    return refusals_[static_cast<std::size_t>(growth_point_index(point))];
  }
  std::uint64_t total_refusals() const noexcept {
    std::uint64_t total = 0;
    for (const std::uint64_t count : refusals_) {
      total += count;
    }
    return total;
  }
  const std::vector<Event> &events() const noexcept { return events_; }
  std::vector<Event> events_of(EventKind kind) const {
    std::vector<Event> selected;
    for (const Event &event : events_) {
      if (event.kind == kind) {
        selected.push_back(event);
      }
    }
    return selected;
  }

 private:
  DeviceRig rig_;
  GrowthContext context_;
  std::uint64_t allocate_calls_ = 0;
  std::uint64_t refuse_at_ = 0;
  bool reject_frees_ = false;
  bool fail_next_zero_ = false;
  bool fill_ = false;
  int fill_byte_ = 0;
  std::uint64_t rejected_frees_ = 0;
  std::function<void(const void *)> on_free_;
  std::array<std::uint64_t, kGrowthPointCount> refusals_{};
  std::vector<Event> events_;
};

}  // namespace replayrt::testing
