#include "platform/sim/sim_stream.h"

#include <utility>

#include "common/format.h"
#include "platform/sim/prefetch_for_write.h"
#include "platform/sim/sim_event.h"
#include "platform/sim/spin_wait.h"

namespace replayrt::sim {

namespace {
const void *as_ptr(std::uintptr_t address) {
  return reinterpret_cast<const void *>(address);
}

SimOperation copy_operation(SimOperation::Kind kind, void *dst, const void *src,
                            std::size_t bytes) {
  SimOperation operation;
  operation.kind = kind;
  operation.dst = dst;
  operation.src = src;
  operation.bytes = bytes;
  return operation;
}

Status capturing_error(const char *call) {
  return Status::error(
      RRT_ERR_INVALID_STATE,
      format("stream %s while the stream is capturing; end the capture first", call));
}
}  // namespace

SimStream::SimStream(SimMemory &memory, HostWaitPolicy host_wait, ExecutorIdlePolicy idle)
    : memory_(memory), host_wait_(host_wait), idle_(idle) {
  executor_ = std::thread([this] { run_executor(); });
}

SimStream::~SimStream() {
  const std::uint64_t target = enqueued_.load(std::memory_order_acquire);
  run_untaken_work(target);
  wait_until_at_least(completed_, target);
  bool wake = false;
  {
    const std::lock_guard<SpinMutex> lock(mutex_);
    stopping_ = true;
    capturing_ = false;
    capture_operations_.clear();
    capture_addresses_.clear();
    wake = executor_wait_ != ExecutorWait::kRunning;
  }
  if (wake) {
    wake_.notify_one();
  }
  executor_.join();
}

Status SimStream::enqueue_copy_host_to_device(void *dst, const void *src, std::size_t bytes) {
  const DeviceRange ranges[] = {{dst, bytes, "host-to-device copy destination"}};
  return submit(copy_operation(SimOperation::Kind::kCopyHostToDevice, dst, src, bytes), ranges, {});
}

Status SimStream::enqueue_copy_device_to_host(void *dst, const void *src, std::size_t bytes) {
  const DeviceRange ranges[] = {{src, bytes, "device-to-host copy source"}};
  return submit(copy_operation(SimOperation::Kind::kCopyDeviceToHost, dst, src, bytes), ranges, {});
}

Status SimStream::enqueue_copy_device_to_device(void *dst, const void *src, std::size_t bytes) {
  const DeviceRange ranges[] = {{src, bytes, "device-to-device copy source"},
                                {dst, bytes, "device-to-device copy destination"}};
  return submit(copy_operation(SimOperation::Kind::kCopyDeviceToDevice, dst, src, bytes), ranges,
                {});
}

Status SimStream::enqueue_memset(void *dst, int value, std::size_t bytes) {
  SimOperation operation;
  operation.kind = SimOperation::Kind::kMemset;
  operation.dst = dst;
  operation.value = value;
  operation.bytes = bytes;
  const DeviceRange ranges[] = {{dst, bytes, "memset destination"}};
  return submit(std::move(operation), ranges, {});
}

Status SimStream::enqueue_launch(const LaunchRequest &request) {
  if (request.entry == nullptr) {
    Status refused =
        Status::error(RRT_ERR_INVALID_ARGUMENT, "stream launch with a null device entry");
    {
      const std::lock_guard<SpinMutex> lock(mutex_);
      fail_capture_locked(refused);
    }
    return refused;
  }
  SimOperation operation;
  operation.kind = SimOperation::Kind::kLaunch;
  operation.entry = request.entry;
  operation.entry_context = request.entry_context;
  operation.invocation = InvocationBytes(request.invocation);
  return submit(std::move(operation), {}, request.referenced);
}

Status SimStream::record_event(Event &event) {
  return submit_event_operation(event, SimOperation::Kind::kRecordEvent);
}

Status SimStream::wait_event(Event &event) {
  return submit_event_operation(event, SimOperation::Kind::kWaitEvent);
}

Status SimStream::synchronize() {
  if (capturing_.load(std::memory_order_acquire)) {
    return capturing_error("synchronize");
  }
  const std::uint64_t target = enqueued_.load(std::memory_order_acquire);
  run_untaken_work(target);
  host_wait_until_at_least(completed_, target, host_wait_);
  return failure_->report();
}

Status SimStream::wait_idle() {
  const std::uint64_t target = enqueued_.load(std::memory_order_acquire);
  run_untaken_work(target);
  host_wait_until_at_least(completed_, target, host_wait_);
  return Status::ok();
}

bool SimStream::query() const {
  const std::uint64_t target = enqueued_.load(std::memory_order_acquire);
  if (completed_.load(std::memory_order_acquire) >= target) {
    return true;
  }
  bool wake = false;
  {
    const std::lock_guard<SpinMutex> lock(mutex_);
    wake = executor_wait_ == ExecutorWait::kTimed && !queue_.empty();
  }
  if (wake) {
    wake_.notify_one();
  }
  return false;
}

Status SimStream::begin_capture() {
  const std::lock_guard<SpinMutex> lock(mutex_);
  if (capturing_) {
    return Status::error(RRT_ERR_INVALID_STATE,
                         "stream begin_capture while the stream is already capturing");
  }
  capturing_ = true;
  capture_operations_.clear();
  capture_addresses_.clear();
  capture_failure_ = Status::ok();
  return Status::ok();
}

Status SimStream::end_capture(std::unique_ptr<Graph> *out) {
  if (out == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "stream end_capture with a null graph output");
  }
  const std::lock_guard<SpinMutex> lock(mutex_);
  if (!capturing_) {
    return Status::error(RRT_ERR_INVALID_STATE, "stream end_capture without a capture in progress");
  }
  if (!capture_failure_.is_ok()) {
    capturing_ = false;
    capture_operations_.clear();
    capture_addresses_.clear();
    Status failure = std::move(capture_failure_);
    capture_failure_ = Status::ok();
    return Status::error(RRT_ERR_INVALID_STATE,
                         "stream end_capture: the graph is discarded because work enqueued "
                         "during the capture was refused: " +
                             failure.message());
  }
  // The graph's allocation comes before its arguments move the captured work (C++17 sequences
  // a new-expression's allocation first) and its constructor allocates nothing, so when the
  // host is out of memory the capture goes on with all its work and can be ended again.
  *out = std::make_unique<SimGraph>(memory_, std::move(capture_operations_),
                                    std::move(capture_addresses_));
  capture_operations_.clear();
  capture_addresses_.clear();
  capturing_ = false;
  return Status::ok();
}

