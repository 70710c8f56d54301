// Device allocator calls in steady state, COUNTED (not timed): every benchmark runs exactly
// kRuns runs of y = 2x + x over 256 floats with HOST tensors (after kWarmupRuns that size the
// buffers) and reports the simulator device's allocation and free calls over those runs,
// scaled to 100,000 runs. The device's own counters see every allocation, the runtime's and
// anyone else's; `runtime_*` repeats what rrt_context_stats reports.
//
//   alloc/kernel_mode/<bind>   rrt_kernel_launch on a frozen kernel-mode context (the
//                              stream is synchronized every kSyncPeriod launches)
//   alloc/program_mode/<bind>  rrt_run at a fixed size in a program-mode context
//   alloc/naive                the naive baseline, written against the Device interface:
//                              every run allocates x, the intermediate and y, copies x in,
//                              launches the two kernels, copies y out, synchronizes and frees
//                              all three
// The limit of every row is zero calls.
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench_support.h"
#include "capi/handles.h"
#include "platform/device.h"
#include "platform/device_factory.h"
#include "platform/sim/kernels/builtin_kernels.h"

namespace {

using replayrt::bench::check;

constexpr std::uint64_t kElements = 256;
constexpr std::uint64_t kBytes = kElements * sizeof(float);
constexpr std::int64_t kRuns = 100000;
constexpr int kWarmupRuns = 8;
constexpr std::int64_t kSyncPeriod = 64;

struct CallCounts {
  std::uint64_t device_allocs = 0;
  std::uint64_t device_frees = 0;
  std::uint64_t runtime_allocs = 0;
  std::uint64_t runtime_frees = 0;
};

CallCounts counts_of(rrt_context_t ctx) {
  const replayrt::MemoryCounters device = ctx->engine->device_memory_counters();
  const rrt_stats_t stats = replayrt::bench::stats_of(ctx);
  return CallCounts{device.allocation_calls, device.free_calls, stats.device_alloc_calls,
                    stats.device_free_calls};
}

void report(benchmark::State &state, const CallCounts &before, const CallCounts &after) {
  const double scale = 100000.0 / static_cast<double>(state.iterations());
  state.counters["alloc_calls_per_100k"] =
      static_cast<double>(after.device_allocs - before.device_allocs) * scale;
  state.counters["free_calls_per_100k"] =
      static_cast<double>(after.device_frees - before.device_frees) * scale;
  state.counters["runtime_alloc_calls_per_100k"] =
      static_cast<double>(after.runtime_allocs - before.runtime_allocs) * scale;
  state.counters["runtime_free_calls_per_100k"] =
      static_cast<double>(after.runtime_frees - before.runtime_frees) * scale;
}

replayrt::bench::DescBuilder axpy_desc(rrt_context_t ctx, rrt_bind_strategy_t bind) {
  return replayrt::bench::axpy_desc(replayrt::bench::builtin(ctx, "scale"),
                                    replayrt::bench::builtin(ctx, "add"), kElements, bind);
}

void kernel_mode(benchmark::State &state, rrt_bind_strategy_t bind) {
  rrt_context_t ctx = replayrt::bench::make_context(1);
  replayrt::bench::DescBuilder builder = axpy_desc(ctx, bind);
  replayrt::bench::kernel_init_for(ctx, builder.desc());
  const std::int32_t callable = replayrt::bench::prepare(ctx, builder.desc());
  rrt_stream_t stream = nullptr;
  check(rrt_stream_create(ctx, &stream), "rrt_stream_create");
  std::vector<float> x(kElements, 1.0F);
  std::vector<float> y(kElements);
  const rrt_tensor_arg_t tensors[2] = {{x.data(), kBytes, RRT_SPACE_HOST},
                                       {y.data(), kBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t args = replayrt::bench::run_args(tensors, 2);
  for (int i = 0; i < kWarmupRuns; ++i) {
    check(rrt_kernel_launch(ctx, callable, &args, stream), "rrt_kernel_launch");
  }
  check(rrt_stream_synchronize(stream), "rrt_stream_synchronize");

  const CallCounts before = counts_of(ctx);
  std::int64_t launched = 0;
  for (auto _ : state) {
    check(rrt_kernel_launch(ctx, callable, &args, stream), "rrt_kernel_launch");
    if (++launched % kSyncPeriod == 0) {
      check(rrt_stream_synchronize(stream), "rrt_stream_synchronize");
    }
  }
  check(rrt_stream_synchronize(stream), "rrt_stream_synchronize");
  report(state, before, counts_of(ctx));
  check(rrt_stream_destroy(stream), "rrt_stream_destroy");
  check(rrt_context_destroy(ctx), "rrt_context_destroy");
}

void program_mode(benchmark::State &state, rrt_bind_strategy_t bind) {
  rrt_context_t ctx = replayrt::bench::make_context(1);
  check(rrt_program_init(ctx), "rrt_program_init");
  replayrt::bench::DescBuilder builder = axpy_desc(ctx, bind);
  const std::int32_t callable = replayrt::bench::prepare(ctx, builder.desc());
  std::vector<float> x(kElements, 1.0F);
  std::vector<float> y(kElements);
  const rrt_tensor_arg_t tensors[2] = {{x.data(), kBytes, RRT_SPACE_HOST},
                                       {y.data(), kBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t args = replayrt::bench::run_args(tensors, 2);
  for (int i = 0; i < kWarmupRuns; ++i) {
    check(rrt_run(ctx, callable, &args), "rrt_run");
  }

  const CallCounts before = counts_of(ctx);
  for (auto _ : state) {
    check(rrt_run(ctx, callable, &args), "rrt_run");
  }
  report(state, before, counts_of(ctx));
  check(rrt_context_destroy(ctx), "rrt_context_destroy");
}

// The naive baseline's device work: the invocation carries the three tensor addresses; the
// entry runs the built-in scale and add kernels on them.
struct NaiveInvocation {
  float *x;
  float *t;
  float *y;
};

struct NaiveKernels {
  rrt_kernel_fn scale = nullptr;
  rrt_kernel_fn add = nullptr;
};

replayrt::Status naive_entry(void *entry_context, const std::byte *invocation, std::size_t bytes) {
  const auto &kernels = *static_cast<const NaiveKernels *>(entry_context);
  NaiveInvocation run{};
  if (bytes != sizeof run) {
    return replayrt::Status::error(RRT_ERR_INTERNAL, "naive launch: wrong invocation size");
  }
  std::memcpy(&run, invocation, sizeof run);
  const std::uint64_t sizes[3] = {kBytes, kBytes, kBytes};
  const std::uint64_t factor[1] = {rrt_scalar_from_f32(2.0F)};
  void *scale_tensors[2] = {run.x, run.t};
  const rrt_kernel_args_t scale_args{2, scale_tensors, sizes, 1, factor, 0, nullptr};
  void *add_tensors[3] = {run.t, run.x, run.y};
  const rrt_kernel_args_t add_args{3, add_tensors, sizes, 0, nullptr, 0, nullptr};
  if (kernels.scale(&scale_args, nullptr) != 0 || kernels.add(&add_args, nullptr) != 0) {
    return replayrt::Status::error(RRT_ERR_KERNEL_FAILED, "naive launch: a kernel failed");
  }
  return replayrt::Status::ok();
}

void naive(benchmark::State &state) {
  std::unique_ptr<replayrt::Device> device;
  std::unique_ptr<replayrt::Stream> stream;
  if (!replayrt::create_device(RRT_PLATFORM_SIM, 0, &device).is_ok() ||
      !device->create_stream(&stream).is_ok()) {
    state.SkipWithError("device setup failed");
    return;
  }
  NaiveKernels kernels;
  kernels.scale = replayrt::sim::builtin_host_kernel("scale");
  kernels.add = replayrt::sim::builtin_host_kernel("add");
  std::vector<float> x(kElements, 1.0F);
  std::vector<float> y(kElements);
  bool ok = true;
  const auto one_run = [&] {
    NaiveInvocation run{static_cast<float *>(device->allocate(kBytes)),
                        static_cast<float *>(device->allocate(kBytes)),
                        static_cast<float *>(device->allocate(kBytes))};
    replayrt::LaunchRequest launch;
    launch.entry = &naive_entry;
    launch.entry_context = &kernels;
    launch.invocation = std::as_bytes(std::span<const NaiveInvocation, 1>(&run, 1));
    ok = ok && run.x != nullptr && run.t != nullptr && run.y != nullptr &&
         stream->enqueue_copy_host_to_device(run.x, x.data(), kBytes).is_ok() &&
         stream->enqueue_launch(launch).is_ok() &&
         stream->enqueue_copy_device_to_host(y.data(), run.y, kBytes).is_ok() &&
         stream->synchronize().is_ok();
    for (float *buffer : {run.x, run.t, run.y}) {
      ok = ok && device->free(buffer).is_ok();
    }
  };
  for (int i = 0; i < kWarmupRuns; ++i) {
    one_run();
  }
  const replayrt::MemoryCounters before = device->memory_counters();
  for (auto _ : state) {
    one_run();
  }
  const replayrt::MemoryCounters after = device->memory_counters();
  if (!ok || y[0] != 3.0F) {
    state.SkipWithError("the naive baseline computed a wrong result");
  }
  report(state, CallCounts{before.allocation_calls, before.free_calls, 0, 0},
         CallCounts{after.allocation_calls, after.free_calls, 0, 0});
}

void register_all() {
  const struct {
    const char *name;
    rrt_bind_strategy_t bind;
  } binds[] = {{"device_build", RRT_BIND_DEVICE_BUILD}, {"host_build", RRT_BIND_HOST_BUILD}};
  for (const auto &bind : binds) {
    benchmark::RegisterBenchmark((std::string("alloc/kernel_mode/") + bind.name).c_str(),
                                 kernel_mode, bind.bind)
        ->Iterations(kRuns)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string("alloc/program_mode/") + bind.name).c_str(),
                                 program_mode, bind.bind)
        ->Iterations(kRuns)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("alloc/naive", naive)
      ->Iterations(kRuns)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char **argv) {
  return replayrt::bench::bench_main(argc, argv, &register_all);
}
