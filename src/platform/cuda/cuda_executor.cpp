#include "platform/cuda/cuda_executor.h"

#include <cstring>
#include <vector>

#include "common/format.h"
#include "platform/cuda/builtin_launchers.h"
#include "platform/cuda/cuda_status.h"
#include "platform/launch/builtin_kernels.h"
#include "platform/launch/invocation_header.h"
#include "platform/launch/operand_resolution.h"
#include "platform/launch/profile_records.h"
#include "platform/launch/task_graph_view.h"

namespace replayrt::cuda {

namespace {

constexpr float kCheckedDeviceScalar = 1.0F;

class CudaExecutable final : public PreparedExecutable {
 public:
  std::vector<std::uint64_t> storage;  // the image's bytes, 8-byte aligned
  TaskGraphView view;
  // Each task's predecessors: predecessors[predecessor_start[t] .. predecessor_start[t + 1]).
  std::vector<std::uint32_t> predecessor_start;
  std::vector<std::uint32_t> predecessors;
  std::vector<std::uint32_t> sinks;  // the tasks without successors
};

// Nodes of a capture and the edge data of the edges a node after them would take from each.
struct CaptureDependencies {
  std::vector<cudaGraphNode_t> nodes;
  std::vector<cudaGraphEdgeData> edges;

  void clear() noexcept {
    nodes.clear();
    edges.clear();
  }
  std::size_t size() const noexcept { return nodes.size(); }
  // Appends entries [first, last) of `from`.
  void append(const CaptureDependencies &from, std::size_t first, std::size_t last) {
    const auto begin = static_cast<std::ptrdiff_t>(first);
    const auto end = static_cast<std::ptrdiff_t>(last);
    nodes.insert(nodes.end(), from.nodes.begin() + begin, from.nodes.begin() + end);
    edges.insert(edges.end(), from.edges.begin() + begin, from.edges.begin() + end);
  }
};

// A launch's working memory, kept per thread between launches.
struct Scratch {
  std::vector<std::uint64_t> invocation;
  std::vector<ResolvedOperands> resolved;
  std::vector<const void *> referenced;
  // While capturing: the capture's dependencies when the launch began, and each task's last
  // nodes: terminal[terminal_start[t] .. terminal_start[t + 1]). Each list keeps the edge data
  // of its nodes' outgoing edges beside it (a programmatic dependency, say; zeros: a default
  // edge).
  CaptureDependencies entry;
  std::vector<std::size_t> terminal_start;
  CaptureDependencies terminal;
  CaptureDependencies dependencies;
};

// One Scratch per nesting depth of enqueue() on this thread (a native launcher may launch).
class ScratchLease {
 public:
  ScratchLease() {
    if (t_pool.size() <= t_depth) {
      t_pool.push_back(std::make_unique<Scratch>());
    }
    scratch_ = t_pool[t_depth].get();
    ++t_depth;
  }
  ~ScratchLease() { --t_depth; }
  ScratchLease(const ScratchLease &) = delete;
  ScratchLease &operator=(const ScratchLease &) = delete;
  Scratch &operator*() const noexcept { return *scratch_; }

