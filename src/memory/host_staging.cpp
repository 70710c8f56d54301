#include "memory/host_staging.h"

#include "common/format.h"

namespace replayrt {

namespace {
Status allocation_failed(std::uint64_t bytes) {
  return Status::error(RRT_ERR_OUT_OF_MEMORY,
                       format("device allocation of %llu bytes for host staging failed",
                              static_cast<unsigned long long>(bytes)));
}
}  // namespace

HostStaging::HostStaging(DeviceAllocator allocator) noexcept : allocator_(allocator) {}

HostStaging::~HostStaging() {
  release();
}

std::uint64_t HostStaging::slice_bytes(std::uint64_t bytes) noexcept {
  return (bytes + kSliceAlignment - 1) / kSliceAlignment * kSliceAlignment;
}

GrowthRequest HostStaging::region_request(std::uint64_t required,
                                          GrowthContext context) const noexcept {
  return GrowthRequest{.point = GrowthPoint::kHostStaging,
                       .context = context,
                       .published = region_ != nullptr,
                       .capacity = capacity_,
                       .required = required,
                       .zero = ZeroRequest::kKeeps};
}

Status HostStaging::commit(std::uint64_t bytes, GrowthContext context) {
  const GrowthRequest growth = region_request(bytes, context);
  const GrowthDecision decision = decide_growth(growth);
  if (decision == GrowthDecision::kRefuse) {
    return refuse_growth(growth);
  }
  if (decision != GrowthDecision::kFirstAllocate) {
    return Status::ok();
  }
  void *region = allocate_or_null(allocator_, bytes);
  if (region == nullptr) {
    return allocation_failed(bytes);
  }
  ++alloc_count_;
  region_ = region;
  capacity_ = bytes;
  cursor_ = 0;
  return Status::ok();
}

Status HostStaging::begin(std::uint64_t required, GrowthContext context) {
  if (context.mode == ExecutionMode::kProgram) {
    cursor_ = 0;
    return Status::ok();
  }
  const GrowthRequest growth = region_request(required, context);
  switch (decide_growth(growth)) {
    case GrowthDecision::kRefuse:
      return refuse_growth(growth);
    case GrowthDecision::kFirstAllocate:
      return commit(required, context);
    case GrowthDecision::kGrow:
    case GrowthDecision::kKeep:
    case GrowthDecision::kRelease:
      cursor_ = 0;
      return Status::ok();
  }
  return Status::ok();
}

Status HostStaging::stage(std::uint64_t bytes, GrowthContext context, void **out) {
  if (context.mode == ExecutionMode::kKernel) {
    const std::uint64_t slice = slice_bytes(bytes);
    if (region_ == nullptr || slice > capacity_ - cursor_) {
      return Status::error(RRT_ERR_INTERNAL,
                           format("host staging slice of %llu bytes passes the %llu bytes "
                                  "begin() sized",
                                  static_cast<unsigned long long>(bytes),
                                  static_cast<unsigned long long>(capacity_)));
    }
    *out = static_cast<std::byte *>(region_) + cursor_;
    cursor_ += slice;
    return Status::ok();
  }
  const GrowthRequest growth{.point = GrowthPoint::kHostStaging,
                             .context = context,
                             .published = false,
                             .capacity = 0,
                             .required = bytes,
                             .zero = ZeroRequest::kKeeps};
  if (decide_growth(growth) == GrowthDecision::kRefuse) {
    return refuse_growth(growth);
  }
  blocks_.reserve(blocks_.size() + 1);
  void *block = allocate_or_null(allocator_, bytes);
  if (block == nullptr) {
    return allocation_failed(bytes);
  }
  ++alloc_count_;
  blocks_.push_back(block);
  *out = block;
  return Status::ok();
}

void HostStaging::end_run() noexcept {
  for (void *block : blocks_) {
    free_block(block);
  }
  blocks_.clear();
  cursor_ = 0;
}

void HostStaging::free_block(void *block) noexcept {
  if (allocator_.deallocate(allocator_.context, block) == 0) {
    ++free_count_;
  }
}

void HostStaging::release() noexcept {
  end_run();
  if (region_ != nullptr) {
    free_block(region_);
  }
  region_ = nullptr;
  capacity_ = 0;
}

}  // namespace replayrt
