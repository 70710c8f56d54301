#include "platform/launch/task_graph_image.h"

#include "common/align.h"

namespace replayrt {

TaskGraphLayout task_graph_layout(std::uint64_t tasks, std::uint64_t operands, std::uint64_t edges,
                                  std::uint64_t views, std::uint64_t device_values) noexcept {
  TaskGraphLayout layout;
  layout.tasks = align_up(sizeof(TaskGraphHeader), 16);
  layout.operands = align_up(layout.tasks + tasks * sizeof(TaskRecord), 16);
  layout.successors = align_up(layout.operands + operands * sizeof(OperandRecord), 16);
  layout.views = align_up(layout.successors + edges * sizeof(std::uint32_t), 16);
  layout.device_values = align_up(layout.views + views * sizeof(ViewRecord), 16);
  layout.total = align_up(layout.device_values + device_values * sizeof(DeviceValueRecord), 64);
  return layout;
}

std::uint64_t task_graph_image_bytes(std::uint64_t tasks, std::uint64_t operands,
                                     std::uint64_t edges, std::uint64_t views,
                                     std::uint64_t device_values) noexcept {
  return task_graph_layout(tasks, operands, edges, views, device_values).total;
}

TaskGraphLayout task_graph_layout(const TaskGraphHeader &header) noexcept {
  return task_graph_layout(header.num_tasks, header.num_operands, header.num_edges,
                           header.num_views, header.num_device_values);
}

bool task_graph_layout_matches(const TaskGraphHeader &header) noexcept {
  const TaskGraphLayout layout = task_graph_layout(header);
  return header.tasks_offset == layout.tasks && header.operands_offset == layout.operands &&
         header.successors_offset == layout.successors && header.views_offset == layout.views &&
         header.device_values_offset == layout.device_values && header.image_bytes == layout.total;
}

std::uint64_t scheduler_state_bytes(std::uint64_t tasks) noexcept {
  return align_up(scheduler_ready_offset(tasks) + tasks * sizeof(std::uint32_t), 64);
}

}  // namespace replayrt
