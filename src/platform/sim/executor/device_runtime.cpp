#include "platform/sim/executor/device_runtime.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <typeinfo>
#include <vector>

#include "common/format.h"
#include "platform/launch/invocation_header.h"
#include "platform/launch/operand_resolution.h"
#include "platform/launch/profile_records.h"
#include "platform/launch/task_graph_image.h"
#include "platform/launch/task_graph_view.h"
#include "platform/sim/spin_wait.h"

namespace replayrt::sim {

namespace {

// How long a worker waits for a claimed ready slot to be filled. The pusher fills it right
// after claiming it, so only an inconsistent scheduler state (or one that another invocation
// reset underneath this one) leaves a slot empty this long.
constexpr std::chrono::seconds kSlotFillLimit{10};

// The most ready-queue slots a worker claims at once.
constexpr std::uint32_t kMaxClaim = 32;

// Device memory is host-accessible on the simulator.
void read_sim_memory(const void *address, void *out, std::size_t bytes) {
  std::memcpy(out, address, bytes);
}

// A view offset that was out of range when its task ran.
struct OffsetFailure {
  std::uint32_t operand = 0;
  std::uint32_t view = 0;
  std::int64_t value = 0;
  std::uint64_t max = 0;
};

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// How one task ended: its kernel's result code (`code`, 0 on success) when `cause` is kNone or
// kKernelReturned, otherwise why it failed without one.
struct TaskOutcome {
  TaskFailure cause = TaskFailure::kNone;
  int code = 0;

  bool failed() const noexcept { return cause != TaskFailure::kNone; }
};

// The outcome of a kernel that ran and returned `code`.
TaskOutcome returned(int code) noexcept {
  return TaskOutcome{code != 0 ? TaskFailure::kKernelReturned : TaskFailure::kNone, code};
}

// Runs one kernel. Kernels must not throw; one that does fails its task with kKernelThrew.
TaskOutcome call_kernel(const KernelEntry &kernel, const rrt_kernel_args_t &args) noexcept {
  try {
    return returned(kernel.host_fn(&args, kernel.user));
  } catch (...) {
    return TaskOutcome{TaskFailure::kKernelThrew, 0};
  }
}

// Why the scheduler stopped an invocation before its tasks completed, other than a kernel
// failure: the image or the scheduler state disagrees with itself.
enum class Inconsistency : std::uint32_t {
  kNone,
  kTaskIndex,       // a ready slot holds a value that is not a task index
  kSuccessorRange,  // a task's successor range lies outside the image's edges
  kSuccessorIndex,  // an edge names a value that is not a task index
  kQueueOverflow,   // more tasks became ready than the image has
  kCompletedPastTasks,
  kStalled,  // no task is running or ready, and some never ran
  kSlotNeverFilled,
  kUnknownKernel,  // a task names a kernel the simulator cannot run
  kOperands,       // see `operand_error`
};

// One invocation's execution, shared by its workers. Everything it reads about the graph
// comes from device memory (the image and the scheduler state); every index read from there is
// checked against the image's counts before it is used. The first inconsistency found stops
// every worker and is reported after they return.
struct Execution {
  const KernelRegistry *kernels;
  const TaskGraphHeader *image;
  std::uint32_t num_tasks;
  std::uint32_t num_edges;
  const TaskRecord *tasks;
  std::span<const OperandRecord> operands;
  std::span<const ViewRecord> views;
  std::span<const DeviceValueRecord> device_values;
  const std::uint32_t *successors;
  SchedulerStateHeader *state;
  std::uint32_t *remaining;
  std::uint32_t *ready;
  InvocationPayloadView payload;
  TaskTiming *timings;

  // Host-side: written by the one worker that records the inconsistency, read after the
  // workers returned.
  std::atomic<bool> stopped{false};
  Inconsistency inconsistency = Inconsistency::kNone;
  OperandError operand_error = OperandError::kNone;
  std::uint32_t where = 0;  // the task or slot involved
  std::uint64_t value = 0;  // the offending value
  // Written by the worker that records the failed task when it failed for a view offset.
  OffsetFailure offset_failure;

