#include "runtime/device/device_runtime.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "common/format.h"
#include "common/spin_wait.h"
#include "runtime/invocation_header.h"
#include "runtime/task_graph_image.h"

namespace replayrt {

namespace {

constexpr std::uint32_t kEmptySlot = ~std::uint32_t{0};
constexpr std::size_t kMaxOperands = 32;
// The failure code of a task whose kernel threw.
constexpr int kKernelThrew = std::numeric_limits<int>::min();

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// Runs one kernel. Kernels must not throw; one that does fails its task with kKernelThrew.
int call_kernel(const KernelEntry &kernel, const rrt_kernel_args_t &args) noexcept {
  try {
    return kernel.fn(&args, kernel.user);
  } catch (...) {
    return kKernelThrew;
  }
}

// One invocation's execution, shared by its workers. Everything it reads about the graph
// comes from device memory (the image and the scheduler state).
struct Execution {
  const KernelRegistry *kernels;
  const TaskGraphHeader *image;
  const TaskRecord *tasks;
  const OperandRecord *operands;
  const std::uint32_t *successors;
  SchedulerStateHeader *state;
  std::uint32_t *remaining;
  std::uint32_t *ready;
  InvocationPayloadView payload;
  TaskTiming *timings;

  void push(std::uint32_t task) const {
    const std::uint32_t slot =
        std::atomic_ref<std::uint32_t>(state->next_push).fetch_add(1, std::memory_order_relaxed);
    std::atomic_ref<std::uint32_t>(ready[slot]).store(task, std::memory_order_release);
  }

  std::uint32_t wait_for_slot(std::uint32_t slot) const {
    std::atomic_ref<std::uint32_t> cell(ready[slot]);
    std::uint32_t task = kEmptySlot;
    while (!spin_until([&] {
      task = cell.load(std::memory_order_acquire);
      return task != kEmptySlot;
    })) {
      std::this_thread::yield();
    }
    return task;
  }

  int run_task(std::uint32_t t, unsigned worker) const {
    const TaskRecord &task = tasks[t];
    if (!kernels->contains(task.kernel_id)) {
      return -1;
    }
    // Only the first num_tensors / num_scalars entries are written and read.
    std::array<void *, kMaxOperands> addresses;
    std::array<std::uint64_t, kMaxOperands> sizes;
    std::array<std::uint64_t, kMaxOperands> scalars;
    const std::uint32_t count = task.num_tensors + task.num_scalars;
    if (task.num_tensors > kMaxOperands || task.num_scalars > kMaxOperands ||
        task.first_operand + count > image->num_operands) {
      return -1;
    }
    for (std::uint32_t i = 0; i < count; ++i) {
      const OperandRecord &operand = operands[task.first_operand + i];
      switch (static_cast<ImageOperandKind>(operand.kind)) {
        case ImageOperandKind::kParam:
          if (operand.index >= payload.tensor_addresses.size()) {
            return -1;
          }
          addresses[i] = reinterpret_cast<void *>(payload.tensor_addresses[operand.index]);
          sizes[i] = payload.tensor_bytes[operand.index];
          break;
        case ImageOperandKind::kBaked:
          addresses[i] = reinterpret_cast<void *>(operand.value);
          sizes[i] = operand.bytes;
          break;
        case ImageOperandKind::kScalar:
          if (operand.index >= payload.scalars.size()) {
            return -1;
          }
          scalars[i - task.num_tensors] = payload.scalars[operand.index];
          break;
        case ImageOperandKind::kImmediate:
          scalars[i - task.num_tensors] = operand.value;
          break;
        default:
          return -1;
      }
    }
    const KernelEntry &kernel = kernels->entry(task.kernel_id);
    const rrt_kernel_args_t args{task.num_tensors, addresses.data(), sizes.data(), task.num_scalars,
                                 scalars.data()};
    const std::uint64_t start = timings != nullptr ? now_ns() : 0;
    const int code = call_kernel(kernel, args);
    if (timings != nullptr) {
      timings[t] = TaskTiming{start, now_ns(), t, worker};
    }
    return code;
  }

