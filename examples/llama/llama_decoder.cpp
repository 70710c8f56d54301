// llama-decoder: greedy decoding of a llama-style model with replayrt's built-in kernels, on
// the simulator or on CUDA, in program mode (one rrt_run per token) and in kernel mode (one
// decode step captured once, one graph replay per token). Checks that both modes produce the
// same tokens and that their logits match a plain C++ reference, and prints tokens/s for each.
//
//   llama-decoder [--platform sim|cuda] [--tokens N] [--checkpoint FILE] [--token ID]
//                 [--workers N] [--wait spin|yield|block|spin-then-block] [--quiet]
//                 [--save-checkpoint FILE] [--unshared-classifier] [--trace FILE]
//
// --workers and --wait set the simulator's device workers and host wait policy (CUDA keeps its
// runtime's scheduling).
// Without --checkpoint the model has random weights from a fixed seed (with a classifier of
// its own under --unshared-classifier); FILE is a llama2.c checkpoint (for example
// stories15M.bin). --save-checkpoint writes the model decoded as such a file. --trace FILE turns
// profiling on and writes a Chrome trace-event timeline of every run and replay
// (replayrt/trace.hpp). Exit status: 0 when everything matched, 1 otherwise.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <replayrt/replayrt.h>
#include <replayrt/trace.hpp>

#include "decoder_step.h"
#include "llama_model.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  rrt_platform_t platform = RRT_PLATFORM_SIM;
  std::uint32_t tokens = 48;
  std::string checkpoint;
  std::string save_checkpoint;
  bool unshared_classifier = false;
  std::uint32_t first_token = 1;
  unsigned workers = 1;
  rrt_wait_policy_t wait = RRT_WAIT_SPIN_THEN_BLOCK;
  std::string trace;
  bool quiet = false;
};

bool parse_wait_policy(const std::string &name, rrt_wait_policy_t *out) {
  const struct {
    const char *name;
    rrt_wait_policy_t policy;
  } policies[] = {{"spin", RRT_WAIT_SPIN},
                  {"yield", RRT_WAIT_YIELD},
                  {"block", RRT_WAIT_BLOCK},
                  {"spin-then-block", RRT_WAIT_SPIN_THEN_BLOCK}};
  for (const auto &entry : policies) {
    if (name == entry.name) {
      *out = entry.policy;
      return true;
    }
  }
  return false;
}