bool SimStream::is_capturing() const {
  return capturing_.load(std::memory_order_acquire);
}

void SimStream::fail_enqueue(const Status &why) {
  {
    const std::lock_guard<SpinMutex> lock(mutex_);
    if (capturing_) {
      fail_capture_locked(why);
      return;
    }
  }
  failure_->fail(why.is_ok() ? Status::error(RRT_ERR_INTERNAL, "an enqueue failed") : why);
}

void SimStream::fail_capture_locked(const Status &why) {
  if (capturing_ && capture_failure_.is_ok()) {
    capture_failure_ =
        why.is_ok() ? Status::error(RRT_ERR_INVALID_STATE, "a capture failure") : why;
  }
}

Status SimStream::replay(const Graph &graph) {
  const auto *sim_graph = dynamic_cast<const SimGraph *>(&graph);
  if (sim_graph == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         "stream replay of a graph that the simulator did not capture");
  }
  if (&sim_graph->memory() != &memory_) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         "stream replay of a graph captured on a different device");
  }
  const std::span<const SimOperation> operations = sim_graph->operations();
  bool wake = false;
  {
    const std::lock_guard<SpinMutex> lock(mutex_);
    if (capturing_) {
      return capturing_error("replay");
    }
    RRT_RETURN_IF_ERROR(sim_graph->check_addresses());
    const std::size_t first = queue_.size();
    try {
      queue_.reserve(first + operations.size());
      for (const SimOperation &recorded : operations) {
        queue_.push_back(recorded);
      }
    } catch (...) {
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(first), queue_.end());
      throw;
    }
    bool records_event = false;
    for (std::size_t i = first; i < queue_.size(); ++i) {
      bind_event_locked(queue_[i]);
      records_event = records_event || queue_[i].kind == SimOperation::Kind::kRecordEvent;
    }
    wake = publish_locked(operations.size(), records_event);
  }
  if (wake) {
    wake_.notify_one();
  }
  return Status::ok();
}

Status SimStream::submit(SimOperation operation, std::span<const DeviceRange> ranges,
                         std::span<const void *const> referenced) {
  bool wake = false;
  {
    const std::lock_guard<SpinMutex> lock(mutex_);
    if (capturing_) {
      const std::size_t first = capture_addresses_.size();
      try {
        if (Status resolved = resolve_locked(ranges, referenced); !resolved.is_ok()) {
          fail_capture_locked(resolved);
          return resolved;
        }
        capture_operations_.push_back(std::move(operation));
      } catch (...) {
        // A host allocation failed: the graph would lack this operation.
        capture_addresses_.resize(first);
        fail_capture_locked(Status::error_without_detail(RRT_ERR_INTERNAL));
        throw;
      }
      return Status::ok();
    }
    queue_.push_back(std::move(operation));
    bind_event_locked(queue_.back());
    wake = publish_locked(1, queue_.back().kind == SimOperation::Kind::kRecordEvent);
    prefetch_next_slot_locked();
  }
  if (wake) {
    wake_.notify_one();
  }
  return Status::ok();
}

