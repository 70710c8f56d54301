// BlockTransaction: sizes several guarded blocks all-or-nothing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "memory/guarded_block.h"

namespace replayrt {

// Call order: add(block, required) ... → commit().
//   add()     plans one block (no side effect). A refusal is returned at once; the caller
//             then abandons the transaction and nothing was touched anywhere.
//   commit()  stages every planned block; if any allocation fails, every staged backing is
//             freed and the failure is returned with every block as before. Otherwise every
//             block is published at once, then every superseded backing is freed, last.
// A transaction destroyed before commit() (an early return, a refusal) undoes every plan.
// A block may be added once per transaction; at most kMaxBlocks blocks take part.
// Thread safety: none; the blocks' host serializes the transaction.
class BlockTransaction {
 public:
  static constexpr std::size_t kMaxBlocks = 12;

  BlockTransaction() = default;
  ~BlockTransaction();
  BlockTransaction(const BlockTransaction &) = delete;
  BlockTransaction &operator=(const BlockTransaction &) = delete;
  BlockTransaction(BlockTransaction &&) = delete;
  BlockTransaction &operator=(BlockTransaction &&) = delete;

  Status add(GuardedBlock &block, std::uint64_t required);
  Status commit();

 private:
  std::array<GuardedBlock *, kMaxBlocks> blocks_{};
  std::size_t count_ = 0;
  bool committed_ = false;
};

}  // namespace replayrt