[[noreturn]] void die(const char *what, rrt_status_t status) {
  rrt_error_detail_t detail;
  rrt_last_error(&detail);
  std::fprintf(stderr, "llama-decoder: %s failed: %s\n  %s\n", what, rrt_status_name(status),
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
    const bool has_value = i + 1 < argc;
    if (arg == "--platform" && has_value) {
      const std::string platform = argv[++i];
      if (platform != "sim" && platform != "cuda") {
        return false;
      }
      options->platform = platform == "sim" ? RRT_PLATFORM_SIM : RRT_PLATFORM_CUDA;
    } else if (arg == "--tokens" && has_value) {
      options->tokens = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (arg == "--checkpoint" && has_value) {
      options->checkpoint = argv[++i];
    } else if (arg == "--save-checkpoint" && has_value) {
      options->save_checkpoint = argv[++i];
    } else if (arg == "--unshared-classifier") {
      options->unshared_classifier = true;
    } else if (arg == "--token" && has_value) {
      options->first_token = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (arg == "--workers" && has_value) {
      options->workers = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else if (arg == "--wait" && has_value) {
      if (!parse_wait_policy(argv[++i], &options->wait)) {
        return false;
      }
    } else if (arg == "--trace" && has_value) {
      options->trace = argv[++i];
    } else if (arg == "--quiet") {
      options->quiet = true;
    } else {
      return false;
    }
  }
  return options->tokens > 0;
}

// The device buffers behind the step's four params, owned by one context.
struct StepBuffers {
  rrt_context_t ctx = nullptr;
  void *weights = nullptr;
  void *kv_cache = nullptr;
  void *state = nullptr;
  void *logits = nullptr;
  std::vector<rrt_tensor_arg_t> args;
  rrt_run_args_t run_args{};

  StepBuffers(rrt_context_t context, const llama::Model &model, const llama::DecoderStep &step)
      : ctx(context) {
    const std::uint64_t weight_bytes = model.weights.size() * sizeof(float);
    const std::uint64_t cache_bytes = step.kv_cache_elements() * sizeof(float);
    const std::uint64_t state_bytes = 2 * sizeof(std::int32_t);
    const std::uint64_t logits_bytes = model.config.vocab_size * sizeof(float);
    check(rrt_device_alloc(ctx, weight_bytes, &weights), "rrt_device_alloc (weights)");
    check(rrt_device_alloc(ctx, cache_bytes, &kv_cache), "rrt_device_alloc (kv cache)");
    check(rrt_device_alloc(ctx, state_bytes, &state), "rrt_device_alloc (state)");
    check(rrt_device_alloc(ctx, logits_bytes, &logits), "rrt_device_alloc (logits)");
    check(rrt_memcpy_h2d(ctx, weights, model.weights.data(), weight_bytes, nullptr),
          "rrt_memcpy_h2d (weights)");
    const std::vector<float> zeros(step.kv_cache_elements(), 0.0F);
    check(rrt_memcpy_h2d(ctx, kv_cache, zeros.data(), cache_bytes, nullptr),
          "rrt_memcpy_h2d (kv cache)");
    args = {{weights, weight_bytes, RRT_SPACE_DEVICE},
            {kv_cache, cache_bytes, RRT_SPACE_DEVICE},
            {state, state_bytes, RRT_SPACE_DEVICE},
            {logits, logits_bytes, RRT_SPACE_DEVICE}};
    run_args.struct_size = sizeof run_args;
    run_args.num_tensors = static_cast<std::uint32_t>(args.size());
    run_args.tensors = args.data();
  }
  ~StepBuffers() {
    for (void *buffer : {weights, kv_cache, state, logits}) {
      (void)rrt_device_free(ctx, buffer);
    }
  }
  StepBuffers(const StepBuffers &) = delete;
  StepBuffers &operator=(const StepBuffers &) = delete;
};

struct Decoded {
  std::vector<std::uint32_t> tokens;       // tokens[0] is the first input
  std::vector<std::vector<float>> logits;  // per step
  double seconds = 0.0;
};

rrt_context_t create_context(const Options &options) {
  rrt_context_options_t context_options{};
  context_options.struct_size = sizeof context_options;
  context_options.platform = options.platform;
  context_options.device_workers = options.workers;
  context_options.wait_policy = options.wait;
  context_options.profiling = options.trace.empty() ? 0U : 1U;
  rrt_context_t ctx = nullptr;
  check(rrt_context_create(&context_options, &ctx), "rrt_context_create");
  return ctx;
}

// Runs `call`, as a host slice named `name` when there is a trace.
template <typename Call>
void traced(rrt::Trace *trace, const char *name, Call &&call) {
  if (trace != nullptr) {
    trace->host(name, std::forward<Call>(call));
  } else {
    std::forward<Call>(call)();
  }
}

// Up to `tasks` task timings from `profile`, one of rrt_run_profile and rrt_context_profile
// bound to its run or context.
template <typename Profile>
std::vector<rrt_task_timing_t> task_timings(std::size_t tasks, Profile &&profile) {
  std::vector<rrt_task_timing_t> timings(tasks);
  std::uint32_t count = 0;
  check(profile(timings.data(), static_cast<std::uint32_t>(tasks), &count), "reading a profile");
  timings.resize(count);
  return timings;
}

// One program-mode run. With a trace it is rrt_run's four calls, so that the run's task
// timings are read before it is finalized.
void run_step(rrt_context_t ctx, std::int32_t callable, const rrt_run_args_t *args,
              std::size_t tasks, rrt::Trace *trace, std::uint32_t pos) {
  if (trace == nullptr) {
    check(rrt_run(ctx, callable, args), "rrt_run");
    return;
  }
  const rrt::Trace::HostSlice slice(*trace, "run");
  rrt_run_t run = nullptr;
  check(rrt_run_prepare(ctx, callable, args, &run), "rrt_run_prepare");
  check(rrt_run_launch(run, nullptr), "rrt_run_launch");
  check(rrt_run_wait(run), "rrt_run_wait");
  trace->add_device_work("run " + std::to_string(pos), {rrt::CallableId{callable}},
                         task_timings(tasks, [run](rrt_task_timing_t *out, std::uint32_t capacity,
                                                   std::uint32_t *count) {
                           return rrt_run_profile(run, out, capacity, count);
                         }));
  check(rrt_run_finalize(run), "rrt_run_finalize");
}

// Program mode: every token is one rrt_run; the buffers grow on the first run.
Decoded decode_program_mode(const llama::Model &model, const Options &options, rrt::Trace *trace) {
  rrt_context_t ctx = create_context(options);
  check(rrt_program_init(ctx), "rrt_program_init");
  Decoded out;
  {
    const llama::DecoderStep step(ctx, model.config, model.layout());
    if (!step.ok()) {
      std::fprintf(stderr, "llama-decoder: a built-in kernel is missing\n");
      std::exit(1);
    }
    std::int32_t callable = -1;
    check(rrt_callable_prepare(ctx, &step.desc(), &callable), "rrt_callable_prepare");
    if (trace != nullptr) {
      trace->name_callable(rrt::CallableId{callable}, "decoder_step (program mode)",
                           step.task_kernels());
    }
    StepBuffers buffers(ctx, model, step);
    std::vector<float> logits(model.config.vocab_size);
    std::uint32_t token = options.first_token;
    out.tokens.push_back(token);
    const auto start = Clock::now();
    for (std::uint32_t pos = 0; pos < options.tokens; ++pos) {
      const std::int32_t state[2] = {static_cast<std::int32_t>(token),
                                     static_cast<std::int32_t>(pos)};
      check(rrt_memcpy_h2d(ctx, buffers.state, state, sizeof state, nullptr), "rrt_memcpy_h2d");
      run_step(ctx, callable, &buffers.run_args, step.task_kernels().size(), trace, pos);
      check(rrt_memcpy_d2h(ctx, logits.data(), buffers.logits, logits.size() * sizeof(float),
                           nullptr),
            "rrt_memcpy_d2h");
      token = llama::argmax(logits);
      out.tokens.push_back(token);
      out.logits.push_back(logits);
    }
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  check(rrt_context_destroy(ctx), "rrt_context_destroy");
  return out;
}

// Kernel mode: the plan is fitted and frozen, one step (state upload, launch, logits
// download) is captured once, and every token is one replay of that graph.
Decoded decode_kernel_mode(const llama::Model &model, const Options &options, rrt::Trace *trace) {
  rrt_context_t ctx = create_context(options);
  Decoded out;
  {
    const llama::DecoderStep step(ctx, model.config, model.layout());
    if (!step.ok()) {
      std::fprintf(stderr, "llama-decoder: a built-in kernel is missing\n");
      std::exit(1);
    }
    rrt_kernel_config_t config{};
    config.struct_size = sizeof config;
    config.context_generation = 0;  // the runtime picks a process-unique one
    check(rrt_capacity_plan_fit(&step.desc(), &config.capacity), "rrt_capacity_plan_fit");
    check(rrt_kernel_init(ctx, &config), "rrt_kernel_init");
    std::int32_t callable = -1;
    check(rrt_callable_prepare(ctx, &step.desc(), &callable), "rrt_callable_prepare");
    if (trace != nullptr) {
      trace->name_callable(rrt::CallableId{callable}, "decoder_step", step.task_kernels());
    }
    StepBuffers buffers(ctx, model, step);
    rrt_stream_t stream = nullptr;
    check(rrt_stream_create(ctx, &stream), "rrt_stream_create");

    // The graph reads `state` and writes `logits` (host memory) at every replay.
    std::int32_t state[2] = {0, 0};
    std::vector<float> logits(model.config.vocab_size);
    check(rrt_stream_begin_capture(stream), "rrt_stream_begin_capture");
    check(rrt_memcpy_h2d(ctx, buffers.state, state, sizeof state, stream), "rrt_memcpy_h2d");
    check(rrt_kernel_launch(ctx, callable, &buffers.run_args, stream), "rrt_kernel_launch");
    check(rrt_memcpy_d2h(ctx, logits.data(), buffers.logits, logits.size() * sizeof(float), stream),
          "rrt_memcpy_d2h");
    rrt_graph_t graph = nullptr;
    check(rrt_stream_end_capture(stream, &graph), "rrt_stream_end_capture");

    rrt_stats_t before{};
    before.struct_size = sizeof before;
    check(rrt_context_stats(ctx, &before), "rrt_context_stats");
    std::uint32_t token = options.first_token;
    out.tokens.push_back(token);
    const auto start = Clock::now();
    for (std::uint32_t pos = 0; pos < options.tokens; ++pos) {
      state[0] = static_cast<std::int32_t>(token);
      state[1] = static_cast<std::int32_t>(pos);
      traced(trace, "replay", [&] { check(rrt_graph_replay(graph, stream), "rrt_graph_replay"); });
      traced(trace, "synchronize",
             [&] { check(rrt_stream_synchronize(stream), "rrt_stream_synchronize"); });
      if (trace != nullptr) {
        trace->add_device_work("replay " + std::to_string(pos), {rrt::CallableId{callable}},
                               task_timings(step.task_kernels().size(),
                                            [ctx](rrt_task_timing_t *out, std::uint32_t capacity,
                                                  std::uint32_t *count) {
                                              return rrt_context_profile(ctx, out, capacity, count);
                                            }));
      }
      token = llama::argmax(logits);
      out.tokens.push_back(token);
      out.logits.push_back(logits);
    }
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    rrt_stats_t after{};
    after.struct_size = sizeof after;
    check(rrt_context_stats(ctx, &after), "rrt_context_stats");
    if (!options.quiet) {
      std::printf(
          "kernel mode: %llu bytes of runtime device memory for %zu bytes of weights; "
          "%llu allocations during %u replays\n",
          static_cast<unsigned long long>(after.live_bytes), model.weights.size() * sizeof(float),
          static_cast<unsigned long long>(after.device_alloc_calls - before.device_alloc_calls),
          options.tokens);
    }
    check(rrt_graph_destroy(graph), "rrt_graph_destroy");
    check(rrt_stream_destroy(stream), "rrt_stream_destroy");
  }
  check(rrt_context_destroy(ctx), "rrt_context_destroy");
  return out;
}

// The largest |a - b| / max(1, |b|) over all steps.
double max_relative_difference(const std::vector<std::vector<float>> &a,
                               const std::vector<std::vector<float>> &b) {
  double worst = 0.0;
  for (std::size_t s = 0; s < a.size(); ++s) {
    for (std::size_t i = 0; i < a[s].size(); ++i) {
      const double scale = std::max(1.0, std::fabs(static_cast<double>(b[s][i])));
      worst = std::max(worst, std::fabs(static_cast<double>(a[s][i]) - b[s][i]) / scale);
    }
  }
  return worst;
}

void print_tokens(const char *label, const std::vector<std::uint32_t> &tokens) {
  std::printf("%s", label);
  for (const std::uint32_t token : tokens) {
    std::printf(" %u", token);
  }
  std::printf("\n");
}

// The decoder proper; a failing trace call throws (a failing C call exits in check()).
int decode(int argc, char **argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: llama-decoder [--platform sim|cuda] [--tokens N] [--checkpoint FILE] "
                 "[--token ID] "
                 "[--workers N] [--wait spin|yield|block|spin-then-block] [--quiet] "
                 "[--save-checkpoint FILE] [--unshared-classifier] [--trace FILE]\n");
    return 2;
  }
  llama::Model model;
  if (options.checkpoint.empty()) {
    model = llama::make_random_model(llama::Config{}, !options.unshared_classifier, 20261201U);
  } else {
    std::string error;
    if (!llama::load_checkpoint(options.checkpoint, &model, &error)) {
      std::fprintf(stderr, "llama-decoder: %s\n", error.c_str());
      return 1;
    }
  }
  if (!options.save_checkpoint.empty()) {
    std::string error;
    if (!llama::save_checkpoint(options.save_checkpoint, model, &error)) {
      std::fprintf(stderr, "llama-decoder: %s\n", error.c_str());
      return 1;
    }
  }
  const llama::Config &config = model.config;
  if (options.tokens > config.seq_len || options.first_token >= config.vocab_size) {
    std::fprintf(stderr, "llama-decoder: --tokens must be at most %u and --token below %u\n",
                 config.seq_len, config.vocab_size);
    return 2;
  }
  if (!options.quiet) {
    std::printf("model: dim %u, hidden %u, %u layers, %u heads (%u kv), vocab %u, %zu weights%s\n",
                config.dim, config.hidden_dim, config.n_layers, config.n_heads, config.n_kv_heads,
                config.vocab_size, model.weights.size(),
                options.checkpoint.empty() ? " (random, fixed seed)" : "");
  }

  rrt::Trace trace;
  rrt::Trace *const tracing = options.trace.empty() ? nullptr : &trace;
  const Decoded program = decode_program_mode(model, options, tracing);
  const Decoded kernel = decode_kernel_mode(model, options, tracing);
  if (tracing != nullptr) {
    trace.write(options.trace);
  }

  // The reference follows the program-mode tokens, so its logits compare step by step.
  llama::ReferenceDecoder reference(model);
  std::vector<std::vector<float>> reference_logits;
  for (std::uint32_t pos = 0; pos < options.tokens; ++pos) {
    reference_logits.push_back(reference.step(program.tokens[pos], pos));
  }
  const double reference_difference = max_relative_difference(program.logits, reference_logits);
  const bool modes_agree = program.tokens == kernel.tokens && program.logits == kernel.logits;
  constexpr double kTolerance = 1e-3;

  if (!options.quiet) {
    print_tokens("tokens:", program.tokens);
  }
  std::printf("platform: %s\n", options.platform == RRT_PLATFORM_SIM ? "sim" : "cuda");
  std::printf("program mode: %.1f tokens/s (one rrt_run per token)\n",
              options.tokens / program.seconds);
  std::printf("kernel mode:  %.1f tokens/s (one graph replay per token)\n",
              options.tokens / kernel.seconds);
  std::printf(
      "program and kernel mode %s; logits vs the C++ reference: max relative "
      "difference %.2e (%s)\n",
      modes_agree ? "agree token for token and bit for bit" : "DISAGREE", reference_difference,
      reference_difference <= kTolerance ? "ok" : "TOO LARGE");
  return modes_agree && reference_difference <= kTolerance ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
  try {
    return decode(argc, argv);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "llama-decoder: %s\n", error.what());
    return 1;
  }
}
