// Writes a callable's task-graph image and scheduler seed in the wire format of
// platform/launch/task_graph_image.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/status.h"
#include "platform/launch/task_graph_image.h"

namespace replayrt {

class Callable;

// Where an image's pointers point.
struct ImageBinding {
  std::int32_t callable_id = -1;
  std::uint64_t generation = 0;
  const void *gm_heap = nullptr;          // intermediates are baked relative to it
  const void *scheduler_state = nullptr;  // the working state the executor uses
  const void *scheduler_seed = nullptr;   // optional host-built seed (host-build bind)
};

// Writes the image of `callable` into `out` (host memory, exactly
// callable.requirements().image_bytes long). INVALID_ARGUMENT if `out` has the wrong size.
Status build_task_graph_image(const Callable &callable, const ImageBinding &binding,
                              std::span<std::byte> out);

// Writes the initial scheduler state of `callable` (counts and the ready roots, tagged with
// `generation`) into `out`, exactly scheduler_state_bytes(tasks) long: the seed a host-build
// bind uploads.
Status build_scheduler_seed(const Callable &callable, std::uint64_t generation,
                            std::span<std::byte> out);

}  // namespace replayrt