Status SimStream::submit_event_operation(Event &event, SimOperation::Kind kind) {
  auto *const sim_event = dynamic_cast<SimEvent *>(&event);
  if (sim_event == nullptr) {
    Status refused =
        Status::error(RRT_ERR_INVALID_ARGUMENT,
                      "stream event record or wait on an event the simulator did not create");
    {
      const std::lock_guard<SpinMutex> lock(mutex_);
      fail_capture_locked(refused);
    }
    return refused;
  }
  SimOperation operation;
  operation.kind = kind;
  operation.event = sim_event->state();
  return submit(std::move(operation), {}, {});
}

Status SimStream::resolve_locked(std::span<const DeviceRange> ranges,
                                 std::span<const void *const> referenced) {
  const std::size_t first = capture_addresses_.size();
  const auto reject = [&](Status status) {
    capture_addresses_.resize(first);
    return status;
  };
  for (const DeviceRange &range : ranges) {
    if (range.bytes == 0) {
      continue;
    }
    const auto owner = memory_.find_allocation(range.address);
    if (!owner) {
      return reject(Status::error(RRT_ERR_INVALID_ARGUMENT,
                                  format("capture: %s %p is not inside a live device allocation",
                                         range.role, range.address)));
    }
    const auto start = reinterpret_cast<std::uintptr_t>(range.address);
    if (range.bytes > owner->size - (start - owner->base)) {
      const unsigned long long requested = range.bytes;
      const unsigned long long size = owner->size;
      return reject(Status::error(
          RRT_ERR_INVALID_ARGUMENT,
          format("capture: %s [%p, +%llu) runs past the end of its %llu-byte allocation at %p",
                 range.role, range.address, requested, size, as_ptr(owner->base))));
    }
    capture_addresses_.push_back(CapturedAddress{start, owner->base, owner->generation});
  }
  for (const void *address : referenced) {
    const auto owner = memory_.find_allocation(address);
    if (!owner) {
      return reject(Status::error(
          RRT_ERR_INVALID_ARGUMENT,
          format("capture: launch references %p, which is not inside a live device allocation",
                 address)));
    }
    capture_addresses_.push_back(
        CapturedAddress{reinterpret_cast<std::uintptr_t>(address), owner->base, owner->generation});
  }
  return Status::ok();
}

void SimStream::bind_event_locked(SimOperation &operation) {
  if (operation.kind == SimOperation::Kind::kRecordEvent) {
    operation.sequence = operation.event->begin_record();
  } else if (operation.kind == SimOperation::Kind::kWaitEvent) {
    operation.sequence = operation.event->latest_record();
  }
}

bool SimStream::publish_locked(std::size_t count, bool records_event) {
  if (records_event) {
    untaken_record_.store(true, std::memory_order_relaxed);
  }
  enqueued_.store(enqueued_.load(std::memory_order_relaxed) + count, std::memory_order_release);
  // The runner of a batch hands queued work on when the batch ends (the executor takes it next;
  // a host thread wakes the executor in run_untaken_work), so a wake now would only send the
  // executor back to its wait.
  return !running_.load(std::memory_order_relaxed) && must_wake_executor_locked(records_event);
}

void SimStream::prefetch_next_slot_locked() const noexcept {
  if (queue_.size() < queue_.capacity()) {
    prefetch_for_write(queue_.data() + queue_.size(), sizeof(SimOperation));
  }
}

bool SimStream::must_wake_executor_locked(bool queue_records_event) const {
  return executor_wait_ == ExecutorWait::kUntimed ||
         (executor_wait_ == ExecutorWait::kTimed && queue_records_event);
}

bool SimStream::take_batch_locked() {
  if (running_.load(std::memory_order_relaxed) || queue_.empty()) {
    return false;
  }
  batch_.swap(queue_);
  untaken_record_.store(false, std::memory_order_relaxed);
  running_.store(true, std::memory_order_relaxed);
  taken_.store(taken_.load(std::memory_order_relaxed) + batch_.size(), std::memory_order_relaxed);
  return true;
}

void SimStream::end_batch_locked() {
  running_.store(false, std::memory_order_relaxed);
}

void SimStream::run_batch() {
  for (SimOperation &operation : batch_) {
    execute_contained(operation);
    completed_.fetch_add(1, std::memory_order_release);
    completed_.notify_all();
  }
  batch_.clear();
}

void SimStream::run_untaken_work(std::uint64_t target) {
  // Once every operation up to `target` is in a batch, its runner completes them.
  while (taken_.load(std::memory_order_relaxed) < target) {
    {
      const std::lock_guard<SpinMutex> lock(mutex_);
      if (!take_batch_locked()) {
        return;
      }
      host_driven_.store(true, std::memory_order_relaxed);
      executor_batches_in_a_row_ = 0;
    }
    run_batch();
    bool wake = false;
    {
      const std::lock_guard<SpinMutex> lock(mutex_);
      end_batch_locked();
      wake = !queue_.empty() &&
             must_wake_executor_locked(untaken_record_.load(std::memory_order_relaxed));
    }
    if (wake) {
      wake_.notify_one();
    }
  }
}

