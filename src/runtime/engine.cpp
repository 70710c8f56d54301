#include "runtime/engine.h"

#include <set>
#include <utility>

#include "common/format.h"
#include "context/launch_scope.h"
#include "runtime/run_args.h"
#include "runtime/task_graph_builder.h"

namespace replayrt {

namespace {

// Kernel-mode context generations are process-unique: a generation is never accepted twice.
// A request for 0 gets the largest generation no context has claimed, so runtime-picked
// generations stay clear of the small ones callers usually choose.
std::mutex g_generation_mutex;
std::set<std::uint64_t> &claimed_generations() {
  static std::set<std::uint64_t> claimed;
  return claimed;
}

Status claim_context_generation(std::uint64_t requested, std::uint64_t *claimed) {
  const std::lock_guard<std::mutex> lock(g_generation_mutex);
  std::set<std::uint64_t> &taken = claimed_generations();
  std::uint64_t generation = requested;
  if (generation == 0) {
    generation = UINT64_MAX;
    for (auto it = taken.rbegin(); it != taken.rend() && *it == generation; ++it) {
      --generation;
    }
  }
  if (!taken.insert(generation).second) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("context generation %llu was already used in this process",
                                static_cast<unsigned long long>(generation)));
  }
  *claimed = generation;
  return Status::ok();
}

void unclaim_context_generation(std::uint64_t generation) noexcept {
  const std::lock_guard<std::mutex> lock(g_generation_mutex);
  claimed_generations().erase(generation);
}

}  // namespace

Status Engine::create(std::unique_ptr<Device> device, unsigned device_workers,
                      std::unique_ptr<Engine> *out) {
  std::unique_ptr<Engine> engine(new Engine(std::move(device)));
  ExecutorConfig executor;
  executor.kernels = &engine->kernels_;
  executor.sim_workers = device_workers;
  RRT_RETURN_IF_ERROR(engine->device_->create_executor(executor, &engine->executor_));
  for (auto &stream : engine->own_streams_) {
    RRT_RETURN_IF_ERROR(engine->device_->create_stream(&stream));
  }
  for (auto &event : engine->slot_done_) {
    RRT_RETURN_IF_ERROR(engine->device_->create_event(&event));
  }
  for (auto &event : engine->slot_used_) {
    RRT_RETURN_IF_ERROR(engine->device_->create_event(&event));
  }
  RRT_RETURN_IF_ERROR(engine->device_->create_event(&engine->serial_tail_));
  *out = std::move(engine);
  return Status::ok();
}

Engine::Engine(std::unique_ptr<Device> device)
    : device_(std::move(device)), context_(*device_), kernels_(device_->builtin_launchers()) {}

Engine::~Engine() {
  for (auto &stream : own_streams_) {
    if (stream) {
      (void)stream->synchronize();
    }
    stream.reset();
  }
  context_.release_all();
}

Status Engine::check_ready() const {
  // The handshake with finalize is store-buffering: an entry increments in_flight_ (InFlight)
  // and then loads lifecycle_; finalize stores kFinalizing and then loads in_flight_. With all
  // four seq_cst, at least one side sees the other's store: the entry is refused, or finalize
  // finds it in flight and refuses.
  switch (lifecycle_.load(std::memory_order_seq_cst)) {
    case Lifecycle::kReady:
      return Status::ok();
    case Lifecycle::kCreated:
      return Status::error(RRT_ERR_INVALID_STATE,
                           "the context is not initialized (call rrt_program_init or "
                           "rrt_kernel_init first)");
    case Lifecycle::kFinalizing:
    case Lifecycle::kFinalized:
      return Status::error(RRT_ERR_INVALID_STATE, "the context is finalized");
  }
  return Status::error(RRT_ERR_INVALID_STATE, "the context is in an unknown state");
}

Engine::InFlight::InFlight(const Engine &engine) noexcept : engine_(engine) {
  engine_.in_flight_.fetch_add(1, std::memory_order_seq_cst);
}

Engine::InFlight::~InFlight() {
  engine_.in_flight_.fetch_sub(1, std::memory_order_release);
}

