#include "runtime/task_graph_builder.h"

#include <cstring>

#include "common/format.h"
#include "runtime/callable.h"

namespace replayrt {

namespace {
template <class T>
void store(std::span<std::byte> out, std::uint64_t offset, const T &value) {
  std::memcpy(out.data() + offset, &value, sizeof(T));
}
}  // namespace

Status build_task_graph_image(const Callable &callable, const ImageBinding &binding,
                              std::span<std::byte> out) {
  const auto tasks = callable.tasks();
  const auto operands = callable.operands();
  const auto successors = callable.successors();
  const auto views = callable.views();
  const auto device_values = callable.device_values();
  const TaskGraphLayout layout = task_graph_layout(tasks.size(), operands.size(), successors.size(),
                                                   views.size(), device_values.size());
  if (out.size() != layout.total) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("image buffer of %zu bytes, the image needs %llu", out.size(),
                                static_cast<unsigned long long>(layout.total)));
  }
  std::memset(out.data(), 0, out.size());
  TaskGraphHeader header{};
  header.magic = kTaskGraphMagic;
  header.version = kTaskGraphVersion;
  header.callable_id = binding.callable_id;
  header.num_tasks = static_cast<std::uint32_t>(tasks.size());
  header.generation = binding.generation;
  header.num_params = static_cast<std::uint32_t>(callable.params().size());
  header.num_scalars = callable.num_scalars();
  header.num_operands = static_cast<std::uint32_t>(operands.size());
  header.num_edges = static_cast<std::uint32_t>(successors.size());
  header.content_key = callable.content_key();
  header.image_bytes = layout.total;
  header.tasks_offset = layout.tasks;
  header.operands_offset = layout.operands;
  header.successors_offset = layout.successors;
  header.scheduler_state = reinterpret_cast<std::uint64_t>(binding.scheduler_state);
  header.scheduler_seed = reinterpret_cast<std::uint64_t>(binding.scheduler_seed);
  header.num_views = static_cast<std::uint32_t>(views.size());
  header.num_device_values = static_cast<std::uint32_t>(device_values.size());
  header.views_offset = layout.views;
  header.device_values_offset = layout.device_values;
  store(out, 0, header);

  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const TaskPlan &plan = tasks[t];
    const TaskRecord record{
        plan.kernel_id,       plan.first_operand,  plan.num_tensors,      plan.num_scalars,
        plan.first_successor, plan.num_successors, plan.num_predecessors, 0};
    store(out, layout.tasks + t * sizeof(TaskRecord), record);
  }
  const auto intermediates = callable.intermediates();
  const auto offsets = callable.intermediate_offsets();
  const auto heap = reinterpret_cast<std::uint64_t>(binding.gm_heap);
  for (std::size_t o = 0; o < operands.size(); ++o) {
    const OperandRef &ref = operands[o];
    OperandRecord record{};
    record.index = ref.index;
    switch (ref.kind) {
      case RRT_OPERAND_PARAM:
        record.kind = static_cast<std::uint32_t>(ImageOperandKind::kParam);
        break;
      case RRT_OPERAND_INTERMEDIATE:
        record.kind = static_cast<std::uint32_t>(ImageOperandKind::kBaked);
        record.value = heap + offsets[ref.index];
        record.bytes = intermediates[ref.index].bytes;
        break;
      case RRT_OPERAND_SCALAR:
        record.kind = static_cast<std::uint32_t>(ImageOperandKind::kScalar);
        break;
      case RRT_OPERAND_IMMEDIATE:
        record.kind = static_cast<std::uint32_t>(ImageOperandKind::kImmediate);
        record.value = ref.index;
        break;
      case RRT_OPERAND_VIEW:
        record.kind = static_cast<std::uint32_t>(ImageOperandKind::kView);
        record.bytes = views[ref.index].bytes;
        break;
      case RRT_OPERAND_DEVICE_VALUE:
        record.kind = static_cast<std::uint32_t>(ImageOperandKind::kDeviceValue);
        break;
    }
    store(out, layout.operands + o * sizeof(OperandRecord), record);
  }
  // Where a view's base or a device value's source lives: a param in the payload, or an
  // intermediate baked in.
  const auto place = [&](const OperandRef &tensor, std::uint32_t *source, std::uint32_t *index,
                         std::uint64_t *address, std::uint64_t *bytes) {
    *index = tensor.index;
    if (tensor.kind == RRT_OPERAND_PARAM) {
      *source = static_cast<std::uint32_t>(ImageTensorSource::kParam);
      return;
    }
    *source = static_cast<std::uint32_t>(ImageTensorSource::kBaked);
    *address = heap + offsets[tensor.index];
    *bytes = intermediates[tensor.index].bytes;
  };
  for (std::size_t v = 0; v < views.size(); ++v) {
    const ViewLayout &view = views[v];
    ViewRecord record{};
    place(view.base, &record.source, &record.index, &record.address, &record.base_bytes);
    record.byte_offset = view.byte_offset;
    record.bytes = view.bytes;
    record.offset_value = view.offset_value;
    record.offset_stride_bytes = view.offset_stride_bytes;
    record.offset_value_max = view.offset_value_max;
    store(out, layout.views + v * sizeof(ViewRecord), record);
  }
  for (std::size_t v = 0; v < device_values.size(); ++v) {
    const DeviceValueLayout &value = device_values[v];
    DeviceValueRecord record{};
    place(value.source, &record.source, &record.index, &record.address, &record.base_bytes);
    record.element = value.element;
    record.dtype = static_cast<std::uint32_t>(value.dtype);
    store(out, layout.device_values + v * sizeof(DeviceValueRecord), record);
  }
  if (!successors.empty()) {
    std::memcpy(out.data() + layout.successors, successors.data(),
                successors.size() * sizeof(std::uint32_t));
  }
  return Status::ok();
}

Status build_scheduler_seed(const Callable &callable, std::uint64_t generation,
                            std::span<std::byte> out) {
  const auto tasks = callable.tasks();
  if (out.size() != scheduler_state_bytes(tasks.size())) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "scheduler seed buffer has the wrong size");
  }
  std::memset(out.data(), 0, out.size());
  const std::uint64_t remaining = scheduler_remaining_offset();
  const std::uint64_t ready = scheduler_ready_offset(tasks.size());
  std::uint32_t roots = 0;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    store(out, remaining + t * sizeof(std::uint32_t), tasks[t].num_predecessors);
    store(out, ready + t * sizeof(std::uint32_t), kEmptyReadySlot);
  }
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    if (tasks[t].num_predecessors == 0) {
      store(out, ready + roots * sizeof(std::uint32_t), static_cast<std::uint32_t>(t));
      ++roots;
    }
  }
  SchedulerStateHeader header{};
  header.next_push = roots;
  header.failed_task = -1;
  header.generation = generation;
  store(out, 0, header);
  return Status::ok();
}

}  // namespace replayrt
