#include "runtime/callable.h"

#include <algorithm>
#include <utility>

#include "common/align.h"
#include "common/format.h"
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

// Lays out tensor `index` of a group named `what`: its byte size, checked.
Status lay_out_tensor(const TensorSpec &spec, const char *what, std::uint32_t index,
                      TensorLayout *out) {
  std::uint64_t bytes = dtype_bytes(spec.dtype);
  for (std::uint32_t d = 0; d < spec.ndim; ++d) {
    const std::uint64_t extent = spec.shape[d];
    if (extent == 0) {
      return Status::invalid_argument(format("%s %u: dimension %u is zero", what, index, d));
    }
    if (extent > Callable::kMaxTensorBytes / bytes) {
      return Status::invalid_argument(
          format("%s %u: size overflows (more than %llu bytes)", what, index,
                 static_cast<unsigned long long>(Callable::kMaxTensorBytes)));
    }
    bytes *= extent;
  }
  out->dtype = spec.dtype;
  out->ndim = spec.ndim;
  std::copy(spec.shape.begin(), spec.shape.begin() + spec.ndim, out->shape);
  out->bytes = bytes;
  out->direction = spec.direction;
  out->space = spec.space;
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
      return Status::invalid_argument(
          format("task %u reads intermediate %u before any task writes it", task, tensor.index));
    }
    if (callable.params()[tensor.index].direction == RRT_DIR_OUT) {
      return Status::invalid_argument(
          format("task %u reads OUT param %u before any task writes it", task, tensor.index));
    }
  }
  if (writes && tensor.is_param && callable.params()[tensor.index].direction == RRT_DIR_IN) {
    return Status::invalid_argument(format("task %u operand %u: kernel '%s' writes IN param %u",
                                           task, operand, kernel.name.c_str(), tensor.index));
  }
  return Status::ok();
}

// Sets *out to the kernel task t runs: its registry entry, or an undeclared user kernel.
Status find_kernel(const KernelRegistry &kernels, Callable::UnknownKernels unknown,
                   const TaskSpec &task, std::uint32_t t, const KernelEntry **out) {
  static const KernelEntry kUndeclaredUserKernel{
      "<user kernel>", nullptr, nullptr, -1, -1, KernelEntry::kWritesEveryTensor};
  const bool registered = kernels.contains(task.kernel_id);
  if (!registered && (unknown == Callable::UnknownKernels::kReject || task.kernel_id < 0)) {
    return Status::invalid_argument(
        format("task %u: kernel id %d is not registered", t, task.kernel_id));
  }
  *out = registered ? &kernels.entry(task.kernel_id) : &kUndeclaredUserKernel;
  return Status::ok();
}

// Checks task t's tensor and scalar operand counts against the executors' limits and its kernel.
Status check_operand_counts(const TaskPlan &plan, std::uint32_t t, const KernelEntry &kernel) {
  if (plan.num_tensors > Callable::kMaxTensorOperandsPerTask) {
    return Status::invalid_argument(format("task %u: %u tensor operands (at most %u)", t,
                                           plan.num_tensors, Callable::kMaxTensorOperandsPerTask));
  }
  if (plan.num_scalars > Callable::kMaxScalarOperandsPerTask) {
    return Status::invalid_argument(format("task %u: %u scalar operands (at most %u)", t,
                                           plan.num_scalars, Callable::kMaxScalarOperandsPerTask));
  }
  if ((kernel.num_tensors >= 0 &&
       plan.num_tensors != static_cast<std::uint32_t>(kernel.num_tensors)) ||
      (kernel.num_scalars >= 0 &&
       plan.num_scalars != static_cast<std::uint32_t>(kernel.num_scalars))) {
    return Status::invalid_argument(
        format("task %u: kernel '%s' takes %d tensors and %d scalars, the task "
               "gives %u and %u",
               t, kernel.name.c_str(), kernel.num_tensors, kernel.num_scalars, plan.num_tensors,
               plan.num_scalars));
  }
  return Status::ok();
}