Status Engine::free_caller_buffer(void *buffer, std::span<Stream *const> caller_streams) {
  const std::lock_guard<std::mutex> lock(launch_mutex_);
  for (Stream *stream : caller_streams) {
    RRT_RETURN_IF_ERROR(stream->wait_idle());
  }
  for (auto &stream : own_streams_) {
    RRT_RETURN_IF_ERROR(stream->wait_idle());
  }
  return device_->free(buffer);
}

Status Engine::program_init() {
  RRT_RETURN_IF_ERROR(context_.latch().latch(ExecutionMode::kProgram));
  lifecycle_.store(Lifecycle::kReady, std::memory_order_release);
  return Status::ok();
}

Status Engine::kernel_init(const rrt_capacity_plan_t &plan, std::uint64_t context_generation,
                           std::uint32_t profile_tasks) {
  if (context_.latch().is_latched() && !context_.latch().is_kernel()) {
    return context_.latch().latch(ExecutionMode::kKernel);
  }
  const Lifecycle state = lifecycle_.load(std::memory_order_acquire);
  if (context_.latch().is_latched() ||
      (state != Lifecycle::kCreated && state != Lifecycle::kFinalized)) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "kernel init accepts only a context that was never initialized; this "
                         "one was already initialized");
  }
  std::uint64_t generation = 0;
  RRT_RETURN_IF_ERROR(claim_context_generation(context_generation, &generation));
  // Nothing is published before the latch, so a failed commit leaves the engine as created.
  Status committed = context_.commit_capacity_plan(plan, profile_tasks);
  if (committed.is_ok()) {
    committed = context_.latch().latch(ExecutionMode::kKernel);
  }
  if (!committed.is_ok()) {
    context_.release_all();
    unclaim_context_generation(generation);
    return std::move(committed).with_context("kernel init could not commit the capacity plan");
  }
  lifecycle_.store(Lifecycle::kReady, std::memory_order_release);
  return Status::ok();
}

Status Engine::finalize() {
  const Lifecycle before = lifecycle_.exchange(Lifecycle::kFinalizing, std::memory_order_seq_cst);
  if (in_flight_.load(std::memory_order_seq_cst) != 0) {
    lifecycle_.store(before, std::memory_order_release);
    return Status::error(RRT_ERR_INVALID_STATE,
                         "finalize raced with a launch, replay, run or prepare in progress on "
                         "another thread; the context is unchanged");
  }
  Status drained;
  for (auto &stream : own_streams_) {
    Status failure = stream->synchronize();
    if (drained.is_ok()) {
      drained = std::move(failure);
    }
  }
  {
    const std::lock_guard<std::mutex> lock(launch_mutex_);
    last_serialized_stream_ = nullptr;
  }
  callables_.clear();
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  context_.release_all();
  lifecycle_.store(Lifecycle::kFinalized, std::memory_order_release);
  return drained;
}

