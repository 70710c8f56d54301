// replayrt-demo: a transformer-style decode step captured once in a kernel-mode context and
// replayed many times on the simulator, every output checked against a plain C++ reference.
//
//   replayrt-demo [--replays N] [--bind device|host] [--workers N] [--trace FILE] [--quiet]
//
// --trace FILE turns profiling on and writes a Chrome trace-event timeline of every replay and
// run (replayrt/trace.hpp): open it in chrome://tracing or Perfetto.
// Exit status: 0 when every output matched, 1 on any mismatch or error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <replayrt/replayrt.hpp>
#include <replayrt/trace.hpp>

#include "decode_step.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int replays = 1000;
  rrt_bind_strategy_t bind = RRT_BIND_DEVICE_BUILD;
  unsigned workers = 1;
  std::string trace;
  bool quiet = false;
};

bool parse(int argc, char **argv, Options *options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--replays" && i + 1 < argc) {
      options->replays = std::atoi(argv[++i]);
    } else if (arg == "--workers" && i + 1 < argc) {
      options->workers = static_cast<unsigned>(std::atoi(argv[++i]));
    } else if (arg == "--bind" && i + 1 < argc) {
      const std::string bind = argv[++i];
      if (bind != "device" && bind != "host") {
        return false;
      }
      options->bind = bind == "host" ? RRT_BIND_HOST_BUILD : RRT_BIND_DEVICE_BUILD;
    } else if (arg == "--trace" && i + 1 < argc) {
      options->trace = argv[++i];
    } else if (arg == "--quiet") {
      options->quiet = true;
    } else {
      return false;
    }
  }
  return options->replays > 0;
}

// Largest |a - b| relative to the reference magnitude, over every element.
bool matches(const std::vector<float> &got, const std::vector<float> &want) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    const float tolerance = 1e-4F * std::max(1.0F, std::fabs(want[i]));
    if (!(std::fabs(got[i] - want[i]) <= tolerance)) {
      return false;
    }
  }
  return true;
}

rrt::Context make_context(const Options &options) {
  rrt::ContextOptions context_options;
  context_options.device_workers = options.workers;
  context_options.profiling = !options.trace.empty();
  return rrt::Context(context_options);
}

rrt::DeviceBuffer upload(rrt::Context &ctx, const std::vector<float> &values) {
  rrt::DeviceBuffer buffer = ctx.allocate(values.size() * sizeof(float));
  buffer.upload(values);
  return buffer;
}

std::uint64_t sum(const std::uint64_t (&counts)[RRT_GROWTH_POINT_COUNT]) {
  std::uint64_t total = 0;
  for (const std::uint64_t count : counts) {
    total += count;
  }
  return total;
}

