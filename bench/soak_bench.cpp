// Soak: many kernel-mode replays of one small captured graph, through the C ABI, with the
// process's resident set size and the context's allocator calls sampled along the way. A
// runtime that keeps nothing per replay shows both flat after the first sample.
//
//   soak_bench [--replays N] [--sample-every N] [--json PATH]
//
// Prints a table, and writes the samples as JSON to PATH when given. Exit status: 0 when every
// call succeeded and every checked output was right, 1 otherwise (flatness is reported, not
// enforced: this is a benchmark).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include <replayrt/replayrt.h>

namespace {

constexpr std::uint64_t kN = 1024;
constexpr std::uint64_t kBytes = kN * sizeof(float);
constexpr std::uint64_t kSynchronizeEvery = 1000;  // replays queued before a synchronize

struct Sample {
  std::uint64_t replays;
  double seconds;
  std::uint64_t rss_bytes;
  std::uint64_t device_alloc_calls;
  std::uint64_t device_free_calls;
  std::uint64_t live_bytes;
};

std::uint64_t resident_bytes() {
  std::FILE *statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) {
    return 0;
  }
  unsigned long long size = 0;
  unsigned long long resident = 0;
  const int read = std::fscanf(statm, "%llu %llu", &size, &resident);
  std::fclose(statm);
  return read == 2 ? resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

[[noreturn]] void die(const char *what, rrt_status_t status) {
  rrt_error_detail_t detail{};
  (void)rrt_last_error(&detail);
  std::fprintf(stderr, "soak_bench: %s: %s (%s)\n", what, rrt_status_name(status), detail.message);
  std::exit(1);
}

void check(rrt_status_t status, const char *what) {
  if (status != RRT_OK) {
    die(what, status);
  }
}

}  // namespace