Status Engine::prepare_callable(const rrt_callable_desc_t &desc, std::int32_t *out_id) {
  const InFlight call(*this);
  RRT_RETURN_IF_ERROR(check_ready());
  std::unique_ptr<const Callable> callable;
  RRT_RETURN_IF_ERROR(Callable::create(desc, kernels_, &callable));
  const CallableRequirements &needs = callable->requirements();
  if (needs.image > kMaxCallableImageBytes) {
    return Status::error(RRT_ERR_CALLABLE_BYTES_EXCEEDED,
                         format("the callable's image needs %llu bytes; the callable store "
                                "holds at most %llu per callable",
                                static_cast<unsigned long long>(needs.image),
                                static_cast<unsigned long long>(kMaxCallableImageBytes)));
  }
  std::shared_ptr<const Callable> shared = std::move(callable);
  const BindStrategy &strategy = bind_strategy(shared->bind());
  return callables_.add(
      [&](std::int32_t id, CallableRecord *record) {
        record->callable = shared;
        // The executor's copy is relocatable: its baked addresses are offsets from gm_heap.
        std::vector<std::byte> image(needs.image);
        const ImageBinding relocatable{id, record->generation, nullptr, nullptr, nullptr};
        RRT_RETURN_IF_ERROR(build_task_graph_image(*shared, relocatable, image));
        std::unique_ptr<PreparedExecutable> executable;
        RRT_RETURN_IF_ERROR(executor_->prepare(TaskGraphSpec{image}, &executable));
        record->executable = std::move(executable);
        return is_kernel() ? strategy.place_resident(context_, *shared, id, record->generation,
                                                     &record->resident)
                           : Status::ok();
      },
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

BindRequest Engine::bind_request(std::int32_t id, const CallableRecord &record,
                                 const RunArgsView &args) {
  BindRequest request;
  request.callable = record.callable.get();
  request.callable_id = id;
  request.generation = record.generation;
  request.args = args;
  request.resident = record.resident;
  return request;
}

Status Engine::enqueue_bound(const PreparedExecutable &executable, const BoundRun &bound,
                             Stream &stream) {
  for (const StagedCopy &copy : bound.copies_in) {
    RRT_RETURN_IF_ERROR(stream.enqueue_copy_host_to_device(copy.dst, copy.src, copy.bytes));
  }
  RRT_RETURN_IF_ERROR(executor_->enqueue(stream, executable, bound.binding()));
  for (const StagedCopy &copy : bound.copies_out) {
    RRT_RETURN_IF_ERROR(stream.enqueue_copy_device_to_host(copy.dst, copy.src, copy.bytes));
  }
  return Status::ok();
}

Status Engine::run_prepare(std::int32_t callable_id, const RunArgsView &args,
                           std::unique_ptr<ProgramRun> *out) {
  const InFlight call(*this);
  RRT_RETURN_IF_ERROR(check_ready());
  if (is_kernel()) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "program-mode runs are not available on a kernel-mode context; use "
                         "rrt_kernel_launch");
  }
  const CallableRecord *found = nullptr;
  RRT_RETURN_IF_ERROR(find_callable(callable_id, &found));
  const CallableRecord &record = *found;
  RRT_RETURN_IF_ERROR(validate_run_args(*record.callable, args, *device_));
  std::vector<CapturedAddress> device_tensors = device_tensor_allocations(args, *device_);

  int slot = -1;
  RRT_RETURN_IF_ERROR(context_.claim_slot(&slot));
  // The slot's blocks may still be in use by a replay or an earlier run; the bind may upload
  // into them.
  slot_used_[static_cast<std::size_t>(slot)]->wait();
  auto run = std::make_unique<ProgramRun>();
  run->slot_ = slot;
  run->callable_id_ = callable_id;
  run->callable_ = record.callable;
  run->executable_ = record.executable;
  run->strategy_ = &bind_strategy(record.callable->bind());
  run->device_tensors_ = std::move(device_tensors);
  run->epoch_ = epoch_.load(std::memory_order_acquire);
  Status bound = run->strategy_->bind(context_.slot(slot), bind_request(callable_id, record, args),
                                      &run->bound_);
  if (!bound.is_ok()) {
    context_.release_slot(slot);
    return bound;
  }
  *out = std::move(run);
  return Status::ok();
}