  // Takes ready tasks until every task has completed. A worker claims a queue slot only once
  // a task was pushed into it, so the worker that makes a successor ready (having just run
  // its predecessor, with that data in its cache) usually runs it too, and an idle worker
  // never holds a slot the others need.
  void work(unsigned worker) const {
    std::atomic_ref<std::uint32_t> next_pop(state->next_pop);
    std::atomic_ref<std::uint32_t> next_push(state->next_push);
    std::atomic_ref<std::uint32_t> completed(state->completed);
    std::atomic_ref<std::uint32_t> failed(state->failed);
    const std::uint32_t num_tasks = image->num_tasks;
    std::uint32_t slot = next_pop.load(std::memory_order_acquire);
    for (;;) {
      if (slot >= next_push.load(std::memory_order_acquire)) {
        if (completed.load(std::memory_order_acquire) == num_tasks) {
          return;
        }
        if (!spin_until([&] {
              return next_pop.load(std::memory_order_acquire) <
                         next_push.load(std::memory_order_acquire) ||
                     completed.load(std::memory_order_acquire) == num_tasks;
            })) {
          std::this_thread::yield();
        }
        slot = next_pop.load(std::memory_order_acquire);
        continue;
      }
      if (!next_pop.compare_exchange_weak(slot, slot + 1, std::memory_order_acq_rel)) {
        continue;
      }
      const std::uint32_t t = wait_for_slot(slot);
      if (failed.load(std::memory_order_acquire) == 0) {
        const int code = run_task(t, worker);
        if (code != 0) {
          std::uint32_t expected = 0;
          if (failed.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
            state->failed_task = static_cast<std::int32_t>(t);
            state->failed_code = code;
          }
        }
      }
      const TaskRecord &task = tasks[t];
      for (std::uint32_t s = 0; s < task.num_successors; ++s) {
        const std::uint32_t next = successors[task.first_successor + s];
        if (std::atomic_ref<std::uint32_t>(remaining[next])
                .fetch_sub(1, std::memory_order_acq_rel) == 1) {
          push(next);
        }
      }
      completed.fetch_add(1, std::memory_order_acq_rel);
      slot = next_pop.load(std::memory_order_acquire);
    }
  }

