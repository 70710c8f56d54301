#include "runtime/engine.h"

#include <utility>

#include "common/format.h"
#include "runtime/task_graph_builder.h"

namespace replayrt {

Status Engine::create(std::unique_ptr<Device> device, unsigned device_workers,
                      GenerationRegistry &generations, std::unique_ptr<Engine> *out) {
  std::unique_ptr<Event> order_tail;
  RRT_RETURN_IF_ERROR(device->create_event(&order_tail));
  std::unique_ptr<Engine> engine(new Engine(std::move(device), generations, std::move(order_tail)));
  ExecutorConfig executor;
  executor.kernels = &engine->kernels_;
  executor.sim_workers = device_workers;
  RRT_RETURN_IF_ERROR(engine->device_->create_executor(executor, &engine->executor_));
  RRT_RETURN_IF_ERROR(ProgramPipeline::create(
      *engine->device_, engine->context_, *engine->executor_, engine->order_, &engine->pipeline_));
  engine->launcher_ = std::make_unique<KernelLauncher>(*engine->device_, engine->context_,
                                                       *engine->executor_, engine->order_);
  *out = std::move(engine);
  return Status::ok();
}

Engine::Engine(std::unique_ptr<Device> device, GenerationRegistry &generations,
               std::unique_ptr<Event> order_tail)
    : device_(std::move(device)),
      generations_(generations),
      context_(*device_),
      kernels_(device_->builtin_launchers()),
      order_(std::move(order_tail)) {}

Engine::~Engine() {
  // The pipeline waits for its own streams before it goes, so no work of theirs outlives the
  // memory released next.
  pipeline_.reset();
  context_.release_all();
}

bool Engine::holds_device_range(const void *ptr, std::size_t bytes) const {
  if (bytes == 0) {
    return true;
  }
  const AddressRange range{ptr, bytes};
  return device_->first_range_outside_allocations(std::span(&range, 1)) == 1;
}

Status Engine::free_caller_buffer(void *buffer, std::span<Stream *const> caller_streams) {
  const std::lock_guard<std::mutex> lock(order_.mutex());
  RRT_RETURN_IF_ERROR(wait_for_queued_work(caller_streams));
  return device_->free(buffer);
}

Status Engine::unregister_foreign(void *ptr, std::span<Stream *const> caller_streams) {
  const std::lock_guard<std::mutex> lock(order_.mutex());
  RRT_RETURN_IF_ERROR(wait_for_queued_work(caller_streams));
  return device_->unregister_foreign(ptr);
}

Status Engine::wait_for_queued_work(std::span<Stream *const> caller_streams) {
  for (Stream *stream : caller_streams) {
    RRT_RETURN_IF_ERROR(stream->wait_idle());
  }
  return pipeline_->wait_own_streams_idle();
}

Status Engine::program_init() {
  RRT_RETURN_IF_ERROR(context_.latch().latch(ExecutionMode::kProgram));
  gate_.open();
  return Status::ok();
}

Status Engine::kernel_init(const CapacityPlan &plan, std::uint64_t context_generation,
                           std::uint32_t profile_tasks) {
  if (context_.latch().is_latched() && !context_.latch().is_kernel()) {
    return context_.latch().latch(ExecutionMode::kKernel);
  }
  if (context_.latch().is_latched() || gate_.is_open()) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "kernel init accepts only a context that was never initialized; this "
                         "one was already initialized");
  }
  GenerationClaim generation(generations_);
  RRT_RETURN_IF_ERROR(generation.claim(context_generation));
  // The latch is the commit point: the plan is staged before it and published after it, so a
  // failure or a throw on any path leaves the engine as created and the generation unclaimed.
  auto latch_kernel_mode = [this] { return context_.latch().latch(ExecutionMode::kKernel); };
  Status committed = context_.commit_capacity_plan(plan, profile_tasks, latch_kernel_mode);
  if (!committed.is_ok()) {
    return std::move(committed).with_context("kernel init could not commit the capacity plan");
  }
  generation.keep();
  gate_.open();
  return Status::ok();
}