Status Engine::run_launch(ProgramRun &run, Stream *stream) {
  const InFlight call(*this);
  RRT_RETURN_IF_ERROR(check_ready());
  if (run.epoch_ != epoch_.load(std::memory_order_acquire)) {
    run.state_ = ProgramRun::State::kAbandoned;
  }
  if (run.state_ != ProgramRun::State::kPrepared) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "the run is not in the prepared state (it was launched already, or "
                         "its context was finalized)");
  }
  Stream &target = stream != nullptr ? *stream : *own_streams_[static_cast<std::size_t>(run.slot_)];
  if (target.capture_is_foreign()) {
    // A program-mode run's buffers may move later (free + malloc); a graph replayrt does not
    // own could not be checked for it at replay.
    return Status::error(RRT_ERR_INVALID_STATE,
                         "program-mode runs cannot be captured by a capture replayrt does not "
                         "own (the stream's native stream is being captured by its owner); "
                         "capture a kernel-mode launch, whose addresses never move, instead");
  }
  // Under the launch mutex, so a free of a tensor's buffer (free_caller_buffer) comes wholly
  // before or after the launch.
  const std::lock_guard<std::mutex> lock(launch_mutex_);
  RRT_RETURN_IF_ERROR(check_device_tensor_allocations(run.device_tensors_, *device_));
  run.captured_ = target.is_capturing();
  Status enqueued;
  if (run.captured_) {
    enqueued = enqueue_bound(*run.executable_, run.bound_, target);
  } else {
    enqueued = serialize_before(target);
    if (enqueued.is_ok()) {
      last_serialized_stream_ = &target;
      enqueued = enqueue_bound(*run.executable_, run.bound_, target);
    }
    if (enqueued.is_ok()) {
      enqueued = target.record_event(*slot_done_[static_cast<std::size_t>(run.slot_)]);
    }
    if (enqueued.is_ok()) {
      enqueued = target.record_event(*slot_used_[static_cast<std::size_t>(run.slot_)]);
    }
  }
  if (!enqueued.is_ok()) {
    run.state_ = ProgramRun::State::kFailed;
    return enqueued;
  }
  run.stream_ = &target;
  run.state_ = ProgramRun::State::kLaunched;
  context_.counters().launches.fetch_add(1, std::memory_order_relaxed);
  return Status::ok();
}

Status Engine::run_wait(ProgramRun &run) {
  if (run.state_ == ProgramRun::State::kCompleted) {
    return Status::ok();
  }
  if (run.state_ != ProgramRun::State::kLaunched) {
    return Status::error(RRT_ERR_INVALID_STATE, "the run was not launched");
  }
  if (run.captured_) {
    run.state_ = ProgramRun::State::kCompleted;
    return Status::ok();
  }
  Status done = slot_done_[static_cast<std::size_t>(run.slot_)]->synchronize();
  if (!done.is_ok()) {
    run.state_ = ProgramRun::State::kFailed;
    return done;
  }
  run.state_ = ProgramRun::State::kCompleted;
  return Status::ok();
}

Status Engine::run_finalize(ProgramRun &run) {
  Status waited;
  if (run.state_ == ProgramRun::State::kLaunched) {
    waited = run_wait(run);
  }
  if (run.epoch_ == epoch_.load(std::memory_order_acquire) &&
      run.state_ != ProgramRun::State::kAbandoned) {
    context_.release_slot(run.slot_);
  }
  run.state_ = ProgramRun::State::kAbandoned;
  return waited;
}

Status Engine::kernel_launch(std::int32_t callable_id, const RunArgsView &args, Stream &caller) {
  const InFlight call(*this);
  RRT_RETURN_IF_ERROR(check_ready());
  if (!is_kernel()) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "kernel launches need a kernel-mode context; this one is in program "
                         "mode (use rrt_run)");
  }
  const CallableRecord *record = nullptr;
  RRT_RETURN_IF_ERROR(find_callable(callable_id, &record));
  // The arguments are checked under the launch mutex, so a free of a tensor's buffer
  // (free_caller_buffer) comes wholly before or after the launch.
  const std::lock_guard<std::mutex> lock(launch_mutex_);
  RRT_RETURN_IF_ERROR(validate_run_args(*record->callable, args, *device_));
  const bool capturing = caller.is_capturing();
  const auto tasks = static_cast<std::uint32_t>(record->callable->tasks().size());
  BindRequest request = bind_request(callable_id, *record, args);
  // With profiling on, the launches one capture holds write their task records one after
  // another, or each from the first record on.
  const bool counts_records = capturing && context_.profiling();
  if (counts_records && !each_launch_from_the_first_record_) {
    const auto held = capture_profile_tasks_.find(&caller);
    request.profile_offset = held != capture_profile_tasks_.end() ? held->second : 0;
  }
  {
    const LaunchScope scope(context_);
    RRT_RETURN_IF_ERROR(
        bind_strategy(record->callable->bind()).bind(context_.slot(0), request, &launch_scratch_));
  }
  if (!capturing) {
    RRT_RETURN_IF_ERROR(serialize_before(caller));
  }
  RRT_RETURN_IF_ERROR(enqueue_bound(*record->executable, launch_scratch_, caller));
  if (counts_records) {
    capture_profile_tasks_[&caller] = request.profile_offset + tasks;
  }
  if (!capturing) {
    last_serialized_stream_ = &caller;
    last_profile_tasks_ = tasks;
  }
  context_.counters().launches.fetch_add(1, std::memory_order_relaxed);
  return Status::ok();
}

