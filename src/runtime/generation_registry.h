// GenerationRegistry: the kernel-mode context generations claimed so far. A graph captured on
// a kernel-mode context bakes the context's generation into its image, so a generation that
// two contexts shared would let a graph of one pass the identity check of the other; the
// registry hands each generation out at most once.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>

#include "common/status.h"

namespace replayrt {

// Every engine of one registry claims distinct generations. The C ABI keeps one registry
// for the whole process (process_wide()); a test may give its engines a registry of its own.
// Thread safety: every member is thread-safe.
class GenerationRegistry {
 public:
  GenerationRegistry() = default;
  GenerationRegistry(const GenerationRegistry &) = delete;
  GenerationRegistry &operator=(const GenerationRegistry &) = delete;
  GenerationRegistry(GenerationRegistry &&) = delete;
  GenerationRegistry &operator=(GenerationRegistry &&) = delete;

  // The registry of the C ABI's contexts; it lives until the process exits.
  static GenerationRegistry &process_wide();

  // Claims `requested`, or for 0 the largest generation not yet claimed (so generations the
  // registry picks stay clear of the small ones callers usually choose). A generation already
  // claimed is RRT_ERR_INVALID_ARGUMENT and claims nothing.
  Status claim(std::uint64_t requested, std::uint64_t *claimed);
  // Makes `generation`, claimed by a kernel init that then failed, claimable again.
  void unclaim(std::uint64_t generation) noexcept;

 private:
  std::mutex mutex_;
  std::set<std::uint64_t> claimed_;
};

}  // namespace replayrt
