// The invocation: the immutable bytes one launch enqueues, a fixed header followed by a
// payload. It is copied by value into the stream (and into a graph at capture), so a replay
// re-executes exactly these bytes without returning to the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "common/status.h"

namespace replayrt {

// Wire header (upstream's 40-byte K1 layout). Producers zero-initialize it; the executor
// validates it before it reads the payload and rejects nonzero reserved fields. Both sides are
// built together, so there is no version negotiation.
struct InvocationHeader {
  std::uint32_t mode = 0;                   // ExecutionMode of the issuing context
  std::int32_t callable_id = 0;             // the prepared callable
  std::uint64_t generation = 0;             // the callable's generation; checked against the image
  std::uint64_t payload_bytes = 0;          // bytes that follow the header
  std::int32_t tensor_count = 0;            // tensor parameters in the payload
  std::int32_t scalar_count = 0;            // run scalars in the payload
  std::int32_t host_copy_tensor_count = 0;  // reserved for host-only tensor copies; must be 0
  std::uint32_t reserved = 0;               // must be 0
};

static_assert(std::is_trivially_copyable_v<InvocationHeader>);
static_assert(std::is_standard_layout_v<InvocationHeader>);
static_assert(sizeof(InvocationHeader) == 40);
static_assert(offsetof(InvocationHeader, mode) == 0);
static_assert(offsetof(InvocationHeader, callable_id) == 4);
static_assert(offsetof(InvocationHeader, generation) == 8);
static_assert(offsetof(InvocationHeader, payload_bytes) == 16);
static_assert(offsetof(InvocationHeader, tensor_count) == 24);
static_assert(offsetof(InvocationHeader, scalar_count) == 28);
static_assert(offsetof(InvocationHeader, host_copy_tensor_count) == 32);
static_assert(offsetof(InvocationHeader, reserved) == 36);

// The payload after the header, as 64-bit words:
//   [0] image address: the task-graph image the device executes (in runtime_pool or the
//       graph-definition store)
//   [1] task timing records (a DFX collector area; 0: profiling off)
//   [2] the launch's device-wall record (0: profiling off)
//   [3 .. 3+T)       tensor addresses (device; staged HOST tensors point at their staging)
//   [3+T .. 3+2T)    tensor byte sizes
//   [3+2T .. 3+2T+S) scalars
struct InvocationPayloadView {
  std::uint64_t image_address = 0;
  std::uint64_t timings_address = 0;
  std::uint64_t wall_address = 0;
  std::span<const std::uint64_t> tensor_addresses;
  std::span<const std::uint64_t> tensor_bytes;
  std::span<const std::uint64_t> scalars;
};

inline constexpr std::size_t kPayloadFixedWords = 3;

constexpr std::size_t invocation_bytes(std::size_t tensors, std::size_t scalars) {
  return sizeof(InvocationHeader) + (kPayloadFixedWords + 2 * tensors + scalars) * 8;
}

// Checks the header against the bytes received and returns a view of the payload. The bytes
// must be 8-byte aligned (stream queues and graphs keep them so). Any violation is
// RRT_ERR_KERNEL_FAILED with a message saying which field is wrong.
Status decode_invocation(const std::byte *bytes, std::size_t size, InvocationHeader *header,
                         InvocationPayloadView *payload);

}  // namespace replayrt
