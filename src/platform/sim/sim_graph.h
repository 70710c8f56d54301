// SimGraph: the simulator backend of the Graph interface, and the operation record that both
// a stream's queue and a graph hold.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "platform/device.h"
#include "platform/sim/sim_event.h"
#include "platform/sim/sim_memory.h"

namespace replayrt::sim {

// A launch's invocation bytes, owned. Up to kInlineCapacity bytes are held inline, so queuing
// a small launch does not allocate; larger invocations go to the heap.
class InvocationBytes {
 public:
  static constexpr std::size_t kInlineCapacity = 256;

  InvocationBytes() noexcept = default;
  // Copies `bytes`.
  explicit InvocationBytes(std::span<const std::byte> bytes);
  InvocationBytes(const InvocationBytes &other);
  InvocationBytes &operator=(const InvocationBytes &other);
  InvocationBytes(InvocationBytes &&other) noexcept;
  InvocationBytes &operator=(InvocationBytes &&other) noexcept;
  ~InvocationBytes() = default;

  const std::byte *data() const noexcept { return heap_ ? heap_.get() : inline_.data(); }
  std::size_t size() const noexcept { return size_; }

 private:
  void assign(std::span<const std::byte> bytes);

  std::size_t size_ = 0;
  std::unique_ptr<std::byte[]> heap_;
  // Only the first size_ bytes are meaningful, and only while heap_ is null.
  alignas(std::max_align_t) std::array<std::byte, kInlineCapacity> inline_;
};

// One unit of stream work, as a stream queues it and as a graph records it. Which fields are
// meaningful depends on kind:
//   copies:    dst, src, bytes
//   memset:    dst, value, bytes
//   launch:    entry, entry_context, invocation
//   record:    event, sequence (the record's number, taken at enqueue)
//   wait:      event, sequence (the record waited for, bound at enqueue; 0 = no wait)
// In a graph, sequence is unused: a replay takes or binds it when it enqueues the copy.
struct SimOperation {
  enum class Kind : std::uint8_t {
    kCopyHostToDevice,
    kCopyDeviceToHost,
    kCopyDeviceToDevice,
    kMemset,
    kLaunch,
    kRecordEvent,
    kWaitEvent,
  };

  Kind kind = Kind::kLaunch;
  void *dst = nullptr;
  const void *src = nullptr;
  std::size_t bytes = 0;
  int value = 0;
  DeviceEntry entry = nullptr;
  void *entry_context = nullptr;
  InvocationBytes invocation;
  std::shared_ptr<SimEventState> event;
  std::uint64_t sequence = 0;
};

// Work recorded by SimStream's capture, replayable on any SimStream of the same SimMemory
// (that is, of the same SimDevice). Created by SimStream::end_capture; immutable afterwards.
// Holds the events it records or waits on by shared state, so they may be destroyed first.
// The device must outlive the graph.
// Thread safety: every member is thread-safe; any number of streams may replay it at once.
class SimGraph final : public Graph {
 public:
  // `addresses` may hold duplicates; the graph keeps each distinct entry once, sorted. Allocates
  // nothing beyond what its arguments hold (SimStream::end_capture relies on it).
  SimGraph(const SimMemory &memory, std::vector<SimOperation> operations,
           std::vector<CapturedAddress> addresses);
  ~SimGraph() override;

  std::size_t operation_count() const override { return operations_.size(); }
  std::span<const CapturedAddress> captured_addresses() const override { return addresses_; }

  // The device memory of the device whose stream captured the graph.
  const SimMemory &memory() const noexcept { return memory_; }
  std::span<const SimOperation> operations() const noexcept { return operations_; }

  // OK when every captured address still lies in a live allocation with the base and
  // generation it had at capture. Otherwise RRT_ERR_STALE_ADDRESS naming the first address
  // (in captured_addresses() order) that does not, and what became of its allocation.
  Status check_addresses() const override;

 private:
  const SimMemory &memory_;
  const std::vector<SimOperation> operations_;
  std::vector<CapturedAddress> addresses_;
};

}  // namespace replayrt::sim