// Checks data flow and derives dependencies one task at a time, in task order.
class TaskOrdering {
 public:
  TaskOrdering(const Callable &callable, std::uint32_t num_params, std::uint32_t num_intermediates)
      : callable_(callable), params_(num_params), intermediates_(num_intermediates) {}

  // Checks task t's data flow, appends its dependencies to *deps (sorted, unique), records it.
  Status order(std::uint32_t t, const KernelEntry &kernel, std::vector<std::uint32_t> *deps);

 private:
  TensorHistory &history_of(bool is_param, std::uint32_t index) {
    return is_param ? params_[index] : intermediates_[index];
  }
  Status depend_on_tensor_operands(std::uint32_t t, const KernelEntry &kernel,
                                   std::vector<std::uint32_t> *deps);
  Status depend_on_device_values(std::uint32_t t, std::vector<std::uint32_t> *deps);
  void record_accesses(std::uint32_t t, const KernelEntry &kernel);

  const Callable &callable_;
  std::vector<TensorHistory> params_;
  std::vector<TensorHistory> intermediates_;
  std::vector<std::uint32_t> values_read_;  // the device values of the task being ordered
};

Status TaskOrdering::order(std::uint32_t t, const KernelEntry &kernel,
                           std::vector<std::uint32_t> *deps) {
  RRT_RETURN_IF_ERROR(depend_on_tensor_operands(t, kernel, deps));
  RRT_RETURN_IF_ERROR(depend_on_device_values(t, deps));
  // Record this task's accesses after all its own reads were resolved.
  record_accesses(t, kernel);
  std::sort(deps->begin(), deps->end());
  deps->erase(std::unique(deps->begin(), deps->end()), deps->end());
  deps->erase(std::remove(deps->begin(), deps->end(), t), deps->end());
  return Status::ok();
}

// Checks the data flow of task t's tensor operands and appends the tasks they order it after.
Status TaskOrdering::depend_on_tensor_operands(std::uint32_t t, const KernelEntry &kernel,
                                               std::vector<std::uint32_t> *deps) {
  const TaskPlan &plan = callable_.tasks()[t];
  for (std::uint32_t o = 0; o < plan.num_tensors; ++o) {
    const TouchedTensor tensor =
        touched_tensor(callable_.operands()[plan.first_operand + o], callable_.views());
    const bool writes = kernel.writes_tensor(o);
    TensorHistory &history = history_of(tensor.is_param, tensor.index);
    if (kernel.declares_operands()) {
      RRT_RETURN_IF_ERROR(check_declared_access(callable_, kernel, t, o, tensor, history, writes));
    }
    if (history.last_writer >= 0) {
      deps->push_back(static_cast<std::uint32_t>(history.last_writer));
    }
    if (writes) {
      deps->insert(deps->end(), history.readers.begin(), history.readers.end());
    }
  }
  return Status::ok();
}

// Checks that task t's device values read written sources and appends the sources' last writers.
Status TaskOrdering::depend_on_device_values(std::uint32_t t, std::vector<std::uint32_t> *deps) {
  const TaskPlan &plan = callable_.tasks()[t];
  values_read_.clear();
  device_values_read(
      callable_.operands().subspan(plan.first_operand, plan.num_tensors + plan.num_scalars),
      callable_.views(), &values_read_);
  for (const std::uint32_t v : values_read_) {
    const OperandRef &source = callable_.device_values()[v].source;
    const bool is_param = source.kind == RRT_OPERAND_PARAM;
    TensorHistory &history = history_of(is_param, source.index);
    if (!history.written &&
        (!is_param || callable_.params()[source.index].direction == RRT_DIR_OUT)) {
      return Status::invalid_argument(
          format("task %u reads device value %u from %s %u before any task writes it", t, v,
                 is_param ? "OUT param" : "intermediate", source.index));
    }
    if (history.last_writer >= 0) {
      deps->push_back(static_cast<std::uint32_t>(history.last_writer));
    }
  }
  return Status::ok();
}