 private:
  static thread_local std::vector<std::unique_ptr<Scratch>> t_pool;
  static thread_local std::size_t t_depth;
  Scratch *scratch_;
};
thread_local std::vector<std::unique_ptr<Scratch>> ScratchLease::t_pool;
thread_local std::size_t ScratchLease::t_depth = 0;

// What went wrong inside a piece of native work, for the executor's message.
struct WorkFailure {
  enum class Kind { kNone, kLauncher, kCuda } kind = Kind::kNone;
  int code = 0;
  cudaError_t error = cudaSuccess;
  const char *call = "";
};

// Copies the capture's current dependencies of `stream`, with their edge data, to the end of
// `out`. The edge data is always asked for: without it, a capture whose dependencies carry any
// fails the query (cudaErrorLossyQuery).
cudaError_t append_dependencies(const CudaApi &api, cudaStream_t stream, CaptureDependencies *out) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t *nodes = nullptr;
  const cudaGraphEdgeData *edges = nullptr;
  std::size_t count = 0;
  const cudaError_t error =
      api.stream_get_capture_info(stream, &status, nullptr, nullptr, &nodes, &edges, &count);
  if (error == cudaSuccess && count != 0) {
    out->nodes.insert(out->nodes.end(), nodes, nodes + count);
    if (edges != nullptr) {
      out->edges.insert(out->edges.end(), edges, edges + count);
    } else {
      out->edges.resize(out->edges.size() + count, cudaGraphEdgeData{});
    }
  }
  return error;
}

cudaError_t set_dependencies(const CudaApi &api, cudaStream_t stream,
                             CaptureDependencies &dependencies) {
  return api.stream_update_capture_dependencies(stream, dependencies.nodes.data(),
                                                dependencies.edges.data(), dependencies.size(),
                                                cudaStreamSetCaptureDependencies);
}

struct LaunchWork {
  const CudaApi *api;
  const CudaExecutable *executable;
  Scratch *scratch;
  bool capturing;
  LaunchRecord *wall;
  WorkFailure failure;
};

struct TaskWork {
  LaunchWork *launch;
  const KernelEntry *kernel;
  rrt_kernel_args_t args;
  std::uint32_t task;
  TaskTiming *timing;
};

int fail_cuda(WorkFailure *failure, cudaError_t error, const char *call) {
  *failure = WorkFailure{WorkFailure::Kind::kCuda, 0, error, call};
  return 1;
}

cudaError_t profile(const CudaApi &api, cudaStream_t stream, void *record, std::uint32_t op,
                    std::uint32_t value) {
  return launch_profile(api, stream, ProfileParams{record, op, value});
}

// The launch's first piece of work: the wall record's start, and the capture's dependencies.
int begin_launch(void *native, void *context) {
  auto *launch = static_cast<LaunchWork *>(context);
  const auto stream = static_cast<cudaStream_t>(native);
  if (launch->wall != nullptr) {
    if (const cudaError_t error =
            profile(*launch->api, stream, launch->wall, ProfileParams::kLaunchStart, 0);
        error != cudaSuccess) {
      return fail_cuda(&launch->failure, error, "cudaLaunchKernel (profile)");
    }
  }
  if (launch->capturing) {
    launch->scratch->entry.clear();
    if (const cudaError_t error =
            append_dependencies(*launch->api, stream, &launch->scratch->entry);
        error != cudaSuccess) {
      return fail_cuda(&launch->failure, error, "cudaStreamGetCaptureInfo");
    }
  }
  return 0;
}

int run_task(void *native, void *context) {
  auto *work = static_cast<TaskWork *>(context);
  LaunchWork &launch = *work->launch;
  const CudaApi &api = *launch.api;
  Scratch &scratch = *launch.scratch;
  const auto stream = static_cast<cudaStream_t>(native);
  if (launch.capturing) {
    const CudaExecutable &plan = *launch.executable;
    scratch.dependencies.clear();
    const std::uint32_t first = plan.predecessor_start[work->task];
    const std::uint32_t last = plan.predecessor_start[work->task + 1];
    if (first == last) {
      scratch.dependencies = scratch.entry;
    }
    for (std::uint32_t p = first; p < last; ++p) {
      const std::uint32_t predecessor = plan.predecessors[p];
      scratch.dependencies.append(scratch.terminal, scratch.terminal_start[predecessor],
                                  scratch.terminal_start[predecessor + 1]);
    }
    if (const cudaError_t error = set_dependencies(api, stream, scratch.dependencies);
        error != cudaSuccess) {
      return fail_cuda(&launch.failure, error, "cudaStreamUpdateCaptureDependencies");
    }
  }
  if (work->timing != nullptr) {
    if (const cudaError_t error =
            profile(api, stream, work->timing, ProfileParams::kTaskStart, work->task);
        error != cudaSuccess) {
      return fail_cuda(&launch.failure, error, "cudaLaunchKernel (profile)");
    }
  }
  if (const int code = work->kernel->native_launch(&work->args, native, work->kernel->user);
      code != 0) {
    launch.failure = WorkFailure{WorkFailure::Kind::kLauncher, code, cudaSuccess, ""};
    return code;
  }
  if (work->timing != nullptr) {
    if (const cudaError_t error =
            profile(api, stream, work->timing, ProfileParams::kTaskEnd, work->task);
        error != cudaSuccess) {
      return fail_cuda(&launch.failure, error, "cudaLaunchKernel (profile)");
    }
  }
  if (launch.capturing) {
    if (const cudaError_t error = append_dependencies(api, stream, &scratch.terminal);
        error != cudaSuccess) {
      return fail_cuda(&launch.failure, error, "cudaStreamGetCaptureInfo");
    }
  }
  scratch.terminal_start[work->task + 1] = scratch.terminal.size();
  return 0;
}

// The launch's last piece of work: the branches join, and the wall record's end.
int end_launch(void *native, void *context) {
  auto *launch = static_cast<LaunchWork *>(context);
  const auto stream = static_cast<cudaStream_t>(native);
  Scratch &scratch = *launch->scratch;
  if (launch->capturing) {
    scratch.dependencies.clear();
    for (const std::uint32_t sink : launch->executable->sinks) {
      scratch.dependencies.append(scratch.terminal, scratch.terminal_start[sink],
                                  scratch.terminal_start[sink + 1]);
    }
    if (launch->executable->sinks.empty()) {
      scratch.dependencies = scratch.entry;
    }
    if (const cudaError_t error = set_dependencies(*launch->api, stream, scratch.dependencies);
        error != cudaSuccess) {
      return fail_cuda(&launch->failure, error, "cudaStreamUpdateCaptureDependencies");
    }
  }
  if (launch->wall != nullptr) {
    if (const cudaError_t error =
            profile(*launch->api, stream, launch->wall, ProfileParams::kLaunchEnd,
                    launch->executable->view.header.num_tasks);
        error != cudaSuccess) {
      return fail_cuda(&launch->failure, error, "cudaLaunchKernel (profile)");
    }
  }
  return 0;
}

Status launch_failure(std::string message) {
  return Status::error(RRT_ERR_KERNEL_FAILED, std::move(message));
}

}  // namespace

