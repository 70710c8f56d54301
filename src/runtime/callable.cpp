#include "runtime/callable.h"

#include <algorithm>
#include <utility>

#include "common/align.h"
#include "common/format.h"
#include "common/raw_enum.h"
#include "platform/launch/operand_resolution.h"
#include "platform/launch/task_graph_image.h"
#include "runtime/bind.h"
#include "runtime/callable_views.h"

namespace replayrt {

// A task that prepares is one the executors can resolve, and a kernel that registers is one a
// task can use.
static_assert(Callable::kMaxTensorOperandsPerTask == kMaxTaskTensors);
static_assert(Callable::kMaxScalarOperandsPerTask == kMaxTaskScalars);
static_assert(Callable::kMaxTensorOperandsPerTask ==
              static_cast<std::uint32_t>(KernelRegistry::kMaxDeclaredTensors));
static_assert(Callable::kMaxScalarOperandsPerTask ==
              static_cast<std::uint32_t>(KernelRegistry::kMaxDeclaredScalars));

namespace {

Status invalid(std::string message) {
  return Status::error(RRT_ERR_INVALID_ARGUMENT, std::move(message));
}

// FNV-1a, 64 bit.
class ContentHasher {
 public:
  void add(std::uint64_t value) {
    for (int i = 0; i < 8; ++i) {
      hash_ ^= (value >> (8 * i)) & 0xff;
      hash_ *= 0x100000001b3ULL;
    }
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

Status validate_tensor(const rrt_tensor_desc_t &desc, const char *what, std::uint32_t index,
                       bool is_param, bool reads_space, TensorLayout *out) {
  const std::int32_t dtype = raw_enum(desc.dtype);
  const std::uint64_t element = dtype_bytes(dtype);
  if (element == 0) {
    return invalid(format("%s %u: unknown dtype %d", what, index, dtype));
  }
  if (desc.ndim > RRT_MAX_DIMS) {
    return invalid(
        format("%s %u: %u dimensions (at most %d)", what, index, desc.ndim, RRT_MAX_DIMS));
  }
  const std::int32_t direction = raw_enum(desc.direction);
  if (is_param && direction != RRT_DIR_IN && direction != RRT_DIR_OUT &&
      direction != RRT_DIR_INOUT) {
    return invalid(format("%s %u: unknown direction %d", what, index, direction));
  }
  const std::int32_t space = is_param && reads_space ? raw_enum(desc.space) : RRT_PARAM_SPACE_ANY;
  if (space != RRT_PARAM_SPACE_ANY && space != RRT_PARAM_SPACE_HOST &&
      space != RRT_PARAM_SPACE_DEVICE) {
    return invalid(format("%s %u: unknown space %d", what, index, space));
  }
  std::uint64_t bytes = element;
  for (std::uint32_t d = 0; d < desc.ndim; ++d) {
    const std::uint64_t extent = desc.shape[d];
    if (extent == 0) {
      return invalid(format("%s %u: dimension %u is zero", what, index, d));
    }
    if (extent > Callable::kMaxTensorBytes / bytes) {
      return invalid(format("%s %u: size overflows (more than %llu bytes)", what, index,
                            static_cast<unsigned long long>(Callable::kMaxTensorBytes)));
    }
    bytes *= extent;
  }
  out->dtype = desc.dtype;
  out->ndim = desc.ndim;
  std::copy(desc.shape, desc.shape + desc.ndim, out->shape);
  out->bytes = bytes;
  out->direction = is_param ? desc.direction : RRT_DIR_INOUT;
  out->space = static_cast<rrt_param_space_t>(space);
  return Status::ok();
}

// Tracks, per tensor, the last writer and the readers since, to derive dependencies.
struct TensorHistory {
  std::int64_t last_writer = -1;
  std::vector<std::uint32_t> readers;
  bool written = false;
};

// The data-flow checks of one tensor operand of a kernel that declares its writes: a read
// needs an earlier write (or an IN/INOUT parameter), and a write needs a parameter that is
// not IN.
Status check_declared_access(const Callable &callable, const KernelEntry &kernel,
                             std::uint32_t task, std::uint32_t operand, const TouchedTensor &tensor,
                             const TensorHistory &history, bool writes) {
  if (!writes && !history.written) {
    if (!tensor.is_param) {
      return invalid(
          format("task %u reads intermediate %u before any task writes it", task, tensor.index));
    }
    if (callable.params()[tensor.index].direction == RRT_DIR_OUT) {
      return invalid(
          format("task %u reads OUT param %u before any task writes it", task, tensor.index));
    }
  }
  if (writes && tensor.is_param && callable.params()[tensor.index].direction == RRT_DIR_IN) {
    return invalid(format("task %u operand %u: kernel '%s' writes IN param %u", task, operand,
                          kernel.name.c_str(), tensor.index));
  }
  return Status::ok();
}

}  // namespace

std::uint64_t dtype_bytes(std::int32_t dtype) noexcept {
  switch (dtype) {
    case RRT_DTYPE_F32:
    case RRT_DTYPE_I32:
      return 4;
    case RRT_DTYPE_F16:
    case RRT_DTYPE_BF16:
      return 2;
    case RRT_DTYPE_I64:
      return 8;
    case RRT_DTYPE_U8:
      return 1;
  }
  return 0;
}

Status Callable::create(const rrt_callable_desc_t &desc, const KernelRegistry &kernels,
                        std::unique_ptr<const Callable> *out, UnknownKernels unknown) {
  static const KernelEntry kUndeclaredUserKernel{
      "<user kernel>", nullptr, nullptr, -1, -1, KernelEntry::kWritesEveryTensor};
  const std::int32_t bind = raw_enum(desc.bind);
  if (bind != RRT_BIND_DEVICE_BUILD && bind != RRT_BIND_HOST_BUILD) {
    return invalid(format("unknown bind strategy %d", bind));
  }
  if (desc.num_params > kMaxParams || desc.num_intermediates > kMaxIntermediates ||
      desc.num_scalars > kMaxScalars) {
    return invalid(
        format("callable has %u params, %u intermediates, %u scalars (limits %u, "
               "%u, %u)",
               desc.num_params, desc.num_intermediates, desc.num_scalars, kMaxParams,
               kMaxIntermediates, kMaxScalars));
  }
  if (desc.num_tasks == 0 || desc.num_tasks > kMaxTasks) {
    return invalid(format("callable has %u tasks (1 to %u)", desc.num_tasks, kMaxTasks));
  }
  if ((desc.num_params != 0 && desc.params == nullptr) ||
      (desc.num_intermediates != 0 && desc.intermediates == nullptr) || desc.tasks == nullptr) {
    return invalid("callable descriptor has a null array with a nonzero count");
  }

  std::unique_ptr<Callable> callable(new Callable());
  callable->bind_ = desc.bind;
  callable->num_scalars_ = desc.num_scalars;
  const bool reads_space = reads_abi_1_2_fields(desc);
  callable->params_.resize(desc.num_params);
  for (std::uint32_t i = 0; i < desc.num_params; ++i) {
    RRT_RETURN_IF_ERROR(
        validate_tensor(desc.params[i], "param", i, true, reads_space, &callable->params_[i]));
  }
  callable->intermediates_.resize(desc.num_intermediates);
  callable->intermediate_offsets_.resize(desc.num_intermediates);
  std::uint64_t heap = 0;
  for (std::uint32_t i = 0; i < desc.num_intermediates; ++i) {
    TensorLayout &layout = callable->intermediates_[i];
    RRT_RETURN_IF_ERROR(
        validate_tensor(desc.intermediates[i], "intermediate", i, false, false, &layout));
    heap = align_up(heap, kIntermediateAlignment);
    callable->intermediate_offsets_[i] = heap;
    heap += layout.bytes;
    if (heap > kMaxTensorBytes) {
      return invalid("intermediates need more than 1 TiB of gm_heap");
    }
  }

  // Device values and views (a 1.2 desc only).
  const bool has_views = reads_abi_1_2_fields(desc);
  if (has_views) {
    RRT_RETURN_IF_ERROR(validate_device_values(desc, callable->params_, callable->intermediates_,
                                               &callable->device_values_));
    RRT_RETURN_IF_ERROR(validate_views(desc, callable->params_, callable->intermediates_,
                                       callable->device_values_, &callable->views_));
  }

  // Tasks: operands, arity and data flow.
  const std::uint32_t num_tasks = desc.num_tasks;
  callable->tasks_.resize(num_tasks);
  std::vector<TensorHistory> param_history(desc.num_params);
  std::vector<TensorHistory> intermediate_history(desc.num_intermediates);
  std::vector<std::vector<std::uint32_t>> predecessors(num_tasks);
  std::vector<std::uint32_t> values_read;
  for (std::uint32_t t = 0; t < num_tasks; ++t) {
    const rrt_task_desc_t &task = desc.tasks[t];
    const bool registered = kernels.contains(task.kernel_id);
    if (!registered && (unknown == UnknownKernels::kReject || task.kernel_id < 0)) {
      return invalid(format("task %u: kernel id %d is not registered", t, task.kernel_id));
    }
    const KernelEntry &kernel = registered ? kernels.entry(task.kernel_id) : kUndeclaredUserKernel;
    if (task.num_operands > kMaxOperandsPerTask) {
      return invalid(
          format("task %u: %u operands (at most %u)", t, task.num_operands, kMaxOperandsPerTask));
    }
    if (task.num_operands != 0 && task.operands == nullptr) {
      return invalid(format("task %u: null operand array", t));
    }
    TaskPlan &plan = callable->tasks_[t];
    plan.kernel_id = task.kernel_id;
    plan.first_operand = static_cast<std::uint32_t>(callable->operands_.size());
    for (std::uint32_t o = 0; o < task.num_operands; ++o) {
      const rrt_operand_t &operand = task.operands[o];
      const std::int32_t raw_kind = raw_enum(operand.kind);
      const std::int32_t kind = has_views || raw_kind < RRT_OPERAND_VIEW ? raw_kind : -1;
      switch (kind) {
        case RRT_OPERAND_VIEW:
          if (plan.num_scalars != 0) {
            return invalid(
                format("task %u operand %u: tensor operands must come before scalars", t, o));
          }
          if (operand.index >= callable->views_.size()) {
            return invalid(format("task %u operand %u: view %u out of range (%zu declared)", t, o,
                                  operand.index, callable->views_.size()));
          }
          ++plan.num_tensors;
          break;
        case RRT_OPERAND_DEVICE_VALUE:
          if (operand.index >= callable->device_values_.size()) {
            return invalid(format("task %u operand %u: device value %u out of range (%zu declared)",
                                  t, o, operand.index, callable->device_values_.size()));
          }
          ++plan.num_scalars;
          break;
        case RRT_OPERAND_PARAM:
        case RRT_OPERAND_INTERMEDIATE: {
          if (plan.num_scalars != 0) {
            return invalid(
                format("task %u operand %u: tensor operands must come before scalars", t, o));
          }
          const bool is_param = operand.kind == RRT_OPERAND_PARAM;
          const std::uint32_t limit = is_param ? desc.num_params : desc.num_intermediates;
          if (operand.index >= limit) {
            return invalid(format("task %u operand %u: %s %u out of range (%u declared)", t, o,
                                  is_param ? "param" : "intermediate", operand.index, limit));
          }
          ++plan.num_tensors;
          break;
        }
        case RRT_OPERAND_SCALAR:
          if (operand.index >= desc.num_scalars) {
            return invalid(format("task %u operand %u: scalar %u out of range (%u declared)", t, o,
                                  operand.index, desc.num_scalars));
          }
          ++plan.num_scalars;
          break;
        case RRT_OPERAND_IMMEDIATE:
          ++plan.num_scalars;
          break;
        default:
          return invalid(format("task %u operand %u: unknown operand kind %d", t, o, raw_kind));
      }
      callable->operands_.push_back(OperandRef{operand.kind, operand.index});
    }
    if (plan.num_tensors > kMaxTensorOperandsPerTask) {
      return invalid(format("task %u: %u tensor operands (at most %u)", t, plan.num_tensors,
                            kMaxTensorOperandsPerTask));
    }
    if (plan.num_scalars > kMaxScalarOperandsPerTask) {
      return invalid(format("task %u: %u scalar operands (at most %u)", t, plan.num_scalars,
                            kMaxScalarOperandsPerTask));
    }
    if ((kernel.num_tensors >= 0 &&
         plan.num_tensors != static_cast<std::uint32_t>(kernel.num_tensors)) ||
        (kernel.num_scalars >= 0 &&
         plan.num_scalars != static_cast<std::uint32_t>(kernel.num_scalars))) {
      return invalid(
          format("task %u: kernel '%s' takes %d tensors and %d scalars, the task "
                 "gives %u and %u",
                 t, kernel.name.c_str(), kernel.num_tensors, kernel.num_scalars, plan.num_tensors,
                 plan.num_scalars));
    }

    // Data flow and dependencies.
    std::vector<std::uint32_t> &deps = predecessors[t];
    for (std::uint32_t o = 0; o < plan.num_tensors; ++o) {
      const TouchedTensor tensor =
          touched_tensor(callable->operands_[plan.first_operand + o], callable->views_);
      const bool writes = kernel.writes_tensor(o);
      TensorHistory &history =
          tensor.is_param ? param_history[tensor.index] : intermediate_history[tensor.index];
      if (kernel.declares_operands()) {
        RRT_RETURN_IF_ERROR(
            check_declared_access(*callable, kernel, t, o, tensor, history, writes));
      }
      if (history.last_writer >= 0) {
        deps.push_back(static_cast<std::uint32_t>(history.last_writer));
      }
      if (writes) {
        deps.insert(deps.end(), history.readers.begin(), history.readers.end());
      }
    }
    // The device values the task reads when it runs: reads of their sources.
    values_read.clear();
    device_values_read(std::span<const OperandRef>(callable->operands_)
                           .subspan(plan.first_operand, plan.num_tensors + plan.num_scalars),
                       callable->views_, &values_read);
    for (const std::uint32_t v : values_read) {
      const OperandRef &source = callable->device_values_[v].source;
      const bool is_param = source.kind == RRT_OPERAND_PARAM;
      TensorHistory &history =
          is_param ? param_history[source.index] : intermediate_history[source.index];
      if (!history.written &&
          (!is_param || callable->params_[source.index].direction == RRT_DIR_OUT)) {
        return invalid(format("task %u reads device value %u from %s %u before any task writes it",
                              t, v, is_param ? "OUT param" : "intermediate", source.index));
      }
      if (history.last_writer >= 0) {
        deps.push_back(static_cast<std::uint32_t>(history.last_writer));
      }
    }
    // Record this task's accesses after all its own reads were resolved.
    for (std::uint32_t o = 0; o < plan.num_tensors; ++o) {
      const TouchedTensor tensor =
          touched_tensor(callable->operands_[plan.first_operand + o], callable->views_);
      TensorHistory &history =
          tensor.is_param ? param_history[tensor.index] : intermediate_history[tensor.index];
      if (kernel.writes_tensor(o)) {
        history.last_writer = t;
        history.readers.clear();
        history.written = true;
      } else {
        history.readers.push_back(t);
      }
    }
    for (const std::uint32_t v : values_read) {
      const OperandRef &source = callable->device_values_[v].source;
      (source.kind == RRT_OPERAND_PARAM ? param_history[source.index]
                                        : intermediate_history[source.index])
          .readers.push_back(t);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    deps.erase(std::remove(deps.begin(), deps.end(), t), deps.end());
    plan.num_predecessors = static_cast<std::uint32_t>(deps.size());
  }

  // Successor lists, grouped per task in task order.
  std::vector<std::vector<std::uint32_t>> successors(num_tasks);
  for (std::uint32_t t = 0; t < num_tasks; ++t) {
    for (const std::uint32_t p : predecessors[t]) {
      successors[p].push_back(t);
    }
  }
  for (std::uint32_t t = 0; t < num_tasks; ++t) {
    TaskPlan &plan = callable->tasks_[t];
    plan.first_successor = static_cast<std::uint32_t>(callable->successors_.size());
    plan.num_successors = static_cast<std::uint32_t>(successors[t].size());
    callable->successors_.insert(callable->successors_.end(), successors[t].begin(),
                                 successors[t].end());
  }

  ContentHasher hasher;
  hasher.add(static_cast<std::uint64_t>(desc.bind));
  hasher.add(desc.num_scalars);
  for (const std::vector<TensorLayout> *group : {&callable->params_, &callable->intermediates_}) {
    hasher.add(group->size());
    for (const TensorLayout &layout : *group) {
      hasher.add(static_cast<std::uint64_t>(layout.dtype));
      hasher.add(layout.ndim);
      for (std::uint32_t d = 0; d < layout.ndim; ++d) {
        hasher.add(layout.shape[d]);
      }
      hasher.add(static_cast<std::uint64_t>(layout.direction));
    }
  }
  hasher.add(num_tasks);
  for (const TaskPlan &plan : callable->tasks_) {
    hasher.add(static_cast<std::uint64_t>(static_cast<std::uint32_t>(plan.kernel_id)));
    hasher.add(plan.num_tensors + plan.num_scalars);
    for (std::uint32_t o = 0; o < plan.num_tensors + plan.num_scalars; ++o) {
      const OperandRef &ref = callable->operands_[plan.first_operand + o];
      hasher.add((static_cast<std::uint64_t>(ref.kind) << 32) | ref.index);
    }
  }
  if (!callable->views_.empty() || !callable->device_values_.empty()) {
    hasher.add(callable->device_values_.size());
    for (const DeviceValueLayout &value : callable->device_values_) {
      hasher.add((static_cast<std::uint64_t>(value.source.kind) << 32) | value.source.index);
      hasher.add(value.element);
    }
    hasher.add(callable->views_.size());
    for (const ViewLayout &view : callable->views_) {
      hasher.add((static_cast<std::uint64_t>(view.base.kind) << 32) | view.base.index);
      hasher.add(view.ndim);
      for (std::uint32_t d = 0; d < view.ndim; ++d) {
        hasher.add(view.shape[d]);
      }
      hasher.add(view.byte_offset);
      hasher.add(static_cast<std::uint64_t>(static_cast<std::uint32_t>(view.offset_value)));
      hasher.add(view.offset_stride_bytes);
      hasher.add(view.offset_value_max);
    }
  }
  callable->content_key_ = hasher.value();

  CallableRequirements &needs = callable->requirements_;
  needs.gm_heap = heap;
  needs.scheduler_state = scheduler_state_bytes(num_tasks);
  needs.image =
      task_graph_image_bytes(num_tasks, callable->operands_.size(), callable->successors_.size(),
                             callable->views_.size(), callable->device_values_.size());
  for (const TensorLayout &param : callable->params_) {
    if (param.space != RRT_PARAM_SPACE_DEVICE) {
      needs.staged_all_host += staging_slice_bytes(param.bytes);
    }
  }
  *out = std::move(callable);
  return Status::ok();
}

}  // namespace replayrt