// Records task t's tensor writes and reads and its device-value reads as the latest accesses.
void TaskOrdering::record_accesses(std::uint32_t t, const KernelEntry &kernel) {
  const TaskPlan &plan = callable_.tasks()[t];
  for (std::uint32_t o = 0; o < plan.num_tensors; ++o) {
    const TouchedTensor tensor =
        touched_tensor(callable_.operands()[plan.first_operand + o], callable_.views());
    TensorHistory &history = history_of(tensor.is_param, tensor.index);
    if (kernel.writes_tensor(o)) {
      history.last_writer = t;
      history.readers.clear();
      history.written = true;
    } else {
      history.readers.push_back(t);
    }
  }
  for (const std::uint32_t v : values_read_) {
    const OperandRef &source = callable_.device_values()[v].source;
    history_of(source.kind == RRT_OPERAND_PARAM, source.index).readers.push_back(t);
  }
}

// Adds the count and the dtype, shape and direction of every tensor in `group` to *hasher.
void hash_tensors(std::span<const TensorLayout> group, ContentHasher *hasher) {
  hasher->add(group.size());
  for (const TensorLayout &layout : group) {
    hasher->add(static_cast<std::uint64_t>(layout.dtype));
    hasher->add(layout.ndim);
    for (std::uint32_t d = 0; d < layout.ndim; ++d) {
      hasher->add(layout.shape[d]);
    }
    hasher->add(static_cast<std::uint64_t>(layout.direction));
  }
}

// Adds the task count and every task's kernel and operands to *hasher.
void hash_tasks(const Callable &callable, ContentHasher *hasher) {
  hasher->add(callable.tasks().size());
  for (const TaskPlan &plan : callable.tasks()) {
    hasher->add(static_cast<std::uint64_t>(static_cast<std::uint32_t>(plan.kernel_id)));
    hasher->add(plan.num_tensors + plan.num_scalars);
    for (std::uint32_t o = 0; o < plan.num_tensors + plan.num_scalars; ++o) {
      const OperandRef &ref = callable.operands()[plan.first_operand + o];
      hasher->add((static_cast<std::uint64_t>(ref.kind) << 32) | ref.index);
    }
  }
}

// Adds the device values and the views to *hasher (nothing when the callable has neither).
void hash_views_and_device_values(const Callable &callable, ContentHasher *hasher) {
  if (callable.views().empty() && callable.device_values().empty()) {
    return;
  }
  hasher->add(callable.device_values().size());
  for (const DeviceValueLayout &value : callable.device_values()) {
    hasher->add((static_cast<std::uint64_t>(value.source.kind) << 32) | value.source.index);
    hasher->add(value.element);
  }
  hasher->add(callable.views().size());
  for (const ViewLayout &view : callable.views()) {
    hasher->add((static_cast<std::uint64_t>(view.base.kind) << 32) | view.base.index);
    hasher->add(view.ndim);
    for (std::uint32_t d = 0; d < view.ndim; ++d) {
      hasher->add(view.shape[d]);
    }
    hasher->add(view.byte_offset);
    hasher->add(static_cast<std::uint64_t>(static_cast<std::uint32_t>(view.offset_value)));
    hasher->add(view.offset_stride_bytes);
    hasher->add(view.offset_value_max);
  }
}