bool SimStream::wait_for_untaken_work() {
  const auto untaken = [&] {
    return enqueued_.load(std::memory_order_acquire) != taken_.load(std::memory_order_relaxed) &&
           !running_.load(std::memory_order_relaxed);
  };
  const auto all_taken = [&] {
    return enqueued_.load(std::memory_order_acquire) == taken_.load(std::memory_order_relaxed);
  };
  if (!spin_until(untaken)) {
    return false;
  }
  const auto records_event = [&] { return untaken_record_.load(std::memory_order_relaxed); };
  if (!host_driven_.load(std::memory_order_relaxed) || records_event()) {
    return true;
  }
  const auto all_taken_or_record = [&] { return all_taken() || records_event(); };
  spin_until(all_taken_or_record, idle_.host_take_grace);
  return !all_taken() || records_event();
}

void SimStream::park_locked(std::unique_lock<SpinMutex> &lock) {
  std::uint32_t empty_polls = 0;
  while ((queue_.empty() || running_.load(std::memory_order_relaxed)) && !stopping_) {
    if (!host_driven_.load(std::memory_order_relaxed)) {
      executor_wait_ = ExecutorWait::kUntimed;
      wake_.wait(lock);
    } else {
      executor_wait_ = ExecutorWait::kTimed;
      if (wake_.wait_for(lock, idle_.host_driven_poll) == std::cv_status::timeout &&
          queue_.empty() && ++empty_polls == idle_.host_driven_idle_polls) {
        host_driven_.store(false, std::memory_order_relaxed);
      }
    }
    executor_wait_ = ExecutorWait::kRunning;
  }
}

void SimStream::run_executor() {
  for (;;) {
    const bool found = wait_for_untaken_work();
    {
      std::unique_lock<SpinMutex> lock(mutex_);
      if (!found) {
        park_locked(lock);
      }
      if (!take_batch_locked()) {
        if (stopping_) {
          return;
        }
        continue;
      }
      if (host_driven_.load(std::memory_order_relaxed) &&
          ++executor_batches_in_a_row_ == idle_.host_driven_executor_batches) {
        host_driven_.store(false, std::memory_order_relaxed);
      }
    }
    run_batch();
    const std::lock_guard<SpinMutex> lock(mutex_);
    end_batch_locked();
  }
}

void SimStream::execute_contained(SimOperation &operation) noexcept {
  try {
    execute(operation);
  } catch (...) {
    failure_->fail_on_exception();
    if (operation.kind == SimOperation::Kind::kRecordEvent) {
      operation.event->complete_record(operation.sequence, nullptr, 0);
    }
  }
}

void SimStream::execute(SimOperation &operation) {
  switch (operation.kind) {
    case SimOperation::Kind::kRecordEvent:
      operation.event->complete_record(operation.sequence, failure_, failure_->pending_serial());
      return;
    case SimOperation::Kind::kWaitEvent:
      if (operation.sequence != 0) {
        operation.event->wait_for(operation.sequence);
      }
      return;
    default:
      break;
  }
  if (failure_->is_pending()) {
    return;
  }
  Status result = execute_device_work(operation);
  if (!result.is_ok()) {
    failure_->fail(std::move(result));
  }
}

Status SimStream::execute_device_work(const SimOperation &operation) {
  Status result;
  const char *context = "";
  switch (operation.kind) {
    case SimOperation::Kind::kCopyHostToDevice:
      result = memory_.copy_host_to_device(operation.dst, operation.src, operation.bytes);
      context = "stream host-to-device copy";
      break;
    case SimOperation::Kind::kCopyDeviceToHost:
      result = memory_.copy_device_to_host(operation.dst, operation.src, operation.bytes);
      context = "stream device-to-host copy";
      break;
    case SimOperation::Kind::kCopyDeviceToDevice:
      result = memory_.copy_device_to_device(operation.dst, operation.src, operation.bytes);
      context = "stream device-to-device copy";
      break;
    case SimOperation::Kind::kMemset:
      result = memory_.memset(operation.dst, operation.value, operation.bytes);
      context = "stream memset";
      break;
    case SimOperation::Kind::kLaunch:
      return operation.entry(operation.entry_context, operation.invocation.data(),
                             operation.invocation.size());
    case SimOperation::Kind::kRecordEvent:
    case SimOperation::Kind::kWaitEvent:
      break;
  }
  if (result.is_ok()) {
    return result;
  }
  return std::move(result).with_context(context);
}

}  // namespace replayrt::sim