  // The task whose parts the workers share (HostKernelParts), at most one at a time. Its owner
  // (the worker that took the task, holding `sharing`) publishes it in `shared` and claims parts
  // like everyone else until none is left, withdraws it, and waits until no worker is counted in
  // `sharers`: then every part has run (a joiner stays counted while it runs one) and the task,
  // on the owner's stack, may go. A worker joins by counting itself in `sharers` and then
  // loading `shared` again. Both are sequentially consistent, so of a joiner's count-then-load
  // and the owner's withdraw-then-check one comes first in their single order: the joiner
  // either sees the task while the owner still waits for it, or sees it withdrawn (Dekker's
  // argument). Every shared task has a serial of its own, so a worker that has run out of
  // parts to claim waits for the next task instead of joining the same one again.
  struct SharedTask {
    std::uint64_t serial = 0;
    const rrt_kernel_args_t *args = nullptr;
    const HostKernelParts *parts = nullptr;
    std::uint64_t count = 0;
    std::atomic<std::uint64_t> next{0};
  };
  std::atomic<bool> sharing{false};
  std::uint64_t tasks_shared = 0;  // written by the worker holding `sharing`
  std::atomic<SharedTask *> shared{nullptr};
  std::atomic<std::uint64_t> shared_serial{0};  // the serial of the task in `shared`
  std::atomic<unsigned> sharers{0};

  bool is_stopped() const noexcept { return stopped.load(std::memory_order_acquire); }

  void stop(Inconsistency why, std::uint32_t at, std::uint64_t found,
            OperandError operand = OperandError::kNone) {
    bool expected = false;
    if (stopped.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      inconsistency = why;
      operand_error = operand;
      where = at;
      value = found;
    }
  }

  // False (having stopped the execution) when the queue already holds num_tasks tasks.
  bool push(std::uint32_t task) {
    const std::uint32_t slot =
        std::atomic_ref<std::uint32_t>(state->next_push).fetch_add(1, std::memory_order_relaxed);
    if (slot >= num_tasks) {
      stop(Inconsistency::kQueueOverflow, task, slot);
      return false;
    }
    std::atomic_ref<std::uint32_t>(ready[slot]).store(task, std::memory_order_release);
    return true;
  }

  // The task pushed into `slot`, or kEmptyReadySlot when the execution stopped first.
  std::uint32_t wait_for_slot(std::uint32_t slot) {
    std::atomic_ref<std::uint32_t> cell(ready[slot]);
    std::uint32_t task = cell.load(std::memory_order_acquire);
    if (task != kEmptyReadySlot) {
      return task;
    }
    const auto give_up = std::chrono::steady_clock::now() + kSlotFillLimit;
    while (!spin_until([&] {
      task = cell.load(std::memory_order_acquire);
      return task != kEmptyReadySlot || is_stopped();
    })) {
      if (std::chrono::steady_clock::now() >= give_up) {
        stop(Inconsistency::kSlotNeverFilled, slot, 0);
        return kEmptyReadySlot;
      }
      std::this_thread::yield();
    }
    return task;
  }

  // Runs the kernel on the task's operands: divided into parts that the team's idle workers
  // join when the kernel divides (HostKernelParts), the task is large enough, the team has
  // more than one worker and no other task's parts are being shared; otherwise in one call.
  TaskOutcome run_kernel(const KernelEntry &kernel, const rrt_kernel_args_t &args,
                         const WorkerPool::Team &team) {
    if (kernel.host_parts.divides() && team.size() > 1) {
      const std::uint64_t count = kernel.host_parts.count(&args);
      if (count > 1 && !sharing.exchange(true, std::memory_order_acquire)) {
        share_parts(kernel.host_parts, args, count, team);
        sharing.store(false, std::memory_order_release);
        return TaskOutcome{};
      }
    }
    return call_kernel(kernel, args);
  }

  // Publishes the task's `count` parts, runs parts until none is left to claim, and returns
  // once no joiner holds the task: every part has run.
  void share_parts(const HostKernelParts &parts, const rrt_kernel_args_t &args, std::uint64_t count,
                   const WorkerPool::Team &team) {
    SharedTask task;
    task.serial = ++tasks_shared;
    task.args = &args;
    task.parts = &parts;
    task.count = count;
    shared_serial.store(task.serial, std::memory_order_relaxed);
    shared.store(&task, std::memory_order_seq_cst);
    team.invite();
    run_claimed_parts(task);
    shared.store(nullptr, std::memory_order_seq_cst);
    while (!spin_until([&] { return sharers.load(std::memory_order_seq_cst) == 0; })) {
      std::this_thread::yield();
    }
  }

