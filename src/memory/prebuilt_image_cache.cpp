#include "memory/prebuilt_image_cache.h"

namespace replayrt {

bool PrebuiltImageCache::lookup(int bank, std::uint64_t content_key, const BankBases &current,
                                Entry *out) const noexcept {
  if (!valid_ || out == nullptr || entry_.bank != bank || entry_.content_key != content_key ||
      !(entry_.bases == current)) {
    return false;
  }
  *out = entry_;
  return true;
}

void PrebuiltImageCache::store(const Entry &entry) noexcept {
  entry_ = entry;
  valid_ = true;
}

void PrebuiltImageCache::invalidate_bank(int bank) noexcept {
  if (valid_ && entry_.bank == bank) {
    valid_ = false;
    ++invalidations_;
  }
}

void PrebuiltImageCache::clear() noexcept {
  if (valid_) {
    ++invalidations_;
  }
  valid_ = false;
}

}  // namespace replayrt