// The demo proper; throws rrt::Error when a call fails. Returns the number of mismatches.
long run_demo(const Options &options, rrt::Trace &trace) {
  const bool tracing = !options.trace.empty();
  const demo::DecodeShape shape;
  demo::DecodeWeights weights = demo::make_weights(shape);
  const std::size_t io_floats = static_cast<std::size_t>(shape.rows) * shape.dim;
  const char *bind_name = options.bind == RRT_BIND_HOST_BUILD ? "host-build" : "device-build";
  std::printf("replayrt demo: decode step rmsnorm -> matmul -> silu -> matmul -> add\n");
  std::printf("  shape rows=%u dim=%u hidden=%u, %s bind, %u device worker(s), simulator\n\n",
              shape.rows, shape.dim, shape.hidden, bind_name, options.workers);

  // ---- kernel mode: plan, freeze, capture once, replay many times ------------------------
  rrt::Context kernel_ctx = make_context(options);
  rrt::CallableBuilder step = demo::decode_step(shape, options.bind);
  const rrt_kernel_config_t config = kernel_ctx.fit_kernel_config({&step});
  kernel_ctx.kernel_init(config);
  const rrt_capacity_plan_t &plan = config.capacity;
  std::printf(
      "[kernel] capacity frozen: gm_heap %llu B, gm_sm %llu B, runtime_pool %llu B, "
      "graph_definition %llu B\n",
      static_cast<unsigned long long>(plan.gm_heap_bytes),
      static_cast<unsigned long long>(plan.gm_sm_bytes),
      static_cast<unsigned long long>(plan.runtime_pool_bytes),
      static_cast<unsigned long long>(plan.graph_definition_bytes));
  const rrt::CallableId callable = kernel_ctx.prepare(step);
  trace.name_callable(callable, "decode_step", step);

  const rrt::DeviceBuffer x = upload(kernel_ctx, std::vector<float>(io_floats, 0.0F));
  const rrt::DeviceBuffer norm = upload(kernel_ctx, weights.norm);
  const rrt::DeviceBuffer up = upload(kernel_ctx, weights.up);
  const rrt::DeviceBuffer down = upload(kernel_ctx, weights.down);
  const rrt::DeviceBuffer out = upload(kernel_ctx, std::vector<float>(io_floats, 0.0F));
  rrt::Args args;
  args.device(x).device(norm).device(up).device(down).device(out);
  rrt::Stream stream = kernel_ctx.stream();
  const rrt_stats_t after_init = kernel_ctx.stats();

  const rrt::Graph graph = stream.capture([&] { kernel_ctx.launch(callable, args, stream); });
  std::printf("[kernel] captured one launch into a graph\n");

  std::vector<float> result(io_floats);
  long mismatches = 0;
  double replay_seconds = 0.0;
  // Writes a new input into the captured input buffer, replays, reads the output back and
  // compares it with the reference. Only the device work is timed.
  auto replay_and_check = [&](std::uint32_t step_index) {
    const std::vector<float> input = demo::make_input(shape, step_index);
    const auto start = Clock::now();
    trace.host("upload x", [&] { x.upload(input); });
    trace.host("replay", [&] { graph.replay(stream); });
    trace.host("synchronize", [&] { stream.synchronize(); });
    trace.host("download out", [&] { out.download(result); });
    replay_seconds += std::chrono::duration<double>(Clock::now() - start).count();
    if (tracing) {
      trace.add_device_work(kernel_ctx, "replay " + std::to_string(step_index), {callable});
    }
    if (!matches(result, demo::reference_decode(shape, weights, input))) {
      ++mismatches;
    }
  };

  for (int i = 0; i < options.replays; ++i) {
    replay_and_check(static_cast<std::uint32_t>(i));
    if (!options.quiet && ((i + 1) % 250 == 0 || i + 1 == options.replays)) {
      std::printf("\r[kernel] replays %d/%d, mismatches so far %ld", i + 1, options.replays,
                  mismatches);
      std::fflush(stdout);
    }
  }
  std::printf("\n");

  // A larger request than the frozen plan: a decode step over 4x the rows.
  demo::DecodeShape larger = shape;
  larger.rows *= 4;
  rrt::CallableBuilder larger_step = demo::decode_step(larger, options.bind);
  try {
    (void)kernel_ctx.prepare(larger_step);
    std::printf("[kernel] larger request (rows=%u): RRT_OK\n         (expected a refusal)\n",
                larger.rows);
    ++mismatches;
  } catch (const rrt::Error &refusal) {
    std::printf("[kernel] larger request (rows=%u): %s\n         %s\n", larger.rows,
                refusal.status_name(), refusal.what());
  }
  const long before_after_refusal = mismatches;
  for (std::uint32_t i = 0; i < 10; ++i) {
    replay_and_check(100000U + i);
  }
  std::printf("[kernel] the held graph still replays correctly after the refusal: %s\n",
              mismatches == before_after_refusal ? "yes" : "NO");
  const rrt_stats_t kernel_stats = kernel_ctx.stats();

  // ---- program mode: the same step, eager, HOST tensors, buffers grown on demand ---------
  rrt::Context program_ctx = make_context(options);
  program_ctx.program_init();
  rrt::CallableBuilder program_step = demo::decode_step(shape, options.bind);
  const rrt::CallableId program_callable = program_ctx.prepare(program_step);
  trace.name_callable(program_callable, "decode_step (program mode)", program_step);
  std::vector<float> host_x(io_floats);
  std::vector<float> host_out(io_floats);
  rrt::Args host_args;
  host_args.host(host_x).host(weights.norm).host(weights.up).host(weights.down).host(host_out);
  const int eager_runs = options.replays < 200 ? options.replays : 200;
  double eager_seconds = 0.0;
  long program_mismatches = 0;
  for (int i = 0; i < eager_runs; ++i) {
    const std::vector<float> input = demo::make_input(shape, static_cast<std::uint32_t>(i));
    std::copy(input.begin(), input.end(), host_x.begin());
    const auto start = Clock::now();
    trace.host("run", [&] {
      rrt::Run run = program_ctx.prepare_run(program_callable, host_args);
      run.launch();
      run.wait();
      if (tracing) {
        trace.add_device_work("run " + std::to_string(i), {program_callable}, run.profile());
      }
      run.finalize();
    });
    eager_seconds += std::chrono::duration<double>(Clock::now() - start).count();
    if (!matches(host_out, demo::reference_decode(shape, weights, host_x))) {
      ++program_mismatches;
    }
  }
  const rrt_stats_t program_stats = program_ctx.stats();
  std::printf("[program] %d eager runs with HOST tensors, mismatches %ld\n", eager_runs,
              program_mismatches);
  mismatches += program_mismatches;

  // ---- report --------------------------------------------------------------------------
  const unsigned long long allocations_after_init =
      kernel_stats.device_alloc_calls - after_init.device_alloc_calls;
  const unsigned long long frees_after_init =
      kernel_stats.device_free_calls - after_init.device_free_calls;
  unsigned long long base_changes = 0;
  for (const rrt_region_stats_t &region : kernel_stats.regions) {
    base_changes += region.base_changes;
  }
  const double per_replay_us = 1e6 * replay_seconds / static_cast<double>(kernel_stats.replays);
  const double per_eager_us = 1e6 * eager_seconds / eager_runs;
  std::printf("\nreport\n");
  std::printf("  replays                              %llu\n",
              static_cast<unsigned long long>(kernel_stats.replays));
  std::printf("  mismatches                           %ld\n", mismatches);
  std::printf("  device allocations after init        %llu (frees %llu)\n", allocations_after_init,
              frees_after_init);
  std::printf("  capacity refusals                    %llu\n",
              static_cast<unsigned long long>(sum(kernel_stats.refusals)));
  std::printf("  base changes in the kernel context   %llu\n", base_changes);
  std::printf("  time per replay (input copy, replay, output copy)     %.1f us\n", per_replay_us);
  std::printf("  time per eager program-mode run (HOST tensors staged)  %.1f us\n", per_eager_us);
  std::printf("  program-mode device allocations      %llu over %d runs\n",
              static_cast<unsigned long long>(program_stats.device_alloc_calls), eager_runs);
  if (allocations_after_init != 0 || frees_after_init != 0) {
    ++mismatches;
  }
  return mismatches;
}

}  // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: %s [--replays N] [--bind device|host] [--workers N] [--trace FILE] "
                 "[--quiet]\n",
                 argv[0]);
    return 2;
  }
  rrt::Trace trace;
  long mismatches = 0;
  try {
    mismatches = run_demo(options, trace);
    if (!options.trace.empty()) {
      trace.write(options.trace);
      std::printf("  trace                                %s (%zu slices)\n", options.trace.c_str(),
                  trace.slice_count());
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "\nreplayrt-demo: %s\n", error.what());
    return 1;
  }
  const bool ok = mismatches == 0;
  std::printf("\n%s\n",
              ok ? "OK: every output matched the reference" : "FAILED: see the report above");
  return ok ? 0 : 1;
}