// The callable's content key: FNV-1a over everything that shapes its image.
std::uint64_t hash_content(const Callable &callable) {
  ContentHasher hasher;
  hasher.add(static_cast<std::uint64_t>(callable.bind()));
  hasher.add(callable.num_scalars());
  hash_tensors(callable.params(), &hasher);
  hash_tensors(callable.intermediates(), &hasher);
  hash_tasks(callable, &hasher);
  hash_views_and_device_values(callable, &hasher);
  return hasher.value();
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

Status Callable::create(const CallableSpec &spec, const KernelRegistry &kernels,
                        std::unique_ptr<const Callable> *out, UnknownKernels unknown) {
  std::unique_ptr<Callable> callable(new Callable());
  callable->bind_ = spec.bind;
  callable->num_scalars_ = spec.num_scalars;
  RRT_RETURN_IF_ERROR(callable->lay_out_params(spec));
  RRT_RETURN_IF_ERROR(callable->lay_out_intermediates(spec));
  RRT_RETURN_IF_ERROR(callable->lay_out_views_and_device_values(spec));
  std::vector<std::vector<std::uint32_t>> predecessors;
  RRT_RETURN_IF_ERROR(callable->plan_tasks(spec, kernels, unknown, &predecessors));
  callable->link_successors(predecessors);
  callable->content_key_ = hash_content(*callable);
  callable->size_requirements();
  *out = std::move(callable);
  return Status::ok();
}

// Checks and sizes the parameters into params_.
Status Callable::lay_out_params(const CallableSpec &spec) {
  params_.resize(spec.params.size());
  for (std::uint32_t i = 0; i < spec.params.size(); ++i) {
    RRT_RETURN_IF_ERROR(lay_out_tensor(spec.params[i], "param", i, &params_[i]));
  }
  return Status::ok();
}

// Checks and sizes the intermediates into intermediates_ and lays them out in gm_heap, one by
// one.
Status Callable::lay_out_intermediates(const CallableSpec &spec) {
  intermediates_.resize(spec.intermediates.size());
  intermediate_offsets_.resize(spec.intermediates.size());
  std::uint64_t heap = 0;
  for (std::uint32_t i = 0; i < spec.intermediates.size(); ++i) {
    TensorLayout &layout = intermediates_[i];
    RRT_RETURN_IF_ERROR(lay_out_tensor(spec.intermediates[i], "intermediate", i, &layout));
    heap = align_up(heap, kIntermediateAlignment);
    intermediate_offsets_[i] = heap;
    heap += layout.bytes;
    if (heap > kMaxTensorBytes) {
      return Status::invalid_argument("intermediates need more than 1 TiB of gm_heap");
    }
  }
  requirements_.gm_heap = heap;
  return Status::ok();
}

// Checks the device values and views against the tensors into device_values_ and views_.
Status Callable::lay_out_views_and_device_values(const CallableSpec &spec) {
  RRT_RETURN_IF_ERROR(
      validate_device_values(spec.device_values, params_, intermediates_, &device_values_));
  return validate_views(spec.views, params_, intermediates_, device_values_, &views_);
}

// Checks the tasks in task order, with their data flow, into tasks_ and *predecessors (per task).
Status Callable::plan_tasks(const CallableSpec &spec, const KernelRegistry &kernels,
                            UnknownKernels unknown,
                            std::vector<std::vector<std::uint32_t>> *predecessors) {
  const auto num_tasks = static_cast<std::uint32_t>(spec.tasks.size());
  tasks_.resize(num_tasks);
  predecessors->resize(num_tasks);
  TaskOrdering ordering(*this, static_cast<std::uint32_t>(params_.size()),
                        static_cast<std::uint32_t>(intermediates_.size()));
  for (std::uint32_t t = 0; t < num_tasks; ++t) {
    const KernelEntry *kernel = nullptr;
    RRT_RETURN_IF_ERROR(find_kernel(kernels, unknown, spec.tasks[t], t, &kernel));
    RRT_RETURN_IF_ERROR(plan_task_operands(spec, t));
    RRT_RETURN_IF_ERROR(check_operand_counts(tasks_[t], t, *kernel));
    std::vector<std::uint32_t> &deps = (*predecessors)[t];
    RRT_RETURN_IF_ERROR(ordering.order(t, *kernel, &deps));
    tasks_[t].num_predecessors = static_cast<std::uint32_t>(deps.size());
  }
  return Status::ok();
}

// Appends task t's operands to operands_ and sets its plan's kernel, first operand and counts.
Status Callable::plan_task_operands(const CallableSpec &spec, std::uint32_t t) {
  const TaskSpec &task = spec.tasks[t];
  TaskPlan &plan = tasks_[t];
  plan.kernel_id = task.kernel_id;
  plan.first_operand = static_cast<std::uint32_t>(operands_.size());
  for (std::uint32_t o = 0; o < task.operands.size(); ++o) {
    RRT_RETURN_IF_ERROR(count_operand(spec, t, o));
    operands_.push_back(task.operands[o]);
  }
  return Status::ok();
}

// Checks operand o of task t (index, tensors before scalars) and counts it in the plan.
Status Callable::count_operand(const CallableSpec &spec, std::uint32_t t, std::uint32_t o) {
  const OperandRef &operand = spec.tasks[t].operands[o];
  TaskPlan &plan = tasks_[t];
  switch (operand.kind) {
    case RRT_OPERAND_VIEW:
      if (plan.num_scalars != 0) {
        return Status::invalid_argument(
            format("task %u operand %u: tensor operands must come before scalars", t, o));
      }
      if (operand.index >= views_.size()) {
        return Status::invalid_argument(
            format("task %u operand %u: view %u out of range (%zu declared)", t, o, operand.index,
                   views_.size()));
      }
      ++plan.num_tensors;
      break;
    case RRT_OPERAND_DEVICE_VALUE:
      if (operand.index >= device_values_.size()) {
        return Status::invalid_argument(
            format("task %u operand %u: device value %u out of range (%zu declared)", t, o,
                   operand.index, device_values_.size()));
      }
      ++plan.num_scalars;
      break;
    case RRT_OPERAND_PARAM:
    case RRT_OPERAND_INTERMEDIATE: {
      if (plan.num_scalars != 0) {
        return Status::invalid_argument(
            format("task %u operand %u: tensor operands must come before scalars", t, o));
      }
      const bool is_param = operand.kind == RRT_OPERAND_PARAM;
      const std::size_t limit = is_param ? params_.size() : intermediates_.size();
      if (operand.index >= limit) {
        return Status::invalid_argument(
            format("task %u operand %u: %s %u out of range (%zu declared)", t, o,
                   is_param ? "param" : "intermediate", operand.index, limit));
      }
      ++plan.num_tensors;
      break;
    }
    case RRT_OPERAND_SCALAR:
      if (operand.index >= spec.num_scalars) {
        return Status::invalid_argument(
            format("task %u operand %u: scalar %u out of range (%u declared)", t, o, operand.index,
                   spec.num_scalars));
      }
      ++plan.num_scalars;
      break;
    case RRT_OPERAND_IMMEDIATE:
      ++plan.num_scalars;
      break;
  }
  return Status::ok();
}

// Fills successors_, grouped per task in task order, and each plan's successor range.
void Callable::link_successors(const std::vector<std::vector<std::uint32_t>> &predecessors) {
  std::vector<std::vector<std::uint32_t>> successors(tasks_.size());
  for (std::uint32_t t = 0; t < tasks_.size(); ++t) {
    for (const std::uint32_t p : predecessors[t]) {
      successors[p].push_back(t);
    }
  }
  for (std::uint32_t t = 0; t < tasks_.size(); ++t) {
    TaskPlan &plan = tasks_[t];
    plan.first_successor = static_cast<std::uint32_t>(successors_.size());
    plan.num_successors = static_cast<std::uint32_t>(successors[t].size());
    successors_.insert(successors_.end(), successors[t].begin(), successors[t].end());
  }
}

// Sets the scheduler-state, image and all-HOST staging bytes of requirements_.
void Callable::size_requirements() {
  CallableRequirements &needs = requirements_;
  needs.scheduler_state = scheduler_state_bytes(tasks_.size());
  needs.image = task_graph_image_bytes(tasks_.size(), operands_.size(), successors_.size(),
                                       views_.size(), device_values_.size());
  for (const TensorLayout &param : params_) {
    if (param.space != RRT_PARAM_SPACE_DEVICE) {
      needs.staged_all_host += staging_slice_bytes(param.bytes);
    }
  }
}

}  // namespace replayrt