CudaExecutor::CudaExecutor(const CudaApi &api, const KernelRegistry &kernels)
    : api_(api), kernels_(kernels) {}

Status CudaExecutor::prepare(const TaskGraphSpec &spec, std::unique_ptr<PreparedExecutable> *out) {
  auto executable = std::make_unique<CudaExecutable>();
  executable->storage.resize((spec.image.size() + 7) / 8);
  if (!spec.image.empty()) {
    std::memcpy(executable->storage.data(), spec.image.data(), spec.image.size());
  }
  const std::span<const std::byte> image(
      reinterpret_cast<const std::byte *>(executable->storage.data()), spec.image.size());
  TaskGraphView &view = executable->view;
  RRT_RETURN_IF_ERROR(view_task_graph(image, &view));
  const std::uint32_t tasks = view.header.num_tasks;
  std::vector<std::uint32_t> counts(tasks, 0);
  for (std::uint32_t t = 0; t < tasks; ++t) {
    const std::int32_t kernel = view.tasks[t].kernel_id;
    if (!kernels_.contains(kernel) || kernels_.entry(kernel).native_launch == nullptr) {
      return Status::error(RRT_ERR_UNSUPPORTED,
                           format("callable %d task %u names kernel %d, which has no CUDA "
                                  "launcher (register it with rrt_kernel_register_native)",
                                  view.header.callable_id, t, kernel));
    }
    for (std::uint32_t s = 0; s < view.tasks[t].num_successors; ++s) {
      ++counts[view.successors[view.tasks[t].first_successor + s]];
    }
    if (view.tasks[t].num_successors == 0) {
      executable->sinks.push_back(t);
    }
  }
  executable->predecessor_start.assign(tasks + 1, 0);
  for (std::uint32_t t = 0; t < tasks; ++t) {
    executable->predecessor_start[t + 1] = executable->predecessor_start[t] + counts[t];
  }
  executable->predecessors.resize(executable->predecessor_start[tasks]);
  std::vector<std::uint32_t> filled(executable->predecessor_start.begin(),
                                    executable->predecessor_start.end() - 1);
  for (std::uint32_t t = 0; t < tasks; ++t) {
    for (std::uint32_t s = 0; s < view.tasks[t].num_successors; ++s) {
      const std::uint32_t next = view.successors[view.tasks[t].first_successor + s];
      executable->predecessors[filled[next]++] = t;
    }
  }
  *out = std::move(executable);
  return Status::ok();
}

