// Task records for the operand-resolution suites.
#pragma once

#include <cstdint>

#include "platform/launch/task_graph_image.h"

namespace replayrt::testing {

// A task whose operands are `tensors` tensors then `scalars` scalars, from record `first` on.
inline TaskRecord task_over(std::uint32_t first, std::uint32_t tensors, std::uint32_t scalars) {
  TaskRecord task{};
  task.first_operand = first;
  task.num_tensors = tensors;
  task.num_scalars = scalars;
  return task;
}

}  // namespace replayrt::testing
