// A task-graph image in host memory, decoded and checked once (an executor's prepare step).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/status.h"
#include "platform/launch/task_graph_image.h"

namespace replayrt {

// The sections of a checked image. The spans point into the image's bytes, which must outlive
// the view.
struct TaskGraphView {
  TaskGraphHeader header{};
  std::span<const TaskRecord> tasks;
  std::span<const OperandRecord> operands;
  std::span<const std::uint32_t> successors;
  std::span<const ViewRecord> views;
  std::span<const DeviceValueRecord> device_values;
};

// Decodes `image` (8-byte aligned) into `out`, checking that it is one: magic and version, a
// size and section offsets that are those its counts give, every task's operand range inside
// the operands and its successor range inside the edges, and every successor a later task
// (program order is then a topological order). RRT_ERR_INVALID_ARGUMENT naming the first
// violation; *out is unchanged then.
Status view_task_graph(std::span<const std::byte> image, TaskGraphView *out);

}  // namespace replayrt
