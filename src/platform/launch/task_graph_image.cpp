#include "platform/launch/task_graph_image.h"

#include "common/align.h"

namespace replayrt {

TaskGraphLayout task_graph_layout(std::uint64_t tasks, std::uint64_t operands,
                                  std::uint64_t edges) noexcept {
  TaskGraphLayout layout;
  layout.tasks = align_up(sizeof(TaskGraphHeader), 16);
  layout.operands = align_up(layout.tasks + tasks * sizeof(TaskRecord), 16);
  layout.successors = align_up(layout.operands + operands * sizeof(OperandRecord), 16);
  layout.total = align_up(layout.successors + edges * sizeof(std::uint32_t), 64);
  return layout;
}

std::uint64_t task_graph_image_bytes(std::uint64_t tasks, std::uint64_t operands,
                                     std::uint64_t edges) noexcept {
  return task_graph_layout(tasks, operands, edges).total;
}

std::uint64_t scheduler_state_bytes(std::uint64_t tasks) noexcept {
  return align_up(scheduler_ready_offset(tasks) + tasks * sizeof(std::uint32_t), 64);
}

}  // namespace replayrt