Status Engine::finalize(std::span<Stream *const> caller_streams) {
  for (const Stream *stream : caller_streams) {
    if (stream->capture_is_foreign()) {
      return Status::error(
          RRT_ERR_INVALID_STATE,
          "finalize while the native stream of a wrapped stream is being captured outside "
          "replayrt (cudaStreamBeginCapture by its owner): the work queued on it cannot be "
          "waited for; end that capture first");
    }
  }
  gate_.close_and_drain();
  Status pending;
  for (Stream *stream : caller_streams) {
    // Work queued before a capture began still runs: wait for it before freeing.
    keep_first_failure(pending,
                       stream->is_capturing() ? stream->wait_idle() : stream->synchronize());
  }
  keep_first_failure(pending, pipeline_->synchronize_own_streams());
  {
    const std::lock_guard<std::mutex> lock(order_.mutex());
    order_.reset();
  }
  callables_.clear();
  context_.release_all();
  return pending;
}

Status Engine::fill_record(const std::shared_ptr<const Callable> &callable, std::int32_t id,
                           CallableRecord *record) {
  const std::uint64_t image_bytes = callable->requirements().image;
  record->callable = callable;
  // The executor's copy is relocatable: its baked addresses are offsets from gm_heap.
  std::vector<std::byte> image(image_bytes);
  const ImageBinding relocatable{id, record->generation, nullptr, nullptr, nullptr};
  RRT_RETURN_IF_ERROR(build_task_graph_image(*callable, relocatable, image));
  std::unique_ptr<PreparedExecutable> executable;
  RRT_RETURN_IF_ERROR(executor_->prepare(TaskGraphSpec{image}, &executable));
  record->executable = std::move(executable);
  if (!is_kernel()) {
    return Status::ok();
  }
  return bind_strategy(callable->bind())
      .place_resident(context_, *callable, id, record->generation, &record->resident);
}

Status Engine::prepare_callable(const CallableSpec &spec, std::int32_t *out_id) {
  LifecycleGate::Ticket ticket;
  RRT_RETURN_IF_ERROR(gate_.enter(&ticket));
  std::unique_ptr<const Callable> callable;
  RRT_RETURN_IF_ERROR(Callable::create(spec, kernels_, &callable));
  const CallableRequirements &needs = callable->requirements();
  if (needs.image > kMaxCallableImageBytes) {
    return Status::error(RRT_ERR_CALLABLE_BYTES_EXCEEDED,
                         format("the callable's image needs %llu bytes; the callable store "
                                "holds at most %llu per callable",
                                static_cast<unsigned long long>(needs.image),
                                static_cast<unsigned long long>(kMaxCallableImageBytes)));
  }
  std::shared_ptr<const Callable> shared = std::move(callable);
  return callables_.add(
      [&](std::int32_t id, CallableRecord *record) { return fill_record(shared, id, record); },
      out_id);
}

Status Engine::find_callable(std::int32_t id, const CallableRecord **out) const {
  const CallableRecord *record = callables_.find(id);
  if (record == nullptr) {
    return Status::error(
        RRT_ERR_CALLABLE_NOT_RESIDENT,
        format("callable id %d is not prepared in this context", static_cast<int>(id)));
  }
  *out = record;
  return Status::ok();
}

Status Engine::run_prepare(std::int32_t callable_id, const RunArgsView &args,
                           std::unique_ptr<ProgramRun> *out) {
  LifecycleGate::Ticket ticket;
  RRT_RETURN_IF_ERROR(gate_.enter(&ticket));
  if (is_kernel()) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "program-mode runs are not available on a kernel-mode context; use "
                         "rrt_kernel_launch");
  }
  const CallableRecord *record = nullptr;
  RRT_RETURN_IF_ERROR(find_callable(callable_id, &record));
  return pipeline_->prepare(callable_id, *record, args, ticket.session(), out);
}

Status Engine::run_launch(ProgramRun &run, Stream *stream) {
  LifecycleGate::Ticket ticket;
  RRT_RETURN_IF_ERROR(gate_.enter(&ticket));
  return pipeline_->launch(run, stream, ticket.session());
}

