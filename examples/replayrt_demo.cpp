// replayrt-demo: a transformer-style decode step captured once in a kernel-mode context and
// replayed many times on the simulator, every output checked against a plain C++ reference.
//
//   replayrt-demo [--replays N] [--bind device|host] [--workers N] [--quiet]
//
// Exit status: 0 when every output matched, 1 on any mismatch or error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <replayrt/replayrt.h>

#include "decode_step.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int replays = 1000;
  rrt_bind_strategy_t bind = RRT_BIND_DEVICE_BUILD;
  unsigned workers = 1;
  bool quiet = false;
};

[[noreturn]] void die(const char *what, rrt_status_t status) {
  rrt_error_detail_t detail;
  rrt_last_error(&detail);
  std::fprintf(stderr, "\nreplayrt-demo: %s failed: %s\n  %s\n", what, rrt_status_name(status),
               detail.message);
  std::exit(1);
}

void check(rrt_status_t status, const char *what) {
  if (status != RRT_OK) {
    die(what, status);
  }
}

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

rrt_context_t make_context(const Options &options) {
  rrt_context_options_t context_options{};
  context_options.struct_size = sizeof context_options;
  context_options.platform = RRT_PLATFORM_SIM;
  context_options.device_id = 0;
  context_options.device_workers = options.workers;
  rrt_context_t ctx = nullptr;
  check(rrt_context_create(&context_options, &ctx), "rrt_context_create");
  return ctx;
}

void *upload(rrt_context_t ctx, const std::vector<float> &values) {
  void *device = nullptr;
  check(rrt_device_alloc(ctx, values.size() * sizeof(float), &device), "rrt_device_alloc");
  check(rrt_memcpy_h2d(ctx, device, values.data(), values.size() * sizeof(float), nullptr),
        "rrt_memcpy_h2d");
  return device;
}