int main(int argc, char **argv) {
  std::uint64_t replays = 1000000;
  std::uint64_t sample_every = 100000;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--replays" && i + 1 < argc) {
      replays = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--sample-every" && i + 1 < argc) {
      sample_every = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--replays N] [--sample-every N] [--json PATH]\n", argv[0]);
      return 64;
    }
  }
  if (sample_every == 0 || replays == 0) {
    std::fprintf(stderr, "soak_bench: --replays and --sample-every must be positive\n");
    return 64;
  }

  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_SIM;
  rrt_context_t ctx = nullptr;
  check(rrt_context_create(&options, &ctx), "rrt_context_create");
  std::int32_t scale = -1;
  std::int32_t add = -1;
  check(rrt_kernel_lookup(ctx, "scale", &scale), "rrt_kernel_lookup");
  check(rrt_kernel_lookup(ctx, "add", &add), "rrt_kernel_lookup");

  // out = 2 * in + in: two tasks through one intermediate.
  rrt_tensor_desc_t tensors[2]{};
  for (int i = 0; i < 2; ++i) {
    tensors[i].dtype = RRT_DTYPE_F32;
    tensors[i].ndim = 1;
    tensors[i].shape[0] = kN;
    tensors[i].direction = i == 0 ? RRT_DIR_IN : RRT_DIR_OUT;
  }
  const rrt_tensor_desc_t intermediate = tensors[0];
  const rrt_operand_t scale_ops[3] = {
      {RRT_OPERAND_PARAM, 0},
      {RRT_OPERAND_INTERMEDIATE, 0},
      {RRT_OPERAND_IMMEDIATE, static_cast<std::uint32_t>(rrt_scalar_from_f32(2.0F))}};
  const rrt_operand_t add_ops[3] = {
      {RRT_OPERAND_INTERMEDIATE, 0}, {RRT_OPERAND_PARAM, 0}, {RRT_OPERAND_PARAM, 1}};
  const rrt_task_desc_t tasks[2] = {{scale, 3, scale_ops}, {add, 3, add_ops}};
  rrt_callable_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.bind = RRT_BIND_DEVICE_BUILD;
  desc.num_params = 2;
  desc.params = tensors;
  desc.num_intermediates = 1;
  desc.intermediates = &intermediate;
  desc.num_tasks = 2;
  desc.tasks = tasks;

  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = 0x50a4;
  check(rrt_capacity_plan_fit(&desc, &config.capacity), "rrt_capacity_plan_fit");
  check(rrt_kernel_init(ctx, &config), "rrt_kernel_init");
  std::int32_t callable = -1;
  check(rrt_callable_prepare(ctx, &desc, &callable), "rrt_callable_prepare");

  void *in = nullptr;
  void *out = nullptr;
  check(rrt_device_alloc(ctx, kBytes, &in), "rrt_device_alloc");
  check(rrt_device_alloc(ctx, kBytes, &out), "rrt_device_alloc");
  std::vector<float> host_in(kN);
  for (std::uint64_t i = 0; i < kN; ++i) {
    host_in[i] = static_cast<float>(i % 251);
  }
  check(rrt_memcpy_h2d(ctx, in, host_in.data(), kBytes, nullptr), "rrt_memcpy_h2d");

  rrt_stream_t stream = nullptr;
  check(rrt_stream_create(ctx, &stream), "rrt_stream_create");
  const rrt_tensor_arg_t args_tensors[2] = {{in, kBytes, RRT_SPACE_DEVICE},
                                            {out, kBytes, RRT_SPACE_DEVICE}};
  rrt_run_args_t args{};
  args.struct_size = sizeof args;
  args.num_tensors = 2;
  args.tensors = args_tensors;
  rrt_graph_t graph = nullptr;
  check(rrt_stream_begin_capture(stream), "rrt_stream_begin_capture");
  check(rrt_kernel_launch(ctx, callable, &args, stream), "rrt_kernel_launch");
  check(rrt_stream_end_capture(stream, &graph), "rrt_stream_end_capture");

  std::vector<Sample> samples;
  std::vector<float> host_out(kN);
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t done = 0; done < replays;) {
    check(rrt_graph_replay(graph, stream), "rrt_graph_replay");
    ++done;
    if (done % kSynchronizeEvery == 0 || done == replays) {
      check(rrt_stream_synchronize(stream), "rrt_stream_synchronize");
    }
    if (done % sample_every == 0 || done == replays) {
      check(rrt_stream_synchronize(stream), "rrt_stream_synchronize");
      check(rrt_memcpy_d2h(ctx, host_out.data(), out, kBytes, nullptr), "rrt_memcpy_d2h");
      for (std::uint64_t i = 0; i < kN; ++i) {
        if (host_out[i] != 3.0F * host_in[i]) {
          std::fprintf(stderr, "soak_bench: replay %llu wrote a wrong value\n",
                       static_cast<unsigned long long>(done));
          return 1;
        }
      }
      rrt_stats_t stats{};
      stats.struct_size = sizeof stats;
      check(rrt_context_stats(ctx, &stats), "rrt_context_stats");
      samples.push_back(
          {done, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
           resident_bytes(), stats.device_alloc_calls, stats.device_free_calls, stats.live_bytes});
    }
  }

  std::printf("%12s %10s %12s %12s %12s %12s\n", "replays", "seconds", "rss_KiB", "alloc_calls",
              "free_calls", "live_bytes");
  for (const Sample &s : samples) {
    std::printf("%12llu %10.2f %12llu %12llu %12llu %12llu\n",
                static_cast<unsigned long long>(s.replays), s.seconds,
                static_cast<unsigned long long>(s.rss_bytes / 1024),
                static_cast<unsigned long long>(s.device_alloc_calls),
                static_cast<unsigned long long>(s.device_free_calls),
                static_cast<unsigned long long>(s.live_bytes));
  }
  const Sample &first = samples.front();
  const Sample &last = samples.back();
  const long long rss_growth =
      static_cast<long long>(last.rss_bytes) - static_cast<long long>(first.rss_bytes);
  const bool allocator_flat = last.device_alloc_calls == first.device_alloc_calls &&
                              last.device_free_calls == first.device_free_calls;
  std::printf(
      "after the first sample: resident set %+lld KiB, allocator calls %s; %.0f replays/s\n",
      rss_growth / 1024, allocator_flat ? "flat" : "GREW",
      static_cast<double>(last.replays) / last.seconds);

  if (!json_path.empty()) {
    std::FILE *json = std::fopen(json_path.c_str(), "w");
    if (json == nullptr) {
      std::fprintf(stderr, "soak_bench: cannot write %s\n", json_path.c_str());
      return 1;
    }
    std::fprintf(json, "{\n  \"replays\": %llu,\n  \"rss_growth_bytes\": %lld,\n",
                 static_cast<unsigned long long>(replays), rss_growth);
    std::fprintf(json, "  \"allocator_calls_flat\": %s,\n  \"samples\": [\n",
                 allocator_flat ? "true" : "false");
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const Sample &s = samples[i];
      std::fprintf(json,
                   "    {\"replays\": %llu, \"seconds\": %.3f, \"rss_bytes\": %llu, "
                   "\"device_alloc_calls\": %llu, \"device_free_calls\": %llu, "
                   "\"live_bytes\": %llu}%s\n",
                   static_cast<unsigned long long>(s.replays), s.seconds,
                   static_cast<unsigned long long>(s.rss_bytes),
                   static_cast<unsigned long long>(s.device_alloc_calls),
                   static_cast<unsigned long long>(s.device_free_calls),
                   static_cast<unsigned long long>(s.live_bytes),
                   i + 1 == samples.size() ? "" : ",");
    }
    std::fprintf(json, "  ]\n}\n");
    std::fclose(json);
  }

  check(rrt_graph_destroy(graph), "rrt_graph_destroy");
  check(rrt_stream_destroy(stream), "rrt_stream_destroy");
  check(rrt_device_free(ctx, in), "rrt_device_free");
  check(rrt_device_free(ctx, out), "rrt_device_free");
  check(rrt_context_destroy(ctx), "rrt_context_destroy");
  return 0;
}