  // Claims and runs the task's parts one at a time until none is left.
  static void run_claimed_parts(SharedTask &task) {
    for (;;) {
      const std::uint64_t part = task.next.fetch_add(1, std::memory_order_relaxed);
      if (part >= task.count) {
        return;
      }
      task.parts->run(task.args, part, part + 1, task.count);
    }
  }

  // True when a task other than the one with serial `joined` is shared.
  bool has_new_shared_task(std::uint64_t joined) const noexcept {
    return shared.load(std::memory_order_acquire) != nullptr &&
           shared_serial.load(std::memory_order_relaxed) != joined;
  }

  // Runs parts of the shared task unless it is the one with serial *joined, which it then
  // becomes; true when it joined a task.
  bool join_shared_task(std::uint64_t *joined) {
    if (!has_new_shared_task(*joined)) {
      return false;
    }
    sharers.fetch_add(1, std::memory_order_seq_cst);
    SharedTask *task = shared.load(std::memory_order_seq_cst);
    const bool joins = task != nullptr && task->serial != *joined;
    if (joins) {
      *joined = task->serial;
      run_claimed_parts(*task);
    }
    sharers.fetch_sub(1, std::memory_order_release);
    return joins;
  }

  // How the task ended: the kernel's outcome; a success after stopping the execution for an
  // inconsistent task; kViewOffsetOutOfRange (with *offset written) when a view's offset is out
  // of range.
  TaskOutcome run_task(std::uint32_t t, unsigned worker, const WorkerPool::Team &team,
                       OffsetFailure *offset) {
    const TaskRecord &task = tasks[t];
    if (!kernels->contains(task.kernel_id) || kernels->entry(task.kernel_id).host_fn == nullptr) {
      stop(Inconsistency::kUnknownKernel, t, static_cast<std::uint32_t>(task.kernel_id));
      return TaskOutcome{};
    }
    ResolvedOperands resolved;
    const OperandError error =
        resolve_task_operands(task, OperandSections{operands, views, device_values}, payload,
                              &read_sim_memory, &resolved);
    if (error == OperandError::kViewOffsetOutOfRange) {
      *offset = OffsetFailure{resolved.failed_operand, resolved.failed_view, resolved.failed_value,
                              resolved.failed_max};
      return TaskOutcome{TaskFailure::kViewOffsetOutOfRange, 0};
    }
    if (error != OperandError::kNone) {
      stop(Inconsistency::kOperands, t, task.first_operand, error);
      return TaskOutcome{};
    }
    const KernelEntry &kernel = kernels->entry(task.kernel_id);
    const rrt_kernel_args_t args = resolved.args();
    const std::uint64_t start = timings != nullptr ? now_ns() : 0;
    const TaskOutcome outcome = run_kernel(kernel, args, team);
    if (timings != nullptr) {
      timings[t] = TaskTiming{start, now_ns(), t, worker};
    }
    return outcome;
  }

  // Counts down `t`'s successors and pushes those that became ready. False (having stopped
  // the execution) when an edge is inconsistent.
  bool release_successors(std::uint32_t t) {
    const TaskRecord &task = tasks[t];
    if (task.first_successor > num_edges ||
        task.num_successors > num_edges - task.first_successor) {
      stop(Inconsistency::kSuccessorRange, t, task.first_successor);
      return false;
    }
    for (std::uint32_t s = 0; s < task.num_successors; ++s) {
      const std::uint32_t next = successors[task.first_successor + s];
      if (next >= num_tasks) {
        stop(Inconsistency::kSuccessorIndex, t, next);
        return false;
      }
      if (std::atomic_ref<std::uint32_t>(remaining[next]).fetch_sub(1, std::memory_order_acq_rel) ==
              1 &&
          !push(next)) {
        return false;
      }
    }
    return true;
  }

