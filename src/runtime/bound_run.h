// BoundRun: one run of a callable turned into device state, ready to enqueue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <replayrt/values.h>

#include "common/status.h"
#include "platform/device.h"

namespace replayrt {

// A copy enqueued around the launch: host-to-device before it (staging HOST inputs),
// device-to-host after it (HOST outputs).
struct StagedCopy {
  void *dst = nullptr;
  const void *src = nullptr;
  std::uint64_t bytes = 0;
};

// One tensor of a run: `bytes` at `addr` in `space` (HOST or DEVICE).
struct TensorArg {
  void *addr = nullptr;
  std::uint64_t bytes = 0;
  rrt_address_space_t space = RRT_SPACE_HOST;
};

// The arguments of one run (the C ABI decodes them, capi/run_args_codec.h; validate_run_args
// checks them against the callable: one tensor per parameter with the parameter's exact size,
// one scalar per declared scalar, DEVICE tensors inside live allocations).
struct RunArgsView {
  std::span<const TensorArg> tensors;
  std::span<const std::uint64_t> scalars;
};

struct BoundRun {
  std::vector<std::uint64_t> invocation;  // header + payload, 8-byte aligned
  std::vector<void *> tensor_addresses;   // every tensor's device address, in parameter order
  std::size_t invocation_bytes = 0;
  std::vector<StagedCopy> copies_in;
  std::vector<StagedCopy> copies_out;
  // Every device address the launch may dereference (image, scheduler state, gm_heap,
  // tensors), for the capture's stale-address record.
  std::vector<const void *> referenced;
  // The gm_heap the launch's intermediates live in (LaunchBinding::gm_heap).
  const void *gm_heap = nullptr;

  std::span<const std::byte> invocation_span() const noexcept {
    return {reinterpret_cast<const std::byte *>(invocation.data()), invocation_bytes};
  }
  LaunchBinding binding() const noexcept { return {invocation_span(), referenced, gm_heap}; }
  // Empties every list, keeping capacity, so a steady state allocates nothing.
  void clear() noexcept {
    invocation_bytes = 0;
    tensor_addresses.clear();
    copies_in.clear();
    copies_out.clear();
    referenced.clear();
    gm_heap = nullptr;
  }
};

// Enqueues `bound` on `stream`: its copies in, the launch of `executable` by `executor`, its
// copies out. The first failed enqueue is returned; what was enqueued before it stays queued.
// Inside a capture, a failed enqueue spoils the capture (end_capture then fails), whether it
// returned its failure or threw; a throw is rethrown after that. This is the one place a
// launch or a run launch spoils a capture.
Status enqueue_bound(Executor &executor, const PreparedExecutable &executable,
                     const BoundRun &bound, Stream &stream);

}  // namespace replayrt