Status Engine::replay(const Graph &graph, Stream &stream, std::uint32_t profile_tasks) {
  const InFlight call(*this);
  RRT_RETURN_IF_ERROR(check_ready());
  Status replayed;
  if (!stream.is_capturing()) {
    const std::lock_guard<std::mutex> lock(launch_mutex_);
    // Ordering enqueues work; a stale graph must enqueue nothing, so it is checked first.
    replayed = last_serialized_stream_ == &stream ? Status::ok() : graph.check_addresses();
    if (replayed.is_ok()) {
      replayed = serialize_before(stream);
    }
    if (replayed.is_ok()) {
      last_serialized_stream_ = &stream;
      replayed = stream.replay(graph);
    }
    if (replayed.is_ok()) {
      last_profile_tasks_ = profile_tasks;
    }
    // A program-mode graph may have been captured from either slot.
    for (std::size_t slot = 0; replayed.is_ok() && !is_kernel() && slot < slot_used_.size();
         ++slot) {
      replayed = stream.record_event(*slot_used_[slot]);
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

Status Engine::run_profile(const ProgramRun &run, LaunchProfile *out) const {
  if (run.state_ != ProgramRun::State::kCompleted || run.captured_) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "the run has not completed (wait for it before reading its profile)");
  }
  out->tasks.resize(run.callable_->tasks().size());
  std::uint32_t read = 0;
  RRT_RETURN_IF_ERROR(context_.read_task_records(run.slot_, &out->launch, out->tasks.data(),
                                                 static_cast<std::uint32_t>(out->tasks.size()),
                                                 &read));
  out->tasks.resize(std::min<std::size_t>(read, out->launch.tasks));
  return Status::ok();
}

Status Engine::kernel_profile(LaunchProfile *out) const {
  if (!is_kernel()) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "the context is not in kernel mode (read a run's profile instead)");
  }
  std::uint32_t records = 0;
  {
    // The records belong to the most recent launch or replay once it has completed.
    const std::lock_guard<std::mutex> lock(launch_mutex_);
    if (last_serialized_stream_ != nullptr) {
      RRT_RETURN_IF_ERROR(last_serialized_stream_->record_event(*serial_tail_));
    }
    records = last_profile_tasks_;
  }
  serial_tail_->wait();
  out->tasks.resize(records);
  std::uint32_t read = 0;
  RRT_RETURN_IF_ERROR(
      context_.read_task_records(0, &out->launch, out->tasks.data(), records, &read));
  out->tasks.resize(read);
  return Status::ok();
}

Status Engine::serialize_before(Stream &stream) {
  if (last_serialized_stream_ == &stream) {
    return Status::ok();
  }
  if (last_serialized_stream_ != nullptr) {
    RRT_RETURN_IF_ERROR(last_serialized_stream_->record_event(*serial_tail_));
  }
  return stream.wait_event(*serial_tail_);
}

void Engine::before_capture(Stream &stream) {
  const std::lock_guard<std::mutex> lock(launch_mutex_);
  capture_profile_tasks_.erase(&stream);
  if (last_serialized_stream_ == &stream) {
    (void)stream.record_event(*serial_tail_);
    last_serialized_stream_ = nullptr;
  }
}

void Engine::before_stream_destroy(Stream &stream) {
  before_capture(stream);
}

std::uint32_t Engine::take_capture_profile_tasks(Stream &stream) {
  const std::lock_guard<std::mutex> lock(launch_mutex_);
  const auto held = capture_profile_tasks_.find(&stream);
  if (held == capture_profile_tasks_.end()) {
    return 0;
  }
  const std::uint32_t tasks = held->second;
  capture_profile_tasks_.erase(held);
  return tasks;
}

}  // namespace replayrt
