#include "memory/retained_buffer.h"

#include "common/format.h"

namespace replayrt {

RetainedBuffer::RetainedBuffer(DeviceAllocator allocator) noexcept : allocator_(allocator) {}

RetainedBuffer::~RetainedBuffer() {
  release();
}

Status RetainedBuffer::begin(std::uint64_t required, GrowthContext context) {
  const GrowthRequest growth{
      .point = GrowthPoint::kRetainedStaging,
      .context = context,
      .published = address_ != nullptr,
      .capacity = capacity_,
      .required = required,
      .zero = ZeroRequest::kKeeps,
  };
  switch (decide_growth(growth)) {
    case GrowthDecision::kRefuse:
      return refuse_growth(growth);
    case GrowthDecision::kKeep:
    case GrowthDecision::kRelease:
      cursor_ = 0;
      return Status::ok();
    case GrowthDecision::kFirstAllocate:
    case GrowthDecision::kGrow:
      break;
  }
  void *grown = allocate_or_null(allocator_, required);
  if (grown == nullptr) {
    const unsigned long long bytes = required;
    return Status::error(RRT_ERR_OUT_OF_MEMORY,
                         format("device allocation of %llu bytes for retained staging failed; "
                                "the slot keeps its previous buffer",
                                bytes));
  }
  ++alloc_count_;
  if (address_ != nullptr) {
    ++base_changes_;
    if (allocator_.deallocate(allocator_.context, address_) == 0) {
      ++free_count_;
    }
  }
  address_ = grown;
  capacity_ = required;
  cursor_ = 0;
  return Status::ok();
}

void *RetainedBuffer::acquire(std::uint64_t bytes) noexcept {
  const std::uint64_t slice = slice_bytes(bytes);
  if (address_ == nullptr || slice > capacity_ - cursor_) {
    return nullptr;
  }
  void *out = static_cast<std::byte *>(address_) + cursor_;
  cursor_ += slice;
  return out;
}

std::uint64_t RetainedBuffer::slice_bytes(std::uint64_t bytes) noexcept {
  return (bytes + kSliceAlignment - 1) / kSliceAlignment * kSliceAlignment;
}

void RetainedBuffer::release() noexcept {
  if (address_ != nullptr && allocator_.deallocate(allocator_.context, address_) == 0) {
    ++free_count_;
  }
  address_ = nullptr;
  capacity_ = 0;
  cursor_ = 0;
}

void RetainedBuffer::abandon_after_device_failure() noexcept {
  address_ = nullptr;
  capacity_ = 0;
  cursor_ = 0;
}

}  // namespace replayrt
