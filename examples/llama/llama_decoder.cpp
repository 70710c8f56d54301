// llama-decoder: greedy decoding of a llama-style model with replayrt's built-in kernels, on
// the simulator or on CUDA, in program mode (one rrt_run per token) and in kernel mode (one
// decode step captured once, one graph replay per token). Checks that both modes produce the
// same tokens and that their logits match a plain C++ reference, and prints tokens/s for each.
// Written on the C++ API (replayrt.hpp); examples/raw_abi.c shows the C ABI itself.
//
//   llama-decoder [--platform sim|cuda] [--tokens N] [--checkpoint FILE] [--token ID]
//                 [--workers N] [--wait spin|yield|block|spin-then-block] [--quiet]
//                 [--save-checkpoint FILE] [--unshared-classifier] [--trace FILE]
//                 [--shape small|stories15M]
//
// --workers and --wait set the simulator's device workers and host wait policy (CUDA keeps its
// runtime's scheduling).
// Without --checkpoint the model has random weights from a fixed seed (with a classifier of
// its own under --unshared-classifier), in the shape --shape names: `small` (the default: width
// 64, 4 layers, vocabulary 512) or `stories15M` (the shape of llama2.c's 15M-parameter model:
// width 288, 6 layers, vocabulary 32000, 256 positions); FILE is a llama2.c checkpoint (for example
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

#include <replayrt/replayrt.hpp>
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
  llama::Config shape;
};

// The stories15M checkpoint's shape.
llama::Config stories15m_shape() {
  llama::Config config;
  config.dim = 288;
  config.hidden_dim = 768;
  config.n_layers = 6;
  config.n_heads = 6;
  config.n_kv_heads = 6;
  config.vocab_size = 32000;
  config.seq_len = 256;
  return config;
}

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
    } else if (arg == "--shape" && has_value) {
      const std::string shape = argv[++i];
      if (shape == "stories15M") {
        options->shape = stories15m_shape();
      } else if (shape != "small") {
        return false;
      }
    } else if (arg == "--quiet") {
      options->quiet = true;
    } else {
      return false;
    }
  }
  return options->tokens > 0;
}

// The device buffers behind the step's four params: the weights uploaded, the cache zeroed.
struct StepBuffers {
  rrt::DeviceBuffer weights;
  rrt::DeviceBuffer kv_cache;
  rrt::DeviceBuffer state;
  rrt::DeviceBuffer logits;
  rrt::Args args;

  StepBuffers(rrt::Context &ctx, const llama::Model &model)
      : weights(ctx.allocate(model.weights.size() * sizeof(float))),
        kv_cache(ctx.allocate(llama::kv_cache_elements(model.config) * sizeof(float))),
        state(ctx.allocate(2 * sizeof(std::int32_t))),
        logits(ctx.allocate(model.config.vocab_size * sizeof(float))) {
    weights.upload(model.weights);
    kv_cache.upload(std::vector<float>(llama::kv_cache_elements(model.config), 0.0F));
    args.device(weights).device(kv_cache).device(state).device(logits);
  }
};

struct Decoded {
  std::vector<std::uint32_t> tokens;       // tokens[0] is the first input
  std::vector<std::vector<float>> logits;  // per step
  double seconds = 0.0;
};

