#include "memory/block_transaction.h"

#include <cstdlib>

namespace replayrt {

BlockTransaction::~BlockTransaction() {
  if (!published_) {
    abort_all();
  }
}

void BlockTransaction::abort_all() noexcept {
  for (std::size_t i = 0; i < count_; ++i) {
    blocks_[i]->abort();
  }
  count_ = 0;
}

Status BlockTransaction::add(GuardedBlock &block, std::uint64_t required) {
  if (count_ == kMaxBlocks || published_) {
    std::abort();
  }
  RRT_RETURN_IF_ERROR(block.plan(required));
  blocks_[count_++] = &block;
  return Status::ok();
}

Status BlockTransaction::stage() {
  for (std::size_t i = 0; i < count_; ++i) {
    Status staged = blocks_[i]->stage();
    if (!staged.is_ok()) {
      abort_all();
      return staged;
    }
  }
  return Status::ok();
}

void BlockTransaction::publish() noexcept {
  for (std::size_t i = 0; i < count_; ++i) {
    blocks_[i]->publish();
  }
  for (std::size_t i = 0; i < count_; ++i) {
    blocks_[i]->free_superseded();
  }
  published_ = true;
}

Status BlockTransaction::commit() {
  RRT_RETURN_IF_ERROR(stage());
  publish();
  return Status::ok();
}

}  // namespace replayrt