  // Runs the task pushed into the claimed `slot` and releases its successors; the caller counts
  // it as completed. False when the worker must stop.
  bool run_slot(std::uint32_t slot, unsigned worker, const WorkerPool::Team &team) {
    if (slot >= num_tasks) {
      stop(Inconsistency::kQueueOverflow, slot, slot);
      return false;
    }
    const std::uint32_t t = wait_for_slot(slot);
    if (t == kEmptyReadySlot) {
      return false;
    }
    if (t >= num_tasks) {
      stop(Inconsistency::kTaskIndex, slot, t);
      return false;
    }
    std::atomic_ref<std::uint32_t> failure(state->failure);
    if (failure.load(std::memory_order_acquire) == static_cast<std::uint32_t>(TaskFailure::kNone)) {
      OffsetFailure offset;
      const TaskOutcome outcome = run_task(t, worker, team, &offset);
      if (outcome.failed()) {
        auto expected = static_cast<std::uint32_t>(TaskFailure::kNone);
        if (failure.compare_exchange_strong(expected, static_cast<std::uint32_t>(outcome.cause),
                                            std::memory_order_acq_rel)) {
          state->failed_task = static_cast<std::int32_t>(t);
          state->failed_code = outcome.code;
          offset_failure = offset;
        }
      }
    }
    return !is_stopped() && release_successors(t);
  }

  // Takes ready tasks until every task has completed or the execution stopped (worker 0), or
  // until none is ready (a helper). A worker claims queue slots only once tasks were pushed
  // into them, so the worker that makes a successor ready (having just run its predecessor,
  // with that data in its cache) usually runs it too, and an idle worker never holds a slot the
  // others need. A worker claims several slots at once when many are ready (a share of the
  // backlog that shrinks with it, as guided self-scheduling does), so tiny tasks do not contend
  // for the queue head or the completion count (a claim's tasks count as completed together),
  // and it invites the idle helpers whenever it leaves ready tasks behind;
  // a graph without parallelism (a chain) never wakes a helper.
  //
  // Worker 0's wait for more ready tasks has no time bound (a kernel may run for as long as it
  // needs); it ends when the state shows that no more can come: every pushed task completed
  // (completed == next_push) while some task never ran.
  void work(unsigned worker, const WorkerPool::Team &team) {
    std::atomic_ref<std::uint32_t> next_pop(state->next_pop);
    std::atomic_ref<std::uint32_t> next_push(state->next_push);
    std::atomic_ref<std::uint32_t> completed(state->completed);
    const auto finished_or_stalled = [&] {
      // completed is read before next_push: when both agree, every task ever pushed had
      // completed when completed was read, so no running task is left to push another.
      const std::uint32_t done = completed.load(std::memory_order_acquire);
      if (done == num_tasks) {
        return true;
      }
      if (done > num_tasks) {
        stop(Inconsistency::kCompletedPastTasks, done, num_tasks);
        return true;
      }
      if (done == next_push.load(std::memory_order_acquire)) {
        stop(Inconsistency::kStalled, done, num_tasks);
        return true;
      }
      return is_stopped();
    };
    const std::uint32_t share_divisor = 2 * team.size();
    std::uint64_t joined = 0;  // the serial of the last shared task this worker joined
    std::uint32_t slot = next_pop.load(std::memory_order_acquire);
    for (;;) {
      if (is_stopped()) {
        return;
      }
      if (join_shared_task(&joined)) {
        slot = next_pop.load(std::memory_order_acquire);
        continue;
      }
      const std::uint32_t pushed = next_push.load(std::memory_order_acquire);
      if (slot >= pushed) {
        if (finished_or_stalled()) {
          return;
        }
        const bool more = spin_until([&] {
          return next_pop.load(std::memory_order_acquire) <
                     next_push.load(std::memory_order_acquire) ||
                 has_new_shared_task(joined) || finished_or_stalled();
        });
        if (!more) {
          if (worker != 0) {
            return;
          }
          std::this_thread::yield();
        }
        slot = next_pop.load(std::memory_order_acquire);
        continue;
      }
      const std::uint32_t backlog = pushed - slot;
      const std::uint32_t claim = std::clamp<std::uint32_t>(backlog / share_divisor, 1, kMaxClaim);
      if (!next_pop.compare_exchange_weak(slot, slot + claim, std::memory_order_acq_rel)) {
        continue;
      }
      if (backlog > claim) {
        team.invite();
      }
      for (std::uint32_t taken = slot; taken < slot + claim; ++taken) {
        if (!run_slot(taken, worker, team)) {
          return;
        }
      }
      completed.fetch_add(claim, std::memory_order_acq_rel);
      slot = next_pop.load(std::memory_order_acquire);
    }
  }

  static void work_entry(void *self, unsigned worker, const WorkerPool::Team &team) {
    static_cast<Execution *>(self)->work(worker, team);
  }

