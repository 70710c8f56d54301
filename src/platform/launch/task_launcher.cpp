#include "platform/launch/task_launcher.h"

#include <cstring>

#include "common/format.h"
#include "platform/launch/invocation_header.h"
#include "platform/launch/task_graph_image.h"

namespace replayrt {

namespace {

Status launch_failure(std::string message) {
  return Status::error(RRT_ERR_KERNEL_FAILED, std::move(message));
}

struct NativeCall {
  const KernelEntry *kernel;
  rrt_kernel_args_t args;
};

int call_native(void *native_stream, void *context) {
  const auto *call = static_cast<const NativeCall *>(context);
  return call->kernel->native_launch(&call->args, native_stream, call->kernel->user);
}

}  // namespace

TaskLauncher::TaskLauncher(Device &device, const KernelRegistry &kernels)
    : device_(device), kernels_(kernels) {}

Status TaskLauncher::enqueue(Stream &stream, std::span<const std::byte> invocation,
                             std::span<const void *const> referenced) {
  const std::lock_guard<std::mutex> lock(mutex_);
  Status status = expand(stream, invocation, referenced);
  if (!status.is_ok()) {
    stream.fail_enqueue(status);
  }
  return status;
}

Status TaskLauncher::expand(Stream &stream, std::span<const std::byte> invocation,
                            std::span<const void *const> referenced) {
  // Stream queues keep invocations 8-byte aligned; the caller's span need not be.
  invocation_copy_.resize((invocation.size() + 7) / 8);
  if (!invocation.empty()) {
    std::memcpy(invocation_copy_.data(), invocation.data(), invocation.size());
  }
  InvocationHeader header;
  InvocationPayloadView payload;
  RRT_RETURN_IF_ERROR(
      decode_invocation(reinterpret_cast<const std::byte *>(invocation_copy_.data()),
                        invocation.size(), &header, &payload));
  if (payload.timings_address != 0 || payload.wall_address != 0) {
    return Status::error(RRT_ERR_UNSUPPORTED,
                         format("%s devices do not record task timings or device wall time",
                                device_.properties().name));
  }
  auto *image_address = reinterpret_cast<const void *>(payload.image_address);
  if (image_address == nullptr) {
    return launch_failure("invocation names no task-graph image");
  }
  TaskGraphHeader image;
  if (const Status read = device_.copy_device_to_host(&image, image_address, sizeof image);
      !read.is_ok()) {
    return launch_failure(format("the task-graph image at %p cannot be read: %s", image_address,
                                 read.message().c_str()));
  }
  if (image.magic != kTaskGraphMagic || image.version != kTaskGraphVersion) {
    return launch_failure(format(
        "no task-graph image at %p (found magic 0x%08x): the buffer was freed or overwritten "
        "after the launch was encoded",
        image_address, image.magic));
  }
  if (image.callable_id != header.callable_id || image.generation != header.generation) {
    return launch_failure(
        format("the image at %p holds callable %d generation %llu, the launch expects callable %d "
               "generation %llu: the image was replaced after the launch was encoded",
               image_address, image.callable_id, static_cast<unsigned long long>(image.generation),
               header.callable_id, static_cast<unsigned long long>(header.generation)));
  }
  if (static_cast<std::uint32_t>(header.tensor_count) != image.num_params ||
      static_cast<std::uint32_t>(header.scalar_count) != image.num_scalars) {
    return launch_failure(
        format("callable %d expects %u tensors and %u scalars, the invocation carries %d and %d",
               image.callable_id, image.num_params, image.num_scalars, header.tensor_count,
               header.scalar_count));
  }
  const TaskGraphLayout layout = task_graph_layout(image);
  if (!task_graph_layout_matches(image)) {
    return launch_failure(format(
        "callable %d: inconsistent task-graph image at %p: its sections lie outside the image "
        "its counts describe",
        image.callable_id, image_address));
  }
  image_.resize(static_cast<std::size_t>((layout.total + 7) / 8));
  if (const Status read = device_.copy_device_to_host(image_.data(), image_address,
                                                      static_cast<std::size_t>(layout.total));
      !read.is_ok()) {
    return launch_failure(format("the task-graph image at %p cannot be read: %s", image_address,
                                 read.message().c_str()));
  }
  const auto *bytes = reinterpret_cast<const std::byte *>(image_.data());
  const auto *tasks = reinterpret_cast<const TaskRecord *>(bytes + layout.tasks);
  const std::span<const OperandRecord> operands(
      reinterpret_cast<const OperandRecord *>(bytes + layout.operands), image.num_operands);
  const auto *successors = reinterpret_cast<const std::uint32_t *>(bytes + layout.successors);
  const OperandSections sections{
      operands,
      std::span<const ViewRecord>(reinterpret_cast<const ViewRecord *>(bytes + layout.views),
                                  image.num_views),
      std::span<const DeviceValueRecord>(
          reinterpret_cast<const DeviceValueRecord *>(bytes + layout.device_values),
          image.num_device_values)};

  resolved_.resize(image.num_tasks);
  for (std::uint32_t t = 0; t < image.num_tasks; ++t) {
    const TaskRecord &task = tasks[t];
    if (task.first_successor > image.num_edges ||
        task.num_successors > image.num_edges - task.first_successor) {
      return launch_failure(
          format("callable %d: task %u's successors lie outside the image", image.callable_id, t));
    }
    for (std::uint32_t s = 0; s < task.num_successors; ++s) {
      const std::uint32_t next = successors[task.first_successor + s];
      if (next <= t || next >= image.num_tasks) {
        return launch_failure(format(
            "callable %d: task %u has successor %u: program order is not a topological order",
            image.callable_id, t, next));
      }
    }
    if (!kernels_.contains(task.kernel_id) ||
        kernels_.entry(task.kernel_id).native_launch == nullptr) {
      return launch_failure(format("callable %d task %u names kernel %d, which has no %s launcher",
                                   image.callable_id, t, task.kernel_id,
                                   device_.properties().name));
    }
    const KernelEntry &kernel = kernels_.entry(task.kernel_id);
    // Operands are resolved here, on the host, when the launch is enqueued: a device value is
    // not readable then without synchronizing with the stream (which a capture forbids).
    const OperandError error =
        resolve_task_operands(task, sections, payload, nullptr, &resolved_[t]);
    if (error == OperandError::kDeviceValueUnreadable) {
      return Status::error(
          RRT_ERR_UNSUPPORTED,
          format("callable %d task %u (kernel '%s') reads a device value (a DEVICE_VALUE operand "
                 "or a view with a device-resident offset): %s devices resolve operands when the "
                 "launch is enqueued and cannot read device memory then without synchronizing",
                 image.callable_id, t, kernel.name.c_str(), device_.properties().name));
    }
    if (error != OperandError::kNone) {
      return launch_failure(format("callable %d: inconsistent task-graph image at %p: task %u: %s",
                                   image.callable_id, image_address, t, describe(error)));
    }
    if (kernel.check_operands != nullptr) {
      const rrt_kernel_args_t args = resolved_[t].args();
      if (const int code = kernel.check_operands(&args); code != 0) {
        return launch_failure(format("callable %d task %u (kernel '%s') failed with code %d",
                                     image.callable_id, t, kernel.name.c_str(), code));
      }
    }
  }

  for (std::uint32_t t = 0; t < image.num_tasks; ++t) {
    const KernelEntry &kernel = kernels_.entry(tasks[t].kernel_id);
    const ResolvedOperands &task = resolved_[t];
    referenced_.clear();
    if (t == 0) {
      referenced_.insert(referenced_.end(), referenced.begin(), referenced.end());
    }
    referenced_.insert(referenced_.end(), task.addresses.begin(),
                       task.addresses.begin() + task.num_tensors);
    NativeCall call{&kernel, task.args()};
    NativeWork work;
    work.enqueue = &call_native;
    work.context = &call;
    work.referenced = referenced_;
    if (const Status enqueued = stream.enqueue_native(work); !enqueued.is_ok()) {
      return Status::error(enqueued.code(),
                           format("callable %d task %u (kernel '%s'): %s", image.callable_id, t,
                                  kernel.name.c_str(), enqueued.message().c_str()));
    }
  }
  return Status::ok();
}

}  // namespace replayrt
