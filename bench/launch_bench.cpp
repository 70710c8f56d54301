// Launch cost, host side: what rrt_kernel_launch costs the calling thread (validate the
// arguments, bind into the frozen capacity, encode the invocation, enqueue it) against its
// limit, a raw enqueue of the very same invocation bytes on the same simulator stream; and the
// program-mode run of the same callable (prepare + launch + wait + finalize), the baseline a
// user without kernel mode pays per step.
//
// Benchmarks (the callable: y = 2x + x over 256 floats, two tasks and one intermediate):
//   launch/kernel_mode/<bind>   rrt_kernel_launch, DEVICE tensors, enqueue only
//   launch/raw_enqueue/<bind>   Stream::enqueue_launch of the invocation that launch encodes
//   launch/program_run/<bind>   rrt_run with the same DEVICE tensors, to completion
//   launch/program_run_host/<bind>  rrt_run with HOST tensors (staged), to completion
// The enqueue-only benchmarks run with the device busy: a gate launch at the head of the
// stream holds the executor (parked, using no processor) while kGatePeriod launches queue up
// behind it; then, with the clock stopped, the gate opens and the stream drains. The host
// thus runs ahead of a busy device, as a launch-bound steady state does, and neither
// measurement pays for cache-line traffic with a consumer that happens to be polling.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.h"
#include "capi/handles.h"
#include "platform/sim/sim_graph.h"

namespace {

using replayrt::bench::check;

constexpr std::uint64_t kElements = 256;
constexpr std::uint64_t kBytes = kElements * sizeof(float);
constexpr std::uint64_t kGatePeriod = 64;

replayrt::bench::DescBuilder axpy_desc(rrt_context_t ctx, rrt_bind_strategy_t bind) {
  return replayrt::bench::axpy_desc(replayrt::bench::builtin(ctx, "scale"),
                                    replayrt::bench::builtin(ctx, "add"), kElements, bind);
}

// One context (kernel or program mode) with the axpy callable prepared, a stream, and device
// (and host) buffers for x and y.
class LaunchSetup {
 public:
  LaunchSetup(rrt_mode_t mode, rrt_bind_strategy_t bind)
      : ctx_(replayrt::bench::make_context(1)), host_x_(kElements, 1.0F), host_y_(kElements) {
    replayrt::bench::DescBuilder builder = axpy_desc(ctx_, bind);
    if (mode == RRT_MODE_KERNEL) {
      replayrt::bench::kernel_init_for(ctx_, builder.desc());
    } else {
      check(rrt_program_init(ctx_), "rrt_program_init");
    }
    callable_ = replayrt::bench::prepare(ctx_, builder.desc());
    check(rrt_stream_create(ctx_, &stream_), "rrt_stream_create");
    check(rrt_device_alloc(ctx_, kBytes, &x_), "rrt_device_alloc");
    check(rrt_device_alloc(ctx_, kBytes, &y_), "rrt_device_alloc");
    check(rrt_memcpy_h2d(ctx_, x_, host_x_.data(), kBytes, nullptr), "rrt_memcpy_h2d");
    device_tensors_[0] = {x_, kBytes, RRT_SPACE_DEVICE};
    device_tensors_[1] = {y_, kBytes, RRT_SPACE_DEVICE};
    host_tensors_[0] = {host_x_.data(), kBytes, RRT_SPACE_HOST};
    host_tensors_[1] = {host_y_.data(), kBytes, RRT_SPACE_HOST};
    device_args_ = replayrt::bench::run_args(device_tensors_, 2);
    host_args_ = replayrt::bench::run_args(host_tensors_, 2);
  }
  ~LaunchSetup() {
    check(rrt_stream_synchronize(stream_), "rrt_stream_synchronize");
    check(rrt_stream_destroy(stream_), "rrt_stream_destroy");
    check(rrt_device_free(ctx_, x_), "rrt_device_free");
    check(rrt_device_free(ctx_, y_), "rrt_device_free");
    check(rrt_context_destroy(ctx_), "rrt_context_destroy");
  }
  LaunchSetup(const LaunchSetup &) = delete;
  LaunchSetup &operator=(const LaunchSetup &) = delete;
  LaunchSetup(LaunchSetup &&) = delete;
  LaunchSetup &operator=(LaunchSetup &&) = delete;

  rrt_context_t ctx() const { return ctx_; }
  rrt_stream_t stream() const { return stream_; }
  std::int32_t callable() const { return callable_; }
  const rrt_run_args_t &device_args() const { return device_args_; }
  const rrt_run_args_t &host_args() const { return host_args_; }

 private:
  rrt_context_t ctx_;
  std::int32_t callable_ = -1;
  rrt_stream_t stream_ = nullptr;
  void *x_ = nullptr;
  void *y_ = nullptr;
  std::vector<float> host_x_;
  std::vector<float> host_y_;
  rrt_tensor_arg_t device_tensors_[2]{};
  rrt_tensor_arg_t host_tensors_[2]{};
  rrt_run_args_t device_args_{};
  rrt_run_args_t host_args_{};
};

// A launch that holds the stream's executor until opened: parked in a futex wait, so the
// device is busy without using a processor.
class DeviceGate {
 public:
  explicit DeviceGate(rrt_stream_t stream) : stream_(*stream->stream), handle_(stream) {}