  // The KERNEL_FAILED status for the recorded inconsistency.
  Status inconsistency_status() const {
    const char *what = "";
    switch (inconsistency) {
      case Inconsistency::kNone:
        what = "no inconsistency";
        break;
      case Inconsistency::kTaskIndex:
        what = "a ready slot (first number) holds a value that is not a task index";
        break;
      case Inconsistency::kSuccessorRange:
        what = "a task's successor range (task, first successor) lies outside the edges";
        break;
      case Inconsistency::kSuccessorIndex:
        what = "a task's successor (task, successor) is not a task index";
        break;
      case Inconsistency::kQueueOverflow:
        what = "more tasks became ready than the image has (task, slot)";
        break;
      case Inconsistency::kCompletedPastTasks:
        what = "more tasks completed (first number) than the image has";
        break;
      case Inconsistency::kStalled:
        what =
            "tasks never become ready: their predecessor counts exceed their edges (completed, "
            "tasks)";
        break;
      case Inconsistency::kSlotNeverFilled:
        what = "a claimed ready slot (first number) was never filled";
        break;
      case Inconsistency::kUnknownKernel:
        what = "a task (task, kernel id) names a kernel the simulator cannot run";
        break;
      case Inconsistency::kOperands:
        return Status::error(
            RRT_ERR_KERNEL_FAILED,
            format("callable %d: inconsistent task-graph image at %p: task %u: %s (first operand "
                   "%llu of %zu)",
                   image->callable_id, static_cast<const void *>(image), where,
                   describe(operand_error), static_cast<unsigned long long>(value),
                   operands.size()));
    }
    return Status::error(RRT_ERR_KERNEL_FAILED,
                         format("callable %d: inconsistent task-graph image at %p or its scheduler "
                                "state: %s (%u, %llu); the launch stopped",
                                image->callable_id, static_cast<const void *>(image), what, where,
                                static_cast<unsigned long long>(value)));
  }
};

Status device_failure(std::string message) {
  return Status::error(RRT_ERR_KERNEL_FAILED, std::move(message));
}

// OK when a copied scheduler seed is the reset state of `num_tasks` tasks: nothing popped,
// completed or failed, at most num_tasks ready task indices, and the rest of the queue empty.
Status check_seed(const SchedulerStateHeader &seed, const std::uint32_t *ready,
                  std::uint32_t num_tasks, const void *address) {
  if (seed.next_push > num_tasks || seed.next_pop != 0 || seed.completed != 0 ||
      seed.failure != static_cast<std::uint32_t>(TaskFailure::kNone)) {
    return device_failure(format(
        "the scheduler seed at %p is inconsistent: %u ready, %u taken, %u completed, failure %u "
        "for %u tasks",
        address, seed.next_push, seed.next_pop, seed.completed, seed.failure, num_tasks));
  }
  for (std::uint32_t slot = 0; slot < num_tasks; ++slot) {
    const bool filled = slot < seed.next_push;
    if (filled ? ready[slot] >= num_tasks : ready[slot] != kEmptyReadySlot) {
      return device_failure(format(
          "the scheduler seed at %p is inconsistent: ready slot %u holds task index %u of %u "
          "tasks",
          address, slot, ready[slot], num_tasks));
    }
  }
  return Status::ok();
}

// `invocation`, or a copy of it in *storage when it is not 8-byte aligned.
const std::byte *aligned_invocation(const std::byte *invocation, std::size_t bytes,
                                    std::vector<std::uint64_t> *storage) {
  if (reinterpret_cast<std::uintptr_t>(invocation) % alignof(std::uint64_t) == 0) {
    return invocation;
  }
  storage->resize((bytes + 7) / 8);
  std::memcpy(storage->data(), invocation, bytes);
  return reinterpret_cast<const std::byte *>(storage->data());
}

// OK when `image` is the image `header` names: its magic, identity, counts and layout check out.
Status check_image(const InvocationHeader &header, const TaskGraphHeader *image) {
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
  if (!task_graph_layout_matches(*image)) {
    return device_failure(format(
        "callable %d: inconsistent task-graph image at %p: its sections lie outside the image "
        "its counts describe (%u tasks, %u operands, %u edges, %llu bytes)",
        image->callable_id, static_cast<const void *>(image), image->num_tasks, image->num_operands,
        image->num_edges, static_cast<unsigned long long>(image->image_bytes)));
  }
  return Status::ok();
}

// Points `run` at the image, its sections and the payload's task timings.
void view_image(const TaskGraphHeader *image, Execution *run) {
  const auto *base = reinterpret_cast<const std::byte *>(image);
  run->image = image;
  run->num_tasks = image->num_tasks;
  run->num_edges = image->num_edges;
  run->tasks = reinterpret_cast<const TaskRecord *>(base + image->tasks_offset);
  run->operands = std::span<const OperandRecord>(
      reinterpret_cast<const OperandRecord *>(base + image->operands_offset), image->num_operands);
  run->successors = reinterpret_cast<const std::uint32_t *>(base + image->successors_offset);
  run->views = std::span<const ViewRecord>(
      reinterpret_cast<const ViewRecord *>(base + image->views_offset), image->num_views);
  run->device_values = std::span<const DeviceValueRecord>(
      reinterpret_cast<const DeviceValueRecord *>(base + image->device_values_offset),
      image->num_device_values);
  run->timings = reinterpret_cast<TaskTiming *>(run->payload.timings_address);
}

// Copies the image's seed to `state_bytes` and checks it is this generation's reset state.
Status copy_scheduler_seed(const Execution &run, std::byte *state_bytes) {
  const TaskGraphHeader &image = *run.image;
  std::memcpy(state_bytes, reinterpret_cast<const void *>(image.scheduler_seed),
              scheduler_state_bytes(run.num_tasks));
  if (run.state->generation != image.generation) {
    return device_failure(format(
        "the scheduler seed at %p belongs to generation %llu, the image to %llu: the seed was "
        "replaced after the launch was encoded",
        reinterpret_cast<const void *>(image.scheduler_seed),
        static_cast<unsigned long long>(run.state->generation),
        static_cast<unsigned long long>(image.generation)));
  }
  return check_seed(*run.state, run.ready, run.num_tasks,
                    reinterpret_cast<const void *>(image.scheduler_seed));
}

// Writes the reset state the tasks' predecessor counts give: nothing taken, the roots ready.
void reset_from_predecessor_counts(const Execution &run) {
  *run.state = SchedulerStateHeader{0, 0, 0, 0, -1, 0, run.image->generation};
  std::uint32_t roots = 0;
  for (std::uint32_t t = 0; t < run.num_tasks; ++t) {
    run.remaining[t] = run.tasks[t].num_predecessors;
    run.ready[t] = kEmptyReadySlot;
  }
  for (std::uint32_t t = 0; t < run.num_tasks; ++t) {
    if (run.tasks[t].num_predecessors == 0) {
      run.ready[roots++] = t;
    }
  }
  run.state->next_push = roots;
}

// Points `run` at the image's scheduler state and resets it, from the image's seed when it has one.
Status reset_scheduler_state(Execution *run) {
  auto *state_bytes = reinterpret_cast<std::byte *>(run->image->scheduler_state);
  if (state_bytes == nullptr) {
    return device_failure("image names no scheduler state");
  }
  run->state = reinterpret_cast<SchedulerStateHeader *>(state_bytes);
  run->remaining = reinterpret_cast<std::uint32_t *>(state_bytes + scheduler_remaining_offset());
  run->ready =
      reinterpret_cast<std::uint32_t *>(state_bytes + scheduler_ready_offset(run->num_tasks));
  if (run->image->scheduler_seed != 0) {
    return copy_scheduler_seed(*run, state_bytes);
  }
  reset_from_predecessor_counts(*run);
  return Status::ok();
}

// Writes one finished launch to the device-wall record `wall`, counting it among its launches.
void record_launch(LaunchRecord *wall, std::uint64_t start_ns, std::uint32_t tasks,
                   unsigned workers) {
  wall->start_ns = start_ns;
  wall->end_ns = now_ns();
  wall->tasks = tasks;
  wall->workers = workers;
  ++wall->launches;
}

// The KERNEL_FAILED status for the task failure the scheduler state records; OK when there is none.
Status task_failure_status(const Execution &run) {
  const auto failure = static_cast<TaskFailure>(run.state->failure);
  if (failure == TaskFailure::kNone) {
    return Status::ok();
  }
  const std::int32_t callable_id = run.image->callable_id;
  const std::int32_t task = run.state->failed_task;
  const std::int32_t kernel_id = task >= 0 && static_cast<std::uint32_t>(task) < run.num_tasks
                                     ? run.tasks[task].kernel_id
                                     : -1;
  const char *name =
      run.kernels->contains(kernel_id) ? run.kernels->entry(kernel_id).name.c_str() : "<unknown>";
  switch (failure) {
    case TaskFailure::kNone:
    case TaskFailure::kKernelReturned:
      break;
    case TaskFailure::kViewOffsetOutOfRange: {
      const OffsetFailure &offset = run.offset_failure;
      return device_failure(format(
          "callable %d task %d (kernel '%s'): tensor operand %u (view %u) reads its offset from a "
          "device value of %lld, outside [0, %llu]; the task did not run",
          callable_id, task, name, offset.operand, offset.view,
          static_cast<long long>(offset.value), static_cast<unsigned long long>(offset.max)));
    }
    case TaskFailure::kKernelThrew:
      return device_failure(
          format("callable %d task %d (kernel '%s') threw an exception", callable_id, task, name));
  }
  return device_failure(format("callable %d task %d (kernel '%s') failed with code %d", callable_id,
                               task, name, run.state->failed_code));
}

}  // namespace

DeviceRuntime::DeviceRuntime(const KernelRegistry &kernels, unsigned workers)
    : kernels_(kernels), pool_(workers > 1 ? workers - 1 : 0) {}

namespace {

// The simulator's device reads the uploaded image itself at every execution: a prepared
// callable carries nothing beyond having passed prepare's checks.
class SimExecutable final : public PreparedExecutable {};

}  // namespace

Status DeviceRuntime::prepare(const TaskGraphSpec &spec, std::unique_ptr<PreparedExecutable> *out) {
  TaskGraphView view;
  RRT_RETURN_IF_ERROR(view_task_graph(spec.image, &view));
  for (std::uint32_t t = 0; t < view.header.num_tasks; ++t) {
    const std::int32_t kernel = view.tasks[t].kernel_id;
    if (!kernels_.contains(kernel) || kernels_.entry(kernel).host_fn == nullptr) {
      return Status::error(
          RRT_ERR_UNSUPPORTED,
          format("callable %d task %u names kernel %d, which the simulator cannot run (it has "
                 "no host function)",
                 view.header.callable_id, t, kernel));
    }
  }
  *out = std::make_unique<SimExecutable>();
  return Status::ok();
}

Status DeviceRuntime::enqueue(Stream &stream, const PreparedExecutable &executable,
                              const LaunchBinding &binding) {
  // SimExecutable is final: comparing the exact type is the cast's test without its walk of
  // the class hierarchy, which showed in every launch's profile.
  if (typeid(executable) != typeid(SimExecutable)) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         "simulator launch of a callable another executor prepared");
  }
  LaunchRequest launch;
  launch.entry = &DeviceRuntime::entry;
  launch.entry_context = this;
  launch.invocation = binding.invocation;
  launch.referenced = binding.referenced;
  return stream.enqueue_launch(launch);
}

