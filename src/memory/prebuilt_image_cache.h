// PrebuiltImageCache: remembers the one runtime image last built into a bank, so a run with
// the same content key skips the host build, the upload and every arena call.
#pragma once

#include <cstdint>

#include "memory/arena_bank.h"

namespace replayrt {

// A single entry: the bank and the bases the image was built against (the image bakes
// gm_sm and gm_heap pointers, and lives in runtime_pool), the content key, and where the
// image sits in the runtime pool.
//
// Invalidation: the owner calls invalidate_bank(b) when bank b's bases changed at a publish,
// when the bank was torn down, and when a fill that may have written into the bank's kept
// blocks failed (their addresses stay, their contents may not). A refusal or a failed
// allocation changes nothing in the bank and therefore never invalidates the entry. lookup()
// also compares the bases it is given, so an entry can never hand out a stale base.
//
// Thread safety: none; the context serializes access.
class PrebuiltImageCache {
 public:
  struct Entry {
    int bank = -1;
    BankBases bases;
    std::uint64_t content_key = 0;
    std::uint64_t image_offset = 0;  // within runtime_pool
    std::uint64_t image_bytes = 0;
    bool operator==(const Entry &) const = default;
  };

  // True and *out written when the entry is valid for `bank`, `content_key` and the bank's
  // current bases.
  bool lookup(int bank, std::uint64_t content_key, const BankBases &current,
              Entry *out) const noexcept;
  void store(const Entry &entry) noexcept;
  void invalidate_bank(int bank) noexcept;
  void clear() noexcept;

  bool is_valid() const noexcept { return valid_; }
  // The valid entry, or null.
  const Entry *entry() const noexcept { return valid_ ? &entry_ : nullptr; }
  // Number of times a valid entry was dropped; for tests and statistics.
  std::uint64_t invalidations() const noexcept { return invalidations_; }

 private:
  Entry entry_;
  bool valid_ = false;
  std::uint64_t invalidations_ = 0;
};

}  // namespace replayrt
