// GenerationRegistry: the kernel-mode context generations claimed so far. The C ABI promises
// every kernel-mode context a generation no other context of the process holds
// (rrt_kernel_config_t::context_generation); the registry hands each out at most once. Images
// and invocation headers carry the callable's generation (CallableTable), not this one; a
// replay tells one context's memory from another's by allocation generations.
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
  // Makes `generation`, claimed by a kernel init that then failed, claimable again (what a
  // GenerationClaim's destructor does).
  void unclaim(std::uint64_t generation) noexcept;

 private:
  std::mutex mutex_;
  std::set<std::uint64_t> claimed_;
};

// One generation claimed by a kernel init in progress. The destructor unclaims it unless
// keep() ran, so an init that returns early or throws on any path leaves the generation
// claimable again.
// Call order: claim() at most once → keep() once the init has committed.
// Thread safety: one thread uses a claim; the registry it claims from is thread-safe.
class GenerationClaim {
 public:
  explicit GenerationClaim(GenerationRegistry &registry) noexcept : registry_(registry) {}
  ~GenerationClaim();
  GenerationClaim(const GenerationClaim &) = delete;
  GenerationClaim &operator=(const GenerationClaim &) = delete;
  GenerationClaim(GenerationClaim &&) = delete;
  GenerationClaim &operator=(GenerationClaim &&) = delete;

  // GenerationRegistry::claim; a refusal holds nothing.
  Status claim(std::uint64_t requested);
  // The claimed generation (0 before a successful claim()).
  std::uint64_t generation() const noexcept { return generation_; }
  // The generation stays claimed for good.
  void keep() noexcept { kept_ = true; }

 private:
  GenerationRegistry &registry_;
  std::uint64_t generation_ = 0;
  bool kept_ = false;
};

}  // namespace replayrt