rrt_stats_t stats_of(rrt_context_t ctx) {
  rrt_stats_t stats{};
  stats.struct_size = sizeof stats;
  check(rrt_context_stats(ctx, &stats), "rrt_context_stats");
  return stats;
}

}  // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    std::fprintf(stderr, "usage: %s [--replays N] [--bind device|host] [--workers N] [--quiet]\n",
                 argv[0]);
    return 2;
  }
  const demo::DecodeShape shape;
  const demo::DecodeWeights weights = demo::make_weights(shape);
  const std::size_t io_floats = static_cast<std::size_t>(shape.rows) * shape.dim;
  const char *bind_name = options.bind == RRT_BIND_HOST_BUILD ? "host-build" : "device-build";
  std::printf("replayrt demo: decode step rmsnorm -> matmul -> silu -> matmul -> add\n");
  std::printf("  shape rows=%u dim=%u hidden=%u, %s bind, %u device worker(s), simulator\n\n",
              shape.rows, shape.dim, shape.hidden, bind_name, options.workers);

  // ---- kernel mode: plan, freeze, capture once, replay many times ------------------------
  rrt_context_t kernel_ctx = make_context(options);
  const demo::DecodeStepDesc step(kernel_ctx, shape, options.bind);
  rrt_capacity_plan_t plan{};
  check(rrt_capacity_plan_fit(&step.desc(), &plan), "rrt_capacity_plan_fit");
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = 1;
  config.capacity = plan;
  check(rrt_kernel_init(kernel_ctx, &config), "rrt_kernel_init");
  std::printf(
      "[kernel] capacity frozen: gm_heap %llu B, gm_sm %llu B, runtime_pool %llu B, "
      "graph_definition %llu B\n",
      static_cast<unsigned long long>(plan.gm_heap_bytes),
      static_cast<unsigned long long>(plan.gm_sm_bytes),
      static_cast<unsigned long long>(plan.runtime_pool_bytes),
      static_cast<unsigned long long>(plan.graph_definition_bytes));
  std::int32_t callable = -1;
  check(rrt_callable_prepare(kernel_ctx, &step.desc(), &callable), "rrt_callable_prepare");

  void *x = upload(kernel_ctx, std::vector<float>(io_floats, 0.0F));
  void *norm = upload(kernel_ctx, weights.norm);
  void *up = upload(kernel_ctx, weights.up);
  void *down = upload(kernel_ctx, weights.down);
  void *out = upload(kernel_ctx, std::vector<float>(io_floats, 0.0F));
  const rrt_tensor_arg_t tensors[demo::kParamCount] = {
      {x, io_floats * sizeof(float), RRT_SPACE_DEVICE},
      {norm, weights.norm.size() * sizeof(float), RRT_SPACE_DEVICE},
      {up, weights.up.size() * sizeof(float), RRT_SPACE_DEVICE},
      {down, weights.down.size() * sizeof(float), RRT_SPACE_DEVICE},
      {out, io_floats * sizeof(float), RRT_SPACE_DEVICE},
  };
  rrt_run_args_t args{};
  args.struct_size = sizeof args;
  args.num_tensors = demo::kParamCount;
  args.tensors = tensors;

  rrt_stream_t stream = nullptr;
  check(rrt_stream_create(kernel_ctx, &stream), "rrt_stream_create");
  const rrt_stats_t after_init = stats_of(kernel_ctx);

  check(rrt_stream_begin_capture(stream), "rrt_stream_begin_capture");
  check(rrt_kernel_launch(kernel_ctx, callable, &args, stream), "rrt_kernel_launch");
  rrt_graph_t graph = nullptr;
  check(rrt_stream_end_capture(stream, &graph), "rrt_stream_end_capture");
  std::printf("[kernel] captured one launch into a graph\n");

  std::vector<float> result(io_floats);
  long mismatches = 0;
  double replay_seconds = 0.0;
  // Writes a new input into the captured input buffer, replays, reads the output back and
  // compares it with the reference. Only the device work is timed.
  auto replay_and_check = [&](std::uint32_t step_index) {
    const std::vector<float> input = demo::make_input(shape, step_index);
    const auto start = Clock::now();
    check(rrt_memcpy_h2d(kernel_ctx, x, input.data(), io_floats * sizeof(float), nullptr),
          "rrt_memcpy_h2d");
    check(rrt_graph_replay(graph, stream), "rrt_graph_replay");
    check(rrt_stream_synchronize(stream), "rrt_stream_synchronize");
    check(rrt_memcpy_d2h(kernel_ctx, result.data(), out, io_floats * sizeof(float), nullptr),
          "rrt_memcpy_d2h");
    replay_seconds += std::chrono::duration<double>(Clock::now() - start).count();
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
  const demo::DecodeStepDesc larger_step(kernel_ctx, larger, options.bind);
  std::int32_t larger_id = -1;
  const rrt_status_t refused = rrt_callable_prepare(kernel_ctx, &larger_step.desc(), &larger_id);
  rrt_error_detail_t detail;
  rrt_last_error(&detail);
  std::printf("[kernel] larger request (rows=%u): %s\n", larger.rows, rrt_status_name(refused));
  std::printf("         %s\n", detail.message);
  if (refused == RRT_OK) {
    std::printf("         (expected a refusal)\n");
    ++mismatches;
  }
  const long before_after_refusal = mismatches;
  for (std::uint32_t i = 0; i < 10; ++i) {
    replay_and_check(100000U + i);
  }
  std::printf("[kernel] the held graph still replays correctly after the refusal: %s\n",
              mismatches == before_after_refusal ? "yes" : "NO");
  const rrt_stats_t kernel_stats = stats_of(kernel_ctx);

  check(rrt_graph_destroy(graph), "rrt_graph_destroy");
  check(rrt_stream_destroy(stream), "rrt_stream_destroy");
  for (void *buffer : {x, norm, up, down, out}) {
    check(rrt_device_free(kernel_ctx, buffer), "rrt_device_free");
  }
  check(rrt_context_destroy(kernel_ctx), "rrt_context_destroy");

  // ---- program mode: the same step, eager, HOST tensors, buffers grown on demand ---------
  rrt_context_t program_ctx = make_context(options);
  check(rrt_program_init(program_ctx), "rrt_program_init");
  const demo::DecodeStepDesc program_step(program_ctx, shape, options.bind);
  std::int32_t program_callable = -1;
  check(rrt_callable_prepare(program_ctx, &program_step.desc(), &program_callable),
        "rrt_callable_prepare");
  std::vector<float> host_x(io_floats);
  std::vector<float> host_out(io_floats);
  const rrt_tensor_arg_t host_tensors[demo::kParamCount] = {
      {host_x.data(), io_floats * sizeof(float), RRT_SPACE_HOST},
      {const_cast<float *>(weights.norm.data()), weights.norm.size() * sizeof(float),
       RRT_SPACE_HOST},
      {const_cast<float *>(weights.up.data()), weights.up.size() * sizeof(float), RRT_SPACE_HOST},
      {const_cast<float *>(weights.down.data()), weights.down.size() * sizeof(float),
       RRT_SPACE_HOST},
      {host_out.data(), io_floats * sizeof(float), RRT_SPACE_HOST},
  };
  rrt_run_args_t host_args = args;
  host_args.tensors = host_tensors;
  const int eager_runs = options.replays < 200 ? options.replays : 200;
  double eager_seconds = 0.0;
  long program_mismatches = 0;
  for (int i = 0; i < eager_runs; ++i) {
    const std::vector<float> input = demo::make_input(shape, static_cast<std::uint32_t>(i));
    std::copy(input.begin(), input.end(), host_x.begin());
    const auto start = Clock::now();
    check(rrt_run(program_ctx, program_callable, &host_args), "rrt_run");
    eager_seconds += std::chrono::duration<double>(Clock::now() - start).count();
    if (!matches(host_out, demo::reference_decode(shape, weights, host_x))) {
      ++program_mismatches;
    }
  }
  const rrt_stats_t program_stats = stats_of(program_ctx);
  check(rrt_context_destroy(program_ctx), "rrt_context_destroy");
  std::printf("[program] %d eager runs with HOST tensors, mismatches %ld\n", eager_runs,
              program_mismatches);
  mismatches += program_mismatches;

  // ---- report --------------------------------------------------------------------------
  const unsigned long long allocations_after_init =
      kernel_stats.device_alloc_calls - after_init.device_alloc_calls;
  const unsigned long long frees_after_init =
      kernel_stats.device_free_calls - after_init.device_free_calls;
  unsigned long long refusals = 0;
  for (const unsigned long long count : kernel_stats.refusals) {
    refusals += count;
  }
  const double per_replay_us = 1e6 * replay_seconds / static_cast<double>(kernel_stats.replays);
  const double per_eager_us = 1e6 * eager_seconds / eager_runs;
  std::printf("\nreport\n");
  std::printf("  replays                              %llu\n",
              static_cast<unsigned long long>(kernel_stats.replays));
  std::printf("  mismatches                           %ld\n", mismatches);
  std::printf("  device allocations after init        %llu (frees %llu)\n", allocations_after_init,
              frees_after_init);
  std::printf("  capacity refusals                    %llu\n", refusals);
  unsigned long long base_changes = 0;
  for (const rrt_region_stats_t &region : kernel_stats.regions) {
    base_changes += region.base_changes;
  }
  std::printf("  base changes in the kernel context   %llu\n", base_changes);
  std::printf("  time per replay (input copy, replay, output copy)     %.1f us\n", per_replay_us);
  std::printf("  time per eager program-mode run (HOST tensors staged)  %.1f us\n", per_eager_us);
  std::printf("  program-mode device allocations      %llu over %d runs\n",
              static_cast<unsigned long long>(program_stats.device_alloc_calls), eager_runs);
  const bool ok = mismatches == 0 && allocations_after_init == 0 && frees_after_init == 0;
  std::printf("\n%s\n",
              ok ? "OK: every output matched the reference" : "FAILED: see the report above");
  return ok ? 0 : 1;
}
