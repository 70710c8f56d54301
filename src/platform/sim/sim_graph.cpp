#include "platform/sim/sim_graph.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>

#include "common/format.h"

namespace replayrt::sim {

namespace {
const void *as_ptr(std::uintptr_t address) {
  return reinterpret_cast<const void *>(address);
}

auto as_tuple(const CapturedAddress &captured) {
  return std::tie(captured.address, captured.base, captured.generation);
}
}  // namespace

InvocationBytes::InvocationBytes(std::span<const std::byte> bytes) {
  assign(bytes);
}

InvocationBytes::InvocationBytes(const InvocationBytes &other) {
  assign({other.data(), other.size()});
}

InvocationBytes &InvocationBytes::operator=(const InvocationBytes &other) {
  if (this != &other) {
    assign({other.data(), other.size()});
  }
  return *this;
}

InvocationBytes::InvocationBytes(InvocationBytes &&other) noexcept
    : size_(other.size_), heap_(std::move(other.heap_)) {
  if (!heap_) {
    std::memcpy(inline_.data(), other.inline_.data(), size_);
  }
  other.size_ = 0;
}

InvocationBytes &InvocationBytes::operator=(InvocationBytes &&other) noexcept {
  if (this != &other) {
    size_ = other.size_;
    heap_ = std::move(other.heap_);
    if (!heap_) {
      std::memcpy(inline_.data(), other.inline_.data(), size_);
    }
    other.size_ = 0;
  }
  return *this;
}

void InvocationBytes::assign(std::span<const std::byte> bytes) {
  if (bytes.size() <= kInlineCapacity) {
    heap_.reset();
    if (!bytes.empty()) {
      std::memcpy(inline_.data(), bytes.data(), bytes.size());
    }
  } else {
    heap_ = std::make_unique_for_overwrite<std::byte[]>(bytes.size());
    std::memcpy(heap_.get(), bytes.data(), bytes.size());
  }
  size_ = bytes.size();
}

SimGraph::SimGraph(const SimMemory &memory, std::vector<SimOperation> operations,
                   std::vector<CapturedAddress> addresses)
    : memory_(memory), operations_(std::move(operations)), addresses_(std::move(addresses)) {
  std::sort(
      addresses_.begin(), addresses_.end(),
      [](const CapturedAddress &a, const CapturedAddress &b) { return as_tuple(a) < as_tuple(b); });
  const auto duplicates = std::unique(addresses_.begin(), addresses_.end(),
                                      [](const CapturedAddress &a, const CapturedAddress &b) {
                                        return as_tuple(a) == as_tuple(b);
                                      });
  addresses_.erase(duplicates, addresses_.end());
}

SimGraph::~SimGraph() = default;

Status SimGraph::check_addresses() const {
  const std::size_t stale = memory_.first_stale(addresses_);
  if (stale == addresses_.size()) {
    return Status::ok();
  }
  const CapturedAddress &captured = addresses_[stale];
  const auto now = memory_.find_allocation(as_ptr(captured.address));
  const unsigned long long captured_generation = captured.generation;
  if (!now) {
    return Status::error(
        RRT_ERR_STALE_ADDRESS,
        format("graph replay: captured address %p is no longer inside a live device "
               "allocation (its allocation at %p, generation %llu, was freed)",
               as_ptr(captured.address), as_ptr(captured.base), captured_generation));
  }
  const unsigned long long now_generation = now->generation;
  return Status::error(
      RRT_ERR_STALE_ADDRESS,
      format("graph replay: captured address %p was captured in the allocation at %p, "
             "generation %llu, which was freed; it now lies in a different allocation at %p, "
             "generation %llu",
             as_ptr(captured.address), as_ptr(captured.base), captured_generation,
             as_ptr(now->base), now_generation));
}

}  // namespace replayrt::sim
