#include "memory/guarded_block.h"

namespace replayrt {

GuardedBlock::GuardedBlock(BlockHost &host, GrowthPoint point) noexcept
    : host_(host), point_(point) {}

GuardedBlock::~GuardedBlock() {
  release();
}

GrowthRequest GuardedBlock::request_for(std::uint64_t required) const noexcept {
  return GrowthRequest{.point = point_,
                       .context = host_.growth_context(),
                       .published = base_ != nullptr,
                       .capacity = capacity_,
                       .required = required};
}

Status GuardedBlock::preflight(std::uint64_t required) const {
  const GrowthRequest request = request_for(required);
  return decide_growth(request) == GrowthDecision::kRefuse ? refuse_growth(request) : Status::ok();
}

Status GuardedBlock::plan(std::uint64_t required) {
  const GrowthRequest request = request_for(required);
  const GrowthDecision decision = decide_growth(request);
  if (decision == GrowthDecision::kRefuse) {
    // Built before anything counts it: building the message may run out of host memory.
    Status refusal = refuse_growth(request);
    ++refusals_;
    host_.count_refusal(refusal.growth_point());
    return refusal;
  }
  planned_ = decision;
  planned_bytes_ = required;
  return Status::ok();
}

bool GuardedBlock::needs_backing() const noexcept {
  return planned_ == GrowthDecision::kFirstAllocate || planned_ == GrowthDecision::kGrow;
}

Status GuardedBlock::stage() {
  if (!needs_backing() || staged_ != nullptr) {
    return Status::ok();
  }
  void *backing = nullptr;
  Status allocated = host_.allocate(*this, planned_bytes_, &backing);
  if (!allocated.is_ok()) {
    if (allocated.is_capacity_refusal()) {
      ++refusals_;
    }
    planned_ = GrowthDecision::kKeep;
    planned_bytes_ = 0;
    return allocated;
  }
  ++allocations_;
  staged_ = backing;
  return Status::ok();
}

void GuardedBlock::publish() noexcept {
  if (staged_ != nullptr) {
    if (base_ != nullptr) {
      ++base_changes_;
      superseded_ = base_;
      superseded_bytes_ = capacity_;
    }
    base_ = staged_;
    capacity_ = planned_bytes_;
    staged_ = nullptr;
  }
  if (planned_bytes_ != 0) {
    requested_ = planned_bytes_;
  }
  planned_ = GrowthDecision::kKeep;
  planned_bytes_ = 0;
}

void GuardedBlock::free_superseded() noexcept {
  free_backing(superseded_, superseded_bytes_);
}

void GuardedBlock::abort() noexcept {
  free_backing(staged_, planned_bytes_);
  planned_ = GrowthDecision::kKeep;
  planned_bytes_ = 0;
}

Status GuardedBlock::reserve(std::uint64_t required) {
  RRT_RETURN_IF_ERROR(plan(required));
  Status staged = stage();
  if (!staged.is_ok()) {
    abort();
    return staged;
  }
  publish();
  free_superseded();
  return Status::ok();
}

void GuardedBlock::free_backing(void *&backing, std::uint64_t bytes) noexcept {
  if (backing == nullptr) {
    return;
  }
  if (host_.free(backing, static_cast<std::size_t>(bytes))) {
    ++frees_;
  } else {
    ++failed_frees_;
  }
  backing = nullptr;
}

void GuardedBlock::release() noexcept {
  abort();
  free_superseded();
  free_backing(base_, capacity_);
  capacity_ = 0;
  requested_ = 0;
}

}  // namespace replayrt
