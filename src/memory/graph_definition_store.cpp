#include "memory/graph_definition_store.h"

#include "common/format.h"

namespace replayrt {

namespace {
std::uint64_t aligned(std::uint64_t value) {
  return (value + GraphDefinitionStore::kAlignment - 1) / GraphDefinitionStore::kAlignment *
         GraphDefinitionStore::kAlignment;
}
}  // namespace

GraphDefinitionStore::GraphDefinitionStore(DeviceAllocator allocator) noexcept
    : allocator_(allocator) {}

GraphDefinitionStore::~GraphDefinitionStore() {
  release();
}

Status GraphDefinitionStore::commit(std::uint64_t bytes, GrowthContext context) {
  const GrowthRequest growth{.point = GrowthPoint::kGraphDefinition,
                             .context = context,
                             .published = address_ != nullptr,
                             .capacity = capacity_,
                             .required = bytes,
                             .zero = ZeroRequest::kKeeps};
  switch (decide_growth(growth)) {
    case GrowthDecision::kRefuse:
      return refuse_growth(growth);
    case GrowthDecision::kFirstAllocate:
      return replace_block(bytes);
    case GrowthDecision::kGrow:
    case GrowthDecision::kKeep:
    case GrowthDecision::kRelease:
      return Status::ok();
  }
  return Status::ok();
}

GrowthRequest GraphDefinitionStore::placement_request(std::uint64_t bytes,
                                                      GrowthContext context) const noexcept {
  return GrowthRequest{.point = GrowthPoint::kGraphDefinition,
                       .context = context,
                       .published = address_ != nullptr,
                       .capacity = capacity_,
                       .required = aligned(used_) + bytes,
                       .zero = ZeroRequest::kKeeps};
}

Status GraphDefinitionStore::preflight(std::uint64_t key, std::uint64_t bytes,
                                       GrowthContext context) const {
  if (offsets_.count(key) != 0) {
    return Status::ok();
  }
  const GrowthRequest growth = placement_request(bytes, context);
  return decide_growth(growth) == GrowthDecision::kRefuse ? refuse_growth(growth) : Status::ok();
}

Status GraphDefinitionStore::acquire(std::uint64_t key, std::uint64_t bytes, GrowthContext context,
                                     Placement *out) {
  const auto found = offsets_.find(key);
  if (found != offsets_.end()) {
    *out = Placement{static_cast<std::byte *>(address_) + found->second, false};
    return Status::ok();
  }
  const std::uint64_t offset = aligned(used_);
  const GrowthRequest growth = placement_request(bytes, context);
  switch (decide_growth(growth)) {
    case GrowthDecision::kRefuse:
      return refuse_growth(growth);
    case GrowthDecision::kKeep:
    case GrowthDecision::kRelease:
      offsets_[key] = offset;
      used_ = offset + bytes;
      *out = Placement{static_cast<std::byte *>(address_) + offset, true};
      return Status::ok();
    case GrowthDecision::kFirstAllocate:
    case GrowthDecision::kGrow:
      break;
  }
  RRT_RETURN_IF_ERROR(replace_block(bytes));
  offsets_[key] = 0;
  used_ = bytes;
  *out = Placement{address_, true};
  return Status::ok();
}

Status GraphDefinitionStore::replace_block(std::uint64_t bytes) {
  void *block = allocate_or_null(allocator_, bytes);
  if (block == nullptr) {
    return Status::error(RRT_ERR_OUT_OF_MEMORY,
                         format("device allocation of %llu bytes for the graph-definition store "
                                "failed; the store keeps its previous block",
                                static_cast<unsigned long long>(bytes)));
  }
  ++alloc_count_;
  if (address_ != nullptr) {
    ++base_changes_;
    if (allocator_.deallocate(allocator_.context, address_) == 0) {
      ++free_count_;
    }
  }
  address_ = block;
  capacity_ = bytes;
  used_ = 0;
  offsets_.clear();
  return Status::ok();
}

void GraphDefinitionStore::release() noexcept {
  if (address_ != nullptr && allocator_.deallocate(allocator_.context, address_) == 0) {
    ++free_count_;
  }
  address_ = nullptr;
  capacity_ = 0;
  used_ = 0;
  offsets_.clear();
}

}  // namespace replayrt