Status DeviceRuntime::entry(void *self, const std::byte *invocation, std::size_t bytes) {
  return static_cast<DeviceRuntime *>(self)->execute(invocation, bytes);
}

Status DeviceRuntime::execute(const std::byte *invocation, std::size_t bytes) {
  std::vector<std::uint64_t> aligned;
  invocation = aligned_invocation(invocation, bytes, &aligned);
  InvocationHeader header;
  Execution run{};
  RRT_RETURN_IF_ERROR(decode_invocation(invocation, bytes, &header, &run.payload));
  const auto *image = reinterpret_cast<const TaskGraphHeader *>(run.payload.image_address);
  RRT_RETURN_IF_ERROR(check_image(header, image));
  run.kernels = &kernels_;
  view_image(image, &run);
  auto *wall = reinterpret_cast<LaunchRecord *>(run.payload.wall_address);
  const std::uint64_t launch_start = wall != nullptr ? now_ns() : 0;
  RRT_RETURN_IF_ERROR(reset_scheduler_state(&run));

  const unsigned workers = pool_.run(&Execution::work_entry, &run);
  if (wall != nullptr) {
    record_launch(wall, launch_start, run.num_tasks, workers);
  }
  if (run.stopped.load(std::memory_order_acquire)) {
    return run.inconsistency_status();
  }
  return task_failure_status(run);
}

}  // namespace replayrt::sim