  static void work_entry(void *self, unsigned worker) {
    static_cast<const Execution *>(self)->work(worker);
  }
};

Status device_failure(std::string message) {
  return Status::error(RRT_ERR_KERNEL_FAILED, std::move(message));
}

}  // namespace

DeviceRuntime::DeviceRuntime(const KernelRegistry &kernels, unsigned workers)
    : kernels_(kernels), pool_(workers > 1 ? workers - 1 : 0) {}

Status DeviceRuntime::entry(void *self, const std::byte *invocation, std::size_t bytes) {
  return static_cast<DeviceRuntime *>(self)->execute(invocation, bytes);
}

Status DeviceRuntime::execute(const std::byte *invocation, std::size_t bytes) {
  std::vector<std::uint64_t> aligned;
  if (reinterpret_cast<std::uintptr_t>(invocation) % alignof(std::uint64_t) != 0) {
    aligned.resize((bytes + 7) / 8);
    std::memcpy(aligned.data(), invocation, bytes);
    invocation = reinterpret_cast<const std::byte *>(aligned.data());
  }
  InvocationHeader header;
  Execution run{};
  RRT_RETURN_IF_ERROR(decode_invocation(invocation, bytes, &header, &run.payload));

  const auto *image = reinterpret_cast<const TaskGraphHeader *>(run.payload.image_address);
  if (image == nullptr) {
    return device_failure("invocation names no task-graph image");
  }
  if (image->magic != kTaskGraphMagic || image->version != kTaskGraphVersion) {
    return device_failure(format(
        "no task-graph image at %p (found magic 0x%08x): the buffer was freed or overwritten "
        "after the launch was encoded",
        static_cast<const void *>(image), image->magic));
  }
  if (image->callable_id != header.callable_id || image->generation != header.generation) {
    return device_failure(
        format("the image at %p holds callable %d generation %llu, the launch expects callable %d "
               "generation %llu: the image was replaced after the launch was encoded",
               static_cast<const void *>(image), image->callable_id,
               static_cast<unsigned long long>(image->generation), header.callable_id,
               static_cast<unsigned long long>(header.generation)));
  }
  if (static_cast<std::uint32_t>(header.tensor_count) != image->num_params ||
      static_cast<std::uint32_t>(header.scalar_count) != image->num_scalars) {
    return device_failure(
        format("callable %d expects %u tensors and %u scalars, the "
               "invocation carries %d and %d",
               image->callable_id, image->num_params, image->num_scalars, header.tensor_count,
               header.scalar_count));
  }
  const auto *base = reinterpret_cast<const std::byte *>(image);
  run.kernels = &kernels_;
  run.image = image;
  run.tasks = reinterpret_cast<const TaskRecord *>(base + image->tasks_offset);
  run.operands = reinterpret_cast<const OperandRecord *>(base + image->operands_offset);
  run.successors = reinterpret_cast<const std::uint32_t *>(base + image->successors_offset);
  run.timings = reinterpret_cast<TaskTiming *>(run.payload.timings_address);
  auto *wall = reinterpret_cast<LaunchRecord *>(run.payload.wall_address);
  const std::uint64_t launch_start = wall != nullptr ? now_ns() : 0;

  auto *state_bytes = reinterpret_cast<std::byte *>(image->scheduler_state);
  if (state_bytes == nullptr) {
    return device_failure("image names no scheduler state");
  }
  const std::uint32_t num_tasks = image->num_tasks;
  run.state = reinterpret_cast<SchedulerStateHeader *>(state_bytes);
  run.remaining = reinterpret_cast<std::uint32_t *>(state_bytes + sizeof(SchedulerStateHeader));
  run.ready = run.remaining + num_tasks;
  if (image->scheduler_seed != 0) {
    std::memcpy(state_bytes, reinterpret_cast<const void *>(image->scheduler_seed),
                scheduler_state_bytes(num_tasks));
    if (run.state->generation != image->generation) {
      return device_failure(format(
          "the scheduler seed at %p belongs to generation %llu, the image to %llu: the seed was "
          "replaced after the launch was encoded",
          reinterpret_cast<const void *>(image->scheduler_seed),
          static_cast<unsigned long long>(run.state->generation),
          static_cast<unsigned long long>(image->generation)));
    }
  } else {
    *run.state = SchedulerStateHeader{0, 0, 0, 0, -1, 0, image->generation};
    std::uint32_t roots = 0;
    for (std::uint32_t t = 0; t < num_tasks; ++t) {
      run.remaining[t] = run.tasks[t].num_predecessors;
      run.ready[t] = kEmptySlot;
    }
    for (std::uint32_t t = 0; t < num_tasks; ++t) {
      if (run.tasks[t].num_predecessors == 0) {
        run.ready[roots++] = t;
      }
    }
    run.state->next_push = roots;
  }

  const unsigned workers = pool_.run(&Execution::work_entry, &run);
  if (wall != nullptr) {
    wall->start_ns = launch_start;
    wall->end_ns = now_ns();
    wall->tasks = num_tasks;
    wall->workers = workers;
    ++wall->launches;
  }

  if (run.state->failed != 0) {
    const std::int32_t task = run.state->failed_task;
    const std::int32_t kernel_id =
        task >= 0 && static_cast<std::uint32_t>(task) < num_tasks ? run.tasks[task].kernel_id : -1;
    const char *name =
        kernels_.contains(kernel_id) ? kernels_.entry(kernel_id).name.c_str() : "<unknown>";
    if (run.state->failed_code == kKernelThrew) {
      return device_failure(format("callable %d task %d (kernel '%s') threw an exception",
                                   image->callable_id, task, name));
    }
    return device_failure(format("callable %d task %d (kernel '%s') failed with code %d",
                                 image->callable_id, task, name, run.state->failed_code));
  }
  return Status::ok();
}

}  // namespace replayrt