Status Engine::run_wait(ProgramRun &run) {
  // A closed gate is a finalized context: its runs belong to no session.
  return pipeline_->wait(run, gate_.is_open() ? gate_.session() : 0);
}

Status Engine::run_finalize(ProgramRun &run) {
  // Refused: the context is finalized, which released the run's slot.
  LifecycleGate::Ticket ticket;
  (void)gate_.enter(&ticket);
  return pipeline_->finalize(run, ticket.is_held() ? ticket.session() : 0);
}

Status Engine::kernel_launch(std::int32_t callable_id, const RunArgsView &args, Stream &caller) {
  LifecycleGate::Ticket ticket;
  RRT_RETURN_IF_ERROR(gate_.enter(&ticket));
  if (!is_kernel()) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "kernel launches need a kernel-mode context; this one is in program "
                         "mode (use rrt_run)");
  }
  const CallableRecord *record = nullptr;
  RRT_RETURN_IF_ERROR(find_callable(callable_id, &record));
  return launcher_->launch(callable_id, *record, args, caller);
}

Status Engine::replay(const Graph &graph, Stream &stream, std::uint32_t profile_tasks) {
  LifecycleGate::Ticket ticket;
  RRT_RETURN_IF_ERROR(gate_.enter(&ticket));
  Status replayed;
  // Whether the stream captures is read under the lock, which a begin capture takes too.
  const std::lock_guard<std::mutex> lock(order_.mutex());
  if (!stream.is_capturing()) {
    // Ordering enqueues work; a stale graph must enqueue nothing, so it is checked first.
    replayed = order_.is_last(stream) ? Status::ok() : graph.check_addresses();
    if (replayed.is_ok()) {
      replayed = order_.wait_for_previous(stream);
    }
    if (replayed.is_ok()) {
      order_.mark_last(stream);
      replayed = stream.replay(graph);
    }
    if (replayed.is_ok()) {
      launcher_->replayed(profile_tasks);
    }
    // A program-mode graph may have been captured from either slot.
    if (replayed.is_ok() && !is_kernel()) {
      pipeline_->record_replay(stream);
    }
  } else {
    replayed = stream.replay(graph);
  }
  if (replayed.is_ok()) {
    context_.counters().replays.fetch_add(1, std::memory_order_relaxed);
  } else if (replayed.code() == RRT_ERR_STALE_ADDRESS) {
    context_.counters().stale_address_refusals.fetch_add(1, std::memory_order_relaxed);
  }
  return replayed;
}

Status Engine::run_profile(const ProgramRun &run, LaunchProfile *out) {
  LifecycleGate::Ticket ticket;
  RRT_RETURN_IF_ERROR(gate_.enter(&ticket));
  return pipeline_->profile(run, ticket.session(), out);
}

Status Engine::kernel_profile(LaunchProfile *out) {
  LifecycleGate::Ticket ticket;
  RRT_RETURN_IF_ERROR(gate_.enter(&ticket));
  if (!is_kernel()) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "the context is not in kernel mode (read a run's profile instead)");
  }
  return launcher_->profile(out);
}

Status Engine::begin_capture(Stream &stream, FunctionRef<void()> prepare) {
  LifecycleGate::Ticket ticket;
  RRT_RETURN_IF_ERROR(gate_.enter(&ticket));
  const std::lock_guard<std::mutex> lock(order_.mutex());
  RRT_RETURN_IF_ERROR(order_.forget(stream));
  launcher_->forget_capture(stream);
  if (prepare) {
    prepare();
  }
  return stream.begin_capture();
}

void Engine::before_stream_destroy(Stream &stream) {
  const std::lock_guard<std::mutex> lock(order_.mutex());
  order_.forget_before_destroy(stream);
  launcher_->forget_capture(stream);
}

Status Engine::end_capture(Stream &stream, std::unique_ptr<Graph> *out,
                           std::uint32_t *profile_tasks) {
  const std::lock_guard<std::mutex> lock(order_.mutex());
  Status ended = stream.end_capture(out);
  if (!stream.is_capturing()) {
    *profile_tasks = launcher_->take_capture_profile_tasks(stream);
  }
  return ended;
}

}  // namespace replayrt