rrt::Context create_context(const Options &options) {
  rrt::ContextOptions context_options;
  context_options.platform = options.platform;
  context_options.device_workers = options.workers;
  context_options.wait_policy = options.wait;
  context_options.profiling = !options.trace.empty();
  return rrt::Context(context_options);
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

// Program mode: every token is one run; the buffers grow on the first run. With a trace a run
// is prepared, launched and waited for step by step, so its task timings are read before it
// is finalized.
Decoded decode_program_mode(const llama::Model &model, const Options &options, rrt::Trace *trace) {
  rrt::Context ctx = create_context(options);
  ctx.program_init();
  rrt::CallableBuilder step = llama::decoder_step(model.config, model.layout());
  const rrt::CallableId callable = ctx.prepare(step);
  if (trace != nullptr) {
    trace->name_callable(callable, "decoder_step (program mode)", step);
  }
  StepBuffers buffers(ctx, model);
  Decoded out;
  std::vector<float> logits(model.config.vocab_size);
  std::uint32_t token = options.first_token;
  out.tokens.push_back(token);
  const auto start = Clock::now();
  for (std::uint32_t pos = 0; pos < options.tokens; ++pos) {
    buffers.state.upload(std::vector<std::int32_t>{static_cast<std::int32_t>(token),
                                                   static_cast<std::int32_t>(pos)});
    if (trace == nullptr) {
      ctx.run(callable, buffers.args);
    } else {
      const rrt::Trace::HostSlice slice(*trace, "run");
      rrt::Run run = ctx.prepare_run(callable, buffers.args);
      run.launch();
      run.wait();
      trace->add_device_work("run " + std::to_string(pos), {callable}, run.profile());
      run.finalize();
    }
    buffers.logits.download(logits);
    token = llama::argmax(logits);
    out.tokens.push_back(token);
    out.logits.push_back(logits);
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

// Kernel mode: the plan is fitted and frozen, one step (state upload, launch, logits
// download) is captured once, and every token is one replay of that graph.
Decoded decode_kernel_mode(const llama::Model &model, const Options &options, rrt::Trace *trace) {
  rrt::Context ctx = create_context(options);
  rrt::CallableBuilder step = llama::decoder_step(model.config, model.layout());
  ctx.kernel_init(ctx.fit_kernel_config({&step}));
  const rrt::CallableId callable = ctx.prepare(step);
  if (trace != nullptr) {
    trace->name_callable(callable, "decoder_step", step);
  }
  StepBuffers buffers(ctx, model);
  rrt::Stream stream = ctx.stream();

  // The graph reads `state` and writes `logits` (host memory) at every replay.
  std::int32_t state[2] = {0, 0};
  std::vector<float> logits(model.config.vocab_size);
  const rrt::Graph graph = stream.capture([&] {
    stream.upload(buffers.state, state, sizeof state);
    ctx.launch(callable, buffers.args, stream);
    stream.download(logits.data(), buffers.logits, logits.size() * sizeof(float));
  });

  const rrt_stats_t before = ctx.stats();
  Decoded out;
  std::uint32_t token = options.first_token;
  out.tokens.push_back(token);
  const auto start = Clock::now();
  for (std::uint32_t pos = 0; pos < options.tokens; ++pos) {
    state[0] = static_cast<std::int32_t>(token);
    state[1] = static_cast<std::int32_t>(pos);
    traced(trace, "replay", [&] { graph.replay(stream); });
    traced(trace, "synchronize", [&] { stream.synchronize(); });
    if (trace != nullptr) {
      trace->add_device_work(ctx, "replay " + std::to_string(pos), {callable});
    }
    token = llama::argmax(logits);
    out.tokens.push_back(token);
    out.logits.push_back(logits);
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const rrt_stats_t after = ctx.stats();
  if (!options.quiet) {
    std::printf(
        "kernel mode: %llu bytes of runtime device memory for %zu bytes of weights; "
        "%llu allocations during %u replays\n",
        static_cast<unsigned long long>(after.live_bytes), model.weights.size() * sizeof(float),
        static_cast<unsigned long long>(after.device_alloc_calls - before.device_alloc_calls),
        options.tokens);
  }
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

// FNV-1a over the bytes of every value, step by step: equal exactly when the bits are.
std::uint64_t bits_hash(const std::vector<std::vector<float>> &steps) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const std::vector<float> &step : steps) {
    const auto *bytes = reinterpret_cast<const unsigned char *>(step.data());
    for (std::size_t i = 0; i < step.size() * sizeof(float); ++i) {
      hash = (hash ^ bytes[i]) * 0x100000001b3ULL;
    }
  }
  return hash;
}

void print_tokens(const char *label, const std::vector<std::uint32_t> &tokens) {
  std::printf("%s", label);
  for (const std::uint32_t token : tokens) {
    std::printf(" %u", token);
  }
  std::printf("\n");
}

// The decoder proper; a failing call throws rrt::Error.
int decode(int argc, char **argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: llama-decoder [--platform sim|cuda] [--tokens N] [--checkpoint FILE] "
                 "[--token ID] "
                 "[--workers N] [--wait spin|yield|block|spin-then-block] [--quiet] "
                 "[--save-checkpoint FILE] [--unshared-classifier] [--trace FILE] "
                 "[--shape small|stories15M]\n");
    return 2;
  }
  llama::Model model;
  if (options.checkpoint.empty()) {
    model = llama::make_random_model(options.shape, !options.unshared_classifier, 20261201U);
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
    std::printf("logits: fnv-1a %016llx over the bits of every step's logits\n",
                static_cast<unsigned long long>(bits_hash(kernel.logits)));
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
