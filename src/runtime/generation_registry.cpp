#include "runtime/generation_registry.h"

#include "common/format.h"

namespace replayrt {

GenerationRegistry &GenerationRegistry::process_wide() {
  static GenerationRegistry registry;
  return registry;
}

Status GenerationRegistry::claim(std::uint64_t requested, std::uint64_t *claimed) {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::uint64_t generation = requested;
  if (generation == 0) {
    generation = UINT64_MAX;
    for (auto it = claimed_.rbegin(); it != claimed_.rend() && *it == generation; ++it) {
      --generation;
    }
  }
  if (!claimed_.insert(generation).second) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("context generation %llu was already used in this process",
                                static_cast<unsigned long long>(generation)));
  }
  *claimed = generation;
  return Status::ok();
}

void GenerationRegistry::unclaim(std::uint64_t generation) noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  claimed_.erase(generation);
}

GenerationClaim::~GenerationClaim() {
  if (generation_ != 0 && !kept_) {
    registry_.unclaim(generation_);
  }
}

Status GenerationClaim::claim(std::uint64_t requested) {
  return registry_.claim(requested, &generation_);
}

}  // namespace replayrt