  // Queues a closed gate at the tail of the stream.
  void close() {
    open_.store(0, std::memory_order_release);
    replayrt::LaunchRequest request;
    request.entry = &DeviceGate::entry;
    request.entry_context = &open_;
    const replayrt::Status queued = stream_.enqueue_launch(request);
    if (!queued.is_ok()) {
      std::fprintf(stderr, "benchmark setup: enqueue of the device gate failed: %s\n",
                   queued.message().c_str());
      std::exit(1);
    }
  }
  // Opens the gate and waits until the stream has run everything queued behind it.
  void open_and_drain() {
    open_.store(1, std::memory_order_release);
    open_.notify_all();
    check(rrt_stream_synchronize(handle_), "rrt_stream_synchronize");
  }
  // Every kGatePeriod iterations: drains with the clock stopped and closes a new gate.
  void after_iteration(benchmark::State &state) {
    if (++count_ % kGatePeriod == 0) {
      state.PauseTiming();
      open_and_drain();
      close();
      state.ResumeTiming();
    }
  }

 private:
  static replayrt::Status entry(void *context, const std::byte * /*invocation*/,
                                std::size_t /*bytes*/) {
    auto &open = *static_cast<std::atomic<int> *>(context);
    open.wait(0, std::memory_order_acquire);
    return replayrt::Status::ok();
  }

  replayrt::Stream &stream_;
  rrt_stream_t handle_;
  std::atomic<int> open_{0};
  std::uint64_t count_ = 0;
};

void kernel_mode_launch(benchmark::State &state, rrt_bind_strategy_t bind) {
  const LaunchSetup setup(RRT_MODE_KERNEL, bind);
  DeviceGate gate(setup.stream());
  gate.close();
  for (auto _ : state) {
    check(rrt_kernel_launch(setup.ctx(), setup.callable(), &setup.device_args(), setup.stream()),
          "rrt_kernel_launch");
    gate.after_iteration(state);
  }
  gate.open_and_drain();
}

// The limit: the invocation rrt_kernel_launch encodes (taken from a captured launch: the same
// entry, the same bytes, the same referenced-address count), enqueued directly on the
// simulator stream behind the same handle. The device executes exactly the same work.
void raw_enqueue(benchmark::State &state, rrt_bind_strategy_t bind) {
  const LaunchSetup setup(RRT_MODE_KERNEL, bind);
  check(rrt_stream_begin_capture(setup.stream()), "rrt_stream_begin_capture");
  check(rrt_kernel_launch(setup.ctx(), setup.callable(), &setup.device_args(), setup.stream()),
        "rrt_kernel_launch");
  rrt_graph_t graph = nullptr;
  check(rrt_stream_end_capture(setup.stream(), &graph), "rrt_stream_end_capture");
  const auto &sim_graph = dynamic_cast<const replayrt::sim::SimGraph &>(*graph->graph);
  const replayrt::sim::SimOperation *launch = nullptr;
  for (const replayrt::sim::SimOperation &operation : sim_graph.operations()) {
    if (operation.kind == replayrt::sim::SimOperation::Kind::kLaunch) {
      launch = &operation;
    }
  }
  if (launch == nullptr) {
    state.SkipWithError("the captured launch holds no launch operation");
    check(rrt_graph_destroy(graph), "rrt_graph_destroy");
    return;
  }
  std::vector<const void *> referenced;
  for (const replayrt::CapturedAddress &address : sim_graph.captured_addresses()) {
    referenced.push_back(reinterpret_cast<const void *>(address.address));
  }
  replayrt::LaunchRequest request;
  request.entry = launch->entry;
  request.entry_context = launch->entry_context;
  request.invocation = {launch->invocation.data(), launch->invocation.size()};
  request.referenced = referenced;
  replayrt::Stream &stream = *setup.stream()->stream;
  state.counters["invocation_bytes"] = static_cast<double>(launch->invocation.size());

  DeviceGate gate(setup.stream());
  gate.close();
  for (auto _ : state) {
    if (!stream.enqueue_launch(request).is_ok()) {
      state.SkipWithError("raw enqueue failed");
      break;
    }
    gate.after_iteration(state);
  }
  gate.open_and_drain();
  check(rrt_graph_destroy(graph), "rrt_graph_destroy");
}

void program_run(benchmark::State &state, rrt_bind_strategy_t bind, rrt_address_space_t space) {
  const LaunchSetup setup(RRT_MODE_PROGRAM, bind);
  const rrt_run_args_t &args = space == RRT_SPACE_HOST ? setup.host_args() : setup.device_args();
  for (auto _ : state) {
    check(rrt_run(setup.ctx(), setup.callable(), &args), "rrt_run");
  }
}

void register_all() {
  const struct {
    const char *name;
    rrt_bind_strategy_t bind;
  } binds[] = {{"device_build", RRT_BIND_DEVICE_BUILD}, {"host_build", RRT_BIND_HOST_BUILD}};
  for (const auto &bind : binds) {
    const std::string suffix = std::string("/") + bind.name;
    benchmark::RegisterBenchmark(("launch/kernel_mode" + suffix).c_str(), kernel_mode_launch,
                                 bind.bind)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("launch/raw_enqueue" + suffix).c_str(), raw_enqueue, bind.bind)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("launch/program_run" + suffix).c_str(), program_run, bind.bind,
                                 RRT_SPACE_DEVICE)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("launch/program_run_host" + suffix).c_str(), program_run,
                                 bind.bind, RRT_SPACE_HOST)
        ->UseRealTime();
  }
}

}  // namespace

int main(int argc, char **argv) {
  return replayrt::bench::bench_main(argc, argv, &register_all);
}
