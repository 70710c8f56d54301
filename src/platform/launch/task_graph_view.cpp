#include "platform/launch/task_graph_view.h"

#include <cstring>

#include "common/format.h"

namespace replayrt {

namespace {

Status malformed(const std::string &what) {
  return Status::error(RRT_ERR_INVALID_ARGUMENT, "malformed task-graph image: " + what);
}

template <typename T>
std::span<const T> section(std::span<const std::byte> image, std::uint64_t offset,
                           std::uint64_t count) {
  return {reinterpret_cast<const T *>(image.data() + offset), static_cast<std::size_t>(count)};
}

}  // namespace

Status view_task_graph(std::span<const std::byte> image, TaskGraphView *out) {
  TaskGraphHeader header{};
  if (image.size() < sizeof header || reinterpret_cast<std::uintptr_t>(image.data()) % 8 != 0) {
    return malformed(format("%zu bytes, or not 8-byte aligned", image.size()));
  }
  std::memcpy(&header, image.data(), sizeof header);
  if (header.magic != kTaskGraphMagic || header.version != kTaskGraphVersion) {
    return malformed(format("magic 0x%08x version %u", header.magic, header.version));
  }
  if (!task_graph_layout_matches(header) || header.image_bytes != image.size()) {
    return malformed(
        format("its sections or its size (%llu of %zu bytes) are not those its "
               "counts give",
               static_cast<unsigned long long>(header.image_bytes), image.size()));
  }
  const TaskGraphLayout layout = task_graph_layout(header);
  TaskGraphView view;
  view.header = header;
  view.tasks = section<TaskRecord>(image, layout.tasks, header.num_tasks);
  view.operands = section<OperandRecord>(image, layout.operands, header.num_operands);
  view.successors = section<std::uint32_t>(image, layout.successors, header.num_edges);
  view.views = section<ViewRecord>(image, layout.views, header.num_views);
  view.device_values =
      section<DeviceValueRecord>(image, layout.device_values, header.num_device_values);
  for (std::uint32_t t = 0; t < header.num_tasks; ++t) {
    const TaskRecord &task = view.tasks[t];
    const std::uint64_t operands = std::uint64_t{task.num_tensors} + task.num_scalars;
    if (task.first_operand > header.num_operands ||
        operands > header.num_operands - task.first_operand) {
      return malformed(format("task %u's operands lie outside the image", t));
    }
    if (task.first_successor > header.num_edges ||
        task.num_successors > header.num_edges - task.first_successor) {
      return malformed(format("task %u's successors lie outside the image", t));
    }
    for (std::uint32_t s = 0; s < task.num_successors; ++s) {
      const std::uint32_t next = view.successors[task.first_successor + s];
      if (next <= t || next >= header.num_tasks) {
        return malformed(
            format("task %u has successor %u: program order is not a topological order", t, next));
      }
    }
  }
  *out = view;
  return Status::ok();
}

}  // namespace replayrt
