// What the benchmark programs share: failing fast on a C ABI error, contexts, callable
// descriptors (among them the y = 2x + x callable several programs use) and the two benchmark
// kernels.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <replayrt/replayrt.h>

#include <benchmark/benchmark.h>

#include "support/callable_builder.h"

namespace replayrt::bench {

// Ends the program when `status` is not RRT_OK: a benchmark that timed a failing call would
// report a number that means nothing.
inline void check(rrt_status_t status, const char *what) {
  if (status == RRT_OK) {
    return;
  }
  rrt_error_detail_t detail{};
  rrt_last_error(&detail);
  std::fprintf(stderr, "benchmark setup: %s failed: %s\n  %s\n", what, rrt_status_name(status),
               detail.message);
  std::exit(1);
}

// A simulator context with `workers` device workers, not yet initialized.
inline rrt_context_t make_context(unsigned workers) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_SIM;
  options.device_workers = workers;
  rrt_context_t ctx = nullptr;
  check(rrt_context_create(&options, &ctx), "rrt_context_create");
  return ctx;
}

// Latches KERNEL with a capacity plan that fits `desc` exactly.
inline void kernel_init_for(rrt_context_t ctx, const rrt_callable_desc_t &desc) {
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = 0;  // the runtime picks a process-unique one
  check(rrt_capacity_plan_fit(&desc, &config.capacity), "rrt_capacity_plan_fit");
  check(rrt_kernel_init(ctx, &config), "rrt_kernel_init");
}

inline std::int32_t prepare(rrt_context_t ctx, const rrt_callable_desc_t &desc) {
  std::int32_t id = -1;
  check(rrt_callable_prepare(ctx, &desc, &id), "rrt_callable_prepare");
  return id;
}

inline std::int32_t builtin(rrt_context_t ctx, const char *name) {
  std::int32_t id = -1;
  check(rrt_kernel_lookup(ctx, name, &id), "rrt_kernel_lookup");
  return id;
}

inline rrt_stats_t stats_of(rrt_context_t ctx) {
  rrt_stats_t stats{};
  stats.struct_size = sizeof stats;
  check(rrt_context_stats(ctx, &stats), "rrt_context_stats");
  return stats;
}

inline rrt_run_args_t run_args(const rrt_tensor_arg_t *tensors, std::uint32_t count) {
  rrt_run_args_t args{};
  args.struct_size = sizeof args;
  args.num_tensors = count;
  args.tensors = tensors;
  return args;
}

inline rrt_tensor_desc_t tensor(rrt_dtype_t dtype, std::uint64_t elements,
                                rrt_direction_t direction = RRT_DIR_IN) {
  rrt_tensor_desc_t desc{};
  desc.dtype = dtype;
  desc.ndim = 1;
  desc.shape[0] = elements;
  desc.direction = direction;
  return desc;
}

using DescBuilder = replayrt::testing::CallableBuilder;

// y = 2x + x over `elements` floats: the built-in scale (x * 2 into one intermediate), then add
// (intermediate + x into y). Params: x (IN), y (OUT).
inline DescBuilder axpy_desc(std::int32_t scale_id, std::int32_t add_id, std::uint64_t elements,
                             rrt_bind_strategy_t bind = RRT_BIND_DEVICE_BUILD) {
  DescBuilder builder(bind);
  builder.param(tensor(RRT_DTYPE_F32, elements, RRT_DIR_IN))
      .param(tensor(RRT_DTYPE_F32, elements, RRT_DIR_OUT))
      .intermediate(tensor(RRT_DTYPE_F32, elements))
      .task(scale_id,
            {{RRT_OPERAND_PARAM, 0},
             {RRT_OPERAND_INTERMEDIATE, 0},
             {RRT_OPERAND_IMMEDIATE, static_cast<std::uint32_t>(rrt_scalar_from_f32(2.0F))}})
      .task(add_id,
            {{RRT_OPERAND_INTERMEDIATE, 0}, {RRT_OPERAND_PARAM, 0}, {RRT_OPERAND_PARAM, 1}});
  return builder;
}

// The launch-bound kernel: a call costs what calling a kernel costs and nothing more.
inline int tiny_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  benchmark::DoNotOptimize(args->num_scalars);
  return 0;
}