Status CudaExecutor::enqueue(Stream &stream, const PreparedExecutable &prepared,
                             const LaunchBinding &binding) {
  const auto *plan = dynamic_cast<const CudaExecutable *>(&prepared);
  if (plan == nullptr) {
    Status refused = Status::error(RRT_ERR_INVALID_ARGUMENT,
                                   "CUDA launch of a callable another executor prepared");
    stream.fail_enqueue(refused);
    return refused;
  }
  const ScratchLease lease;
  Scratch &scratch = *lease;
  const TaskGraphHeader &image = plan->view.header;
  const std::span<const std::byte> invocation = binding.invocation;
  // Stream queues keep invocations 8-byte aligned; the caller's span need not be.
  scratch.invocation.resize((invocation.size() + 7) / 8);
  if (!invocation.empty()) {
    std::memcpy(scratch.invocation.data(), invocation.data(), invocation.size());
  }
  Status status = [&]() -> Status {
    InvocationHeader header;
    InvocationPayloadView payload;
    RRT_RETURN_IF_ERROR(
        decode_invocation(reinterpret_cast<const std::byte *>(scratch.invocation.data()),
                          invocation.size(), &header, &payload));
    if (header.callable_id != image.callable_id || header.generation != image.generation) {
      return launch_failure(
          format("the launch names callable %d generation %llu, its prepared plan is callable %d "
                 "generation %llu",
                 header.callable_id, static_cast<unsigned long long>(header.generation),
                 image.callable_id, static_cast<unsigned long long>(image.generation)));
    }
    if (static_cast<std::uint32_t>(header.tensor_count) != image.num_params ||
        static_cast<std::uint32_t>(header.scalar_count) != image.num_scalars) {
      return launch_failure(
          format("callable %d expects %u tensors and %u scalars, the invocation carries %d and %d",
                 image.callable_id, image.num_params, image.num_scalars, header.tensor_count,
                 header.scalar_count));
    }
    const OperandSections sections{plan->view.operands, plan->view.views, plan->view.device_values,
                                   reinterpret_cast<std::uint64_t>(binding.gm_heap)};
    const std::uint32_t tasks = image.num_tasks;
    const std::size_t builtins = builtin_kernel_specs().size();
    scratch.resolved.resize(tasks);
    for (std::uint32_t t = 0; t < tasks; ++t) {
      const TaskRecord &task = plan->view.tasks[t];
      const KernelEntry &kernel = kernels_.entry(task.kernel_id);
      ResolvedOperands &resolved = scratch.resolved[t];
      if (const OperandError error =
              resolve_task_operands(task, sections, payload, nullptr, &resolved);
          error != OperandError::kNone) {
        return launch_failure(format("callable %d task %u (kernel '%s'): %s", image.callable_id, t,
                                     kernel.name.c_str(), describe(error)));
      }
      if (kernel.check_operands == nullptr) {
        continue;
      }
      rrt_kernel_args_t args = resolved.args();
      std::uint64_t checked[kMaxTaskScalars];
      std::memcpy(checked, args.scalars, sizeof(std::uint64_t) * args.num_scalars);
      for (std::uint32_t d = 0; d < resolved.num_device_operands; ++d) {
        const rrt_device_operand_t &operand = resolved.device_operands[d];
        if (operand.kind != RRT_DEVICE_OPERAND_SCALAR) {
          continue;
        }
        if (static_cast<std::size_t>(task.kernel_id) < builtins &&
            !builtin_takes_device_scalar(static_cast<std::uint32_t>(task.kernel_id),
                                         operand.index)) {
          return Status::error(
              RRT_ERR_UNSUPPORTED,
              format("callable %d task %u (kernel '%s'): scalar %u is a device value, but CUDA "
                     "sizes this built-in's launch from it on the host",
                     image.callable_id, t, kernel.name.c_str(), operand.index));
        }
        checked[operand.index] = rrt_scalar_from_f32(kCheckedDeviceScalar);
      }
      args.scalars = checked;
      if (const int code = kernel.check_operands(&args); code != 0) {
        return launch_failure(format("callable %d task %u (kernel '%s') failed with code %d",
                                     image.callable_id, t, kernel.name.c_str(), code));
      }
    }

    LaunchWork launch{&api_,
                      plan,
                      &scratch,
                      stream.is_capturing(),
                      reinterpret_cast<LaunchRecord *>(payload.wall_address),
                      {}};
    auto *timings = reinterpret_cast<TaskTiming *>(payload.timings_address);
    scratch.terminal.clear();
    scratch.terminal_start.assign(tasks + 1, 0);

    const auto describe_failure = [&](const Status &enqueued, const char *what) -> Status {
      switch (launch.failure.kind) {
        case WorkFailure::Kind::kCuda:
          return cuda_status(api_, launch.failure.error, launch.failure.call)
              .with_context(format("callable %d %s", image.callable_id, what));
        case WorkFailure::Kind::kLauncher:
        case WorkFailure::Kind::kNone:
          break;
      }
      return Status::error(enqueued.code(), format("callable %d %s: %s", image.callable_id, what,
                                                   enqueued.message().c_str()));
    };

    NativeWork begin;
    begin.enqueue = &begin_launch;
    begin.context = &launch;
    begin.referenced = binding.referenced;
    if (const Status enqueued = stream.enqueue_native(begin); !enqueued.is_ok()) {
      return describe_failure(enqueued, "launch");
    }
    for (std::uint32_t t = 0; t < tasks; ++t) {
      const KernelEntry &kernel = kernels_.entry(plan->view.tasks[t].kernel_id);
      const ResolvedOperands &task = scratch.resolved[t];
      scratch.referenced.assign(task.addresses.begin(), task.addresses.begin() + task.num_tensors);
      for (std::uint32_t d = 0; d < task.num_device_operands; ++d) {
        scratch.referenced.push_back(task.device_operands[d].value);
      }
      TaskWork work{&launch, &kernel, task.args(), t, timings != nullptr ? timings + t : nullptr};
      NativeWork native;
      native.enqueue = &run_task;
      native.context = &work;
      native.referenced = scratch.referenced;
      if (const Status enqueued = stream.enqueue_native(native); !enqueued.is_ok()) {
        const std::string what = format("task %u (kernel '%s')", t, kernel.name.c_str());
        if (launch.failure.kind == WorkFailure::Kind::kLauncher &&
            static_cast<std::size_t>(plan->view.tasks[t].kernel_id) < builtins &&
            launch.failure.code >= kLaunchErrorBase) {
          return cuda_status(api_, static_cast<cudaError_t>(launch.failure.code - kLaunchErrorBase),
                             "cudaLaunchKernel")
              .with_context(format("callable %d %s", image.callable_id, what.c_str()));
        }
        return describe_failure(enqueued, what.c_str());
      }
    }
    if (launch.capturing || launch.wall != nullptr) {
      NativeWork end;
      end.enqueue = &end_launch;
      end.context = &launch;
      if (const Status enqueued = stream.enqueue_native(end); !enqueued.is_ok()) {
        return describe_failure(enqueued, "launch");
      }
    }
    return Status::ok();
  }();
  if (!status.is_ok()) {
    stream.fail_enqueue(status);
  }
  return status;
}

}  // namespace replayrt::cuda
