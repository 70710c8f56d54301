// BlockTransaction: sizes several guarded blocks all-or-nothing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "memory/guarded_block.h"

namespace replayrt {

// Call order: add(block, required) ... → commit(), or add ... → stage() → publish().
//   add()      plans one block (no side effect). A refusal is returned at once; the caller
//              then abandons the transaction and nothing was touched anywhere.
//   stage()    allocates every planned backing; if any allocation fails, every staged
//              backing is freed and the failure is returned with every block as before.
//              Between stage() and publish() the caller may write into the backings the
//              blocks will have (GuardedBlock::base_after_publish): a new backing is not
//              published yet, but a kept one is the published backing itself.
//   publish()  publishes every block at once, then frees every superseded backing, last.
//              It cannot fail.
//   commit()   stage() then publish().
// A transaction destroyed before publish() (an early return, a refusal, an exception) frees
// every staged backing and undoes every plan: the blocks are as before the first add().
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
  Status stage();
  void publish() noexcept;
  Status commit();

 private:
  void abort_all() noexcept;

  std::array<GuardedBlock *, kMaxBlocks> blocks_{};
  std::size_t count_ = 0;
  bool published_ = false;
};

}  // namespace replayrt