// The compute kernel: scalars[0] rounds of a dependent multiply-xorshift chain. A fixed round
// count makes it deterministic work (not a timed wait): every caller pays the same
// instructions, so a slower caller cannot hide its overhead inside the kernel.
inline int compute_kernel(const rrt_kernel_args_t *args, void * /*user*/) {
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  const std::uint64_t rounds = args->num_scalars != 0 ? args->scalars[0] : 0;
  for (std::uint64_t i = 0; i < rounds; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    state ^= state >> 29;
  }
  benchmark::DoNotOptimize(state);
  return 0;
}

// The round count that makes compute_kernel take about `target` on this machine: the fastest
// of several timed calls, so a descheduled sample does not shrink it. Measured once per
// process; every benchmark of the process then runs the same work.
inline std::uint32_t compute_rounds_for(std::chrono::nanoseconds target) {
  constexpr std::uint64_t kProbeRounds = 200000;
  const std::uint64_t scalars[1] = {kProbeRounds};
  const rrt_kernel_args_t args{0, nullptr, nullptr, 1, scalars, 0, nullptr};
  auto best = std::chrono::nanoseconds::max();
  for (int i = 0; i < 15; ++i) {
    const auto start = std::chrono::steady_clock::now();
    compute_kernel(&args, nullptr);
    best = std::min(best, std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - start));
  }
  const double rounds = static_cast<double>(kProbeRounds) * static_cast<double>(target.count()) /
                        static_cast<double>(std::max<std::int64_t>(best.count(), 1));
  return static_cast<std::uint32_t>(std::max(1.0, rounds));
}

// The main() of every benchmark program: registers the program's benchmarks, runs them with
// Google Benchmark's command line, and returns 1 for an argument it does not know.
inline int bench_main(int argc, char **argv, void (*register_benchmarks)()) {
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// A kernel-mode sim context with `workers` device workers, a kernel registered as
// `kernel_name`, the callable build(kernel id) describes (a DescBuilder) latched with a plan
// that fits it exactly and prepared, and one launch of it captured into a graph on a stream of
// its own. Any failing call ends the process (check).
class CapturedGraph {
 public:
  template <class BuildDesc>
  CapturedGraph(unsigned workers, const char *kernel_name, rrt_kernel_fn kernel, void *user,
                BuildDesc build)
      : ctx_(make_context(workers)), args_(run_args(nullptr, 0)) {
    std::int32_t kernel_id = -1;
    check(rrt_kernel_register(ctx_, kernel_name, kernel, user, &kernel_id), "rrt_kernel_register");
    DescBuilder builder = build(kernel_id);
    kernel_init_for(ctx_, builder.desc());
    callable_ = prepare(ctx_, builder.desc());
    check(rrt_stream_create(ctx_, &stream_), "rrt_stream_create");
    check(rrt_stream_begin_capture(stream_), "rrt_stream_begin_capture");
    check(rrt_kernel_launch(ctx_, callable_, &args_, stream_), "rrt_kernel_launch");
    check(rrt_stream_end_capture(stream_, &graph_), "rrt_stream_end_capture");
  }
  ~CapturedGraph() {
    check(rrt_stream_synchronize(stream_), "rrt_stream_synchronize");
    check(rrt_graph_destroy(graph_), "rrt_graph_destroy");
    check(rrt_stream_destroy(stream_), "rrt_stream_destroy");
    check(rrt_context_destroy(ctx_), "rrt_context_destroy");
  }
  CapturedGraph(const CapturedGraph &) = delete;
  CapturedGraph &operator=(const CapturedGraph &) = delete;
  CapturedGraph(CapturedGraph &&) = delete;
  CapturedGraph &operator=(CapturedGraph &&) = delete;

  void replay_and_wait() const {
    check(rrt_graph_replay(graph_, stream_), "rrt_graph_replay");
    check(rrt_stream_synchronize(stream_), "rrt_stream_synchronize");
  }
  void launch_and_wait() const {
    check(rrt_kernel_launch(ctx_, callable_, &args_, stream_), "rrt_kernel_launch");
    check(rrt_stream_synchronize(stream_), "rrt_stream_synchronize");
  }

 private:
  rrt_context_t ctx_;
  rrt_run_args_t args_;
  std::int32_t callable_ = -1;
  rrt_stream_t stream_ = nullptr;
  rrt_graph_t graph_ = nullptr;
};

}  // namespace replayrt::bench
