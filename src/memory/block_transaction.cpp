#include "memory/block_transaction.h"

#include <cstdlib>

namespace replayrt {

BlockTransaction::~BlockTransaction() {
  if (committed_) {
    return;
  }
  for (std::size_t i = 0; i < count_; ++i) {
    blocks_[i]->abort();
  }
}

Status BlockTransaction::add(GuardedBlock &block, std::uint64_t required) {
  if (count_ == kMaxBlocks || committed_) {
    std::abort();
  }
  RRT_RETURN_IF_ERROR(block.plan(required));
  blocks_[count_++] = &block;
  return Status::ok();
}

Status BlockTransaction::commit() {
  for (std::size_t i = 0; i < count_; ++i) {
    Status staged = blocks_[i]->stage();
    if (!staged.is_ok()) {
      for (std::size_t j = 0; j < count_; ++j) {
        blocks_[j]->abort();
      }
      count_ = 0;
      return staged;
    }
  }
  for (std::size_t i = 0; i < count_; ++i) {
    blocks_[i]->publish();
  }
  for (std::size_t i = 0; i < count_; ++i) {
    blocks_[i]->free_superseded();
  }
  committed_ = true;
  return Status::ok();
}

}  // namespace replayrt
