// The GPU benchmark: chains of N in-place "add one" tasks on N in {1, 16, 256}, over 1 Ki
// floats (launch-bound) and 16 Mi floats (64 MiB, bandwidth-bound), on five paths over the
// same CUDA kernel and launch shape:
//   eager             N kernel launches per call
//   raw_graph         cudaGraphLaunch of a capture of those N launches (the limit)
//   rrt_launch        rrt_kernel_launch of a kernel-mode callable of N tasks whose native
//                     launcher (rrt_kernel_register_native) launches the kernel once per task
//   rrt_replay        rrt_graph_replay of a capture of that launch
//   rrt_replay_owned  the same on a stream replayrt created and never shared (no outside-capture
//                     check per replay); no device time (its CUDA stream stays unshared)
// eager, raw_graph, rrt_launch and rrt_replay run on one CUDA stream, which the replayrt
// paths use wrapped (rrt_stream_wrap_native). The kernel's module is loaded
// (cudaFuncGetAttributes) before any capture: lazy loading would invalidate the first one.
// Metrics per path: host time per call (issue `calls` calls, divide), call plus synchronize
// (cudaStreamSynchronize; rrt_stream_synchronize on the replayrt paths), and device time per
// call from CUDA events around `calls` back-to-back calls. One repetition measures the three
// metrics once; the repetitions go round-robin over the paths (the first path rotates), so
// drift hits every path alike, and each metric is the median over the repetitions (at least
// 5). Every path adds to a buffer of its own; after the repetitions each element must equal N
// times the calls made (a wrong value or NaN fails that path).
//
// Then the attention built-in at 4096 positions, 32 heads, head dim 128, as rrt_kernel_launch
// of a one-task kernel-mode callable: "decode" (one query at position 4095, attending to every
// cached position) and "prefill" (4096 queries, causal). Metric: device time per launch from
// CUDA events around back-to-back launches, median over the repetitions; the output of the
// warm-up launch is checked against a float64 reference for the first and last query of two
// heads (relative error above 1e-3 fails the shape). torch_graph_bench.py measures
// scaled_dot_product_attention on the same shapes.
//
// Usage: gpu_replay_bench [--json FILE] [--repetitions R]   (R in [5, 25], default 7)
// Prints the device it runs on and one line per path and configuration. With --json, the file
// is rewritten after every configuration: {"gpu", "driver", "runtime", ..., "finished",
// "results": [...], "errors": [{"path", "floats", "tasks", "error"}], "attention": [{"shape",
// "queries", "positions", "heads", "head_dim", "calls", "device_us", "samples", "error"}]}
// (an attention shape that failed has its "error" and no times); a failed path or
// configuration is recorded there and the others still run. Without a usable device it writes
// {"error": "..."} and exits 2. Exit status 0 when every path of every configuration and both
// attention shapes passed, 1 otherwise.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <functional>
#include <string>
#include <vector>

#include <replayrt/replayrt.h>

namespace {

__global__ void add_one(float *data, std::uint64_t count) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    data[i] += 1.0F;
  }
}

unsigned blocks_for(std::uint64_t count) {
  const std::uint64_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(std::min<std::uint64_t>(blocks, 4096));
}

void launch_add(float *data, std::uint64_t count, cudaStream_t stream) {
  add_one<<<blocks_for(count), 256, 0, stream>>>(data, count);
}

// The native launcher replayrt calls per task.
int add_one_launcher(const rrt_kernel_args_t *args, void *stream, void *) {
  launch_add(static_cast<float *>(args->tensors[0]), args->tensor_bytes[0] / sizeof(float),
             static_cast<cudaStream_t>(stream));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// The most recent failure's text, for the JSON errors.
std::string g_error;

bool check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess) {
    g_error =
        std::string(what) + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")";
    std::fprintf(stderr, "%s\n", g_error.c_str());
    return false;
  }
  return true;
}

bool check_rrt(rrt_status_t status, const char *what) {
  if (status != RRT_OK) {
    rrt_error_detail_t detail{};
    (void)rrt_last_error(&detail);
    g_error = std::string(what) + ": " + rrt_status_name(status) + " (" + detail.message + ")";
    std::fprintf(stderr, "%s\n", g_error.c_str());
    return false;
  }
  return true;
}

std::string json_string(const std::string &text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) {
    return "null";
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

std::string json_numbers(const std::vector<double> &values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += (i == 0 ? "" : ", ") + json_number(values[i]);
  }
  return out + "]";
}

double median(std::vector<double> values) {
  if (values.empty()) {
    return NAN;
  }
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 == 1 ? values[half] : (values[half - 1] + values[half]) / 2.0;
}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Environment {
  std::string gpu;
  std::string compute_capability;
  int sms = 0;
  double memory_gib = 0.0;
  int driver = 0;
  int runtime = 0;
  std::string module_loading;
};

struct Row {
  std::string path;
  std::uint64_t floats;
  int tasks;
  int calls;
  std::vector<double> host;
  std::vector<double> sync;
  std::vector<double> device;
};

struct Failure {
  std::string path;
  std::uint64_t floats;
  int tasks;
  std::string error;
};

// One attention shape: `queries` query rows against `positions` cached rows.
struct AttentionRow {
  std::string shape;
  std::uint64_t queries = 0;
  std::uint64_t positions = 0;
  int calls = 0;
  std::vector<double> device;
  std::string error;
};

struct Report {
  const char *json_path = nullptr;
  Environment env;
  int repetitions = 7;
  std::vector<Row> rows;
  std::vector<Failure> failures;
  std::vector<AttentionRow> attention;
};

constexpr std::uint64_t kAttentionPositions = 4096;
constexpr std::uint64_t kAttentionHeads = 32;
constexpr std::uint64_t kAttentionHeadDim = 128;

// Rewrites the whole JSON file (through a temporary file and a rename, so that a reader never
// sees half of it).
void write_json(const Report &report, bool finished) {
  if (report.json_path == nullptr) {
    return;
  }
  const Environment &env = report.env;
  std::string text = "{\n";
  text += "  \"gpu\": " + json_string(env.gpu) + ",\n";
  text += "  \"compute_capability\": " + json_string(env.compute_capability) + ",\n";
  text += "  \"sms\": " + std::to_string(env.sms) + ",\n";
  text += "  \"memory_gib\": " + json_number(env.memory_gib) + ",\n";
  text += "  \"driver\": " + std::to_string(env.driver) + ",\n";
  text += "  \"runtime\": " + std::to_string(env.runtime) + ",\n";
  text += "  \"module_loading\": " + json_string(env.module_loading) + ",\n";
  text += "  \"repetitions\": " + std::to_string(report.repetitions) + ",\n";
  text += std::string("  \"finished\": ") + (finished ? "true" : "false") + ",\n";
  text += "  \"results\": [";
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const Row &r = report.rows[i];
    text += i == 0 ? "\n" : ",\n";
    text += "    {\"path\": " + json_string(r.path) + ", \"floats\": " + std::to_string(r.floats) +
            ", \"tasks\": " + std::to_string(r.tasks) + ", \"calls\": " + std::to_string(r.calls) +
            ", \"host_us\": " + json_number(median(r.host)) +
            ", \"sync_us\": " + json_number(median(r.sync)) +
            ", \"device_us\": " + json_number(median(r.device)) +
            ", \"samples\": {\"host_us\": " + json_numbers(r.host) +
            ", \"sync_us\": " + json_numbers(r.sync) +
            ", \"device_us\": " + json_numbers(r.device) + "}}";
  }
  text += report.rows.empty() ? "],\n" : "\n  ],\n";
  text += "  \"errors\": [";
  for (std::size_t i = 0; i < report.failures.size(); ++i) {
    const Failure &f = report.failures[i];
    text += i == 0 ? "\n" : ",\n";
    text += "    {\"path\": " + json_string(f.path) + ", \"floats\": " + std::to_string(f.floats) +
            ", \"tasks\": " + std::to_string(f.tasks) + ", \"error\": " + json_string(f.error) +
            "}";
  }
  text += report.failures.empty() ? "],\n" : "\n  ],\n";
  text += "  \"attention\": [";
  for (std::size_t i = 0; i < report.attention.size(); ++i) {
    const AttentionRow &a = report.attention[i];
    text += i == 0 ? "\n" : ",\n";
    text += "    {\"shape\": " + json_string(a.shape) +
            ", \"queries\": " + std::to_string(a.queries) +
            ", \"positions\": " + std::to_string(a.positions) +
            ", \"heads\": " + std::to_string(kAttentionHeads) +
            ", \"head_dim\": " + std::to_string(kAttentionHeadDim) +
            ", \"calls\": " + std::to_string(a.calls);
    if (a.error.empty()) {
      text += ", \"device_us\": " + json_number(median(a.device)) +
              ", \"samples\": {\"device_us\": " + json_numbers(a.device) + "}}";
    } else {
      text += ", \"error\": " + json_string(a.error) + "}";
    }
  }
  text += report.attention.empty() ? "]\n}\n" : "\n  ]\n}\n";
  const std::string temporary = std::string(report.json_path) + ".tmp";
  FILE *out = std::fopen(temporary.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", temporary.c_str());
    return;
  }
  std::fputs(text.c_str(), out);
  std::fclose(out);
  if (std::rename(temporary.c_str(), report.json_path) != 0) {
    std::fprintf(stderr, "cannot rename %s\n", temporary.c_str());
  }
}

// {"error": why}: the run could not start.
void write_startup_error(const char *json_path, const std::string &why) {
  std::fprintf(stderr, "gpu_replay_bench: %s\n", why.c_str());
  if (json_path == nullptr) {
    return;
  }
  FILE *out = std::fopen(json_path, "w");
  if (out != nullptr) {
    std::fprintf(out, "{\"error\": %s}\n", json_string(why).c_str());
    std::fclose(out);
  }
}

// One measured path of a configuration. `call` enqueues one call; `sync` waits for the path's
// stream; `events` (null for a stream whose handle stays unshared) is where device time is
// recorded.
struct Path {
  std::string name;
  float *buffer = nullptr;
  std::function<bool()> call;
  std::function<bool()> sync;
  cudaStream_t events = nullptr;
  bool has_device_time = true;
  std::uint64_t calls_made = 0;
  Row row;
  std::string error;
};

// One repetition of the three metrics; false (with g_error set) on a failure.
bool measure_once(Path *path, int calls, cudaEvent_t start, cudaEvent_t stop) {
  double begin = now_us();
  for (int i = 0; i < calls; ++i) {
    if (!path->call()) {
      return false;
    }
  }
  path->row.host.push_back((now_us() - begin) / calls);
  path->calls_made += static_cast<std::uint64_t>(calls);
  if (!path->sync()) {
    return false;
  }
  begin = now_us();
  for (int i = 0; i < calls; ++i) {
    if (!path->call() || !path->sync()) {
      return false;
    }
  }
  path->row.sync.push_back((now_us() - begin) / calls);
  path->calls_made += static_cast<std::uint64_t>(calls);
  if (!path->has_device_time) {
    return true;
  }
  if (!check_cuda(cudaEventRecord(start, path->events), "cudaEventRecord")) {
    return false;
  }
  for (int i = 0; i < calls; ++i) {
    if (!path->call()) {
      return false;
    }
  }
  path->calls_made += static_cast<std::uint64_t>(calls);
  if (!check_cuda(cudaEventRecord(stop, path->events), "cudaEventRecord") ||
      !check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize")) {
    return false;
  }
  float ms = 0.0F;
  if (!check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime")) {
    return false;
  }
  path->row.device.push_back(static_cast<double>(ms) * 1000.0 / calls);
  return true;
}

// True when every element equals `expected`; g_error names the first that does not.
bool check_value(const float *device, std::uint64_t floats, double expected) {
  std::vector<float> host(floats);
  if (!check_cuda(cudaMemcpy(host.data(), device, floats * sizeof(float), cudaMemcpyDeviceToHost),
                  "result read")) {
    return false;
  }
  for (std::uint64_t i = 0; i < floats; ++i) {
    if (std::isnan(host[i]) || static_cast<double>(host[i]) != expected) {
      char text[160];
      std::snprintf(text, sizeof text, "wrong result: element %llu is %g, expected %.0f",
                    static_cast<unsigned long long>(i), static_cast<double>(host[i]), expected);
      g_error = text;
      std::fprintf(stderr, "%s\n", text);
      return false;
    }
  }
  return true;
}

// What one configuration holds; the destructor releases whatever was set up.
struct Setup {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  float *eager_buffer = nullptr;
  float *raw_buffer = nullptr;
  cudaGraph_t raw_graph = nullptr;
  cudaGraphExec_t raw_exec = nullptr;
  rrt_context_t ctx = nullptr;
  rrt_stream_t wrapped = nullptr;
  rrt_stream_t owned = nullptr;
  void *launch_buffer = nullptr;
  void *replay_buffer = nullptr;
  void *owned_buffer = nullptr;
  rrt_graph_t replay_graph = nullptr;
  rrt_graph_t owned_graph = nullptr;

  ~Setup() {
    if (stream != nullptr) {
      (void)cudaStreamSynchronize(stream);
    }
    if (owned_graph != nullptr) {
      (void)rrt_graph_destroy(owned_graph);
    }
    if (replay_graph != nullptr) {
      (void)rrt_graph_destroy(replay_graph);
    }
    if (owned != nullptr) {
      (void)rrt_stream_destroy(owned);
    }
    if (wrapped != nullptr) {
      (void)rrt_stream_destroy(wrapped);
    }
    for (void *buffer : {launch_buffer, replay_buffer, owned_buffer}) {
      if (buffer != nullptr) {
        (void)rrt_device_free(ctx, buffer);
      }
    }
    if (ctx != nullptr) {
      (void)rrt_context_destroy(ctx);
    }
    if (raw_exec != nullptr) {
      (void)cudaGraphExecDestroy(raw_exec);
    }
    if (raw_graph != nullptr) {
      (void)cudaGraphDestroy(raw_graph);
    }
    (void)cudaFree(eager_buffer);
    (void)cudaFree(raw_buffer);
    if (start != nullptr) {
      (void)cudaEventDestroy(start);
    }
    if (stop != nullptr) {
      (void)cudaEventDestroy(stop);
    }
    if (stream != nullptr) {
      (void)cudaStreamDestroy(stream);
    }
    // A failed configuration may leave a non-sticky error behind; the next one starts clean.
    (void)cudaGetLastError();
  }
};

// Calls per metric and repetition: enough for microsecond resolution on the launch-bound
// size, few on the bandwidth-bound one.
int calls_for(std::uint64_t floats, int tasks) {
  if (floats > (std::uint64_t{1} << 20)) {
    return 4;
  }
  return tasks >= 256 ? 50 : 200;
}

void run_config(std::uint64_t floats, int tasks, Report *report) {
  const int calls = calls_for(floats, tasks);
  const std::uint64_t bytes = floats * sizeof(float);
  const auto fail = [&](const std::string &path) {
    report->failures.push_back(Failure{path, floats, tasks, g_error});
  };
  Setup s;
  if (!check_cuda(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking),
                  "cudaStreamCreate") ||
      !check_cuda(cudaEventCreate(&s.start), "cudaEventCreate") ||
      !check_cuda(cudaEventCreate(&s.stop), "cudaEventCreate")) {
    fail("setup");
    return;
  }
  const auto native_sync = [&] {
    return check_cuda(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
  };
  std::vector<Path> paths;

  // eager and raw_graph.
  Path eager;
  eager.name = "eager";
  eager.sync = native_sync;
  eager.events = s.stream;
  if (check_cuda(cudaMalloc(&s.eager_buffer, bytes), "cudaMalloc")) {
    eager.buffer = s.eager_buffer;
    eager.call = [&s, floats, tasks] {
      for (int t = 0; t < tasks; ++t) {
        launch_add(s.eager_buffer, floats, s.stream);
      }
      return check_cuda(cudaGetLastError(), "kernel launch");
    };
  } else {
    eager.error = g_error;
  }
  paths.push_back(std::move(eager));

  Path raw;
  raw.name = "raw_graph";
  raw.sync = native_sync;
  raw.events = s.stream;
  if (check_cuda(cudaMalloc(&s.raw_buffer, bytes), "cudaMalloc") &&
      check_cuda(cudaStreamBeginCapture(s.stream, cudaStreamCaptureModeThreadLocal),
                 "cudaStreamBeginCapture")) {
    for (int t = 0; t < tasks; ++t) {
      launch_add(s.raw_buffer, floats, s.stream);
    }
    const bool captured =
        check_cuda(cudaStreamEndCapture(s.stream, &s.raw_graph), "cudaStreamEndCapture");
    if (captured &&
        check_cuda(cudaGraphInstantiateWithFlags(&s.raw_exec, s.raw_graph, 0),
                   "cudaGraphInstantiate") &&
        check_cuda(cudaGraphUpload(s.raw_exec, s.stream), "cudaGraphUpload")) {
      raw.buffer = s.raw_buffer;
      raw.call = [&s] { return check_cuda(cudaGraphLaunch(s.raw_exec, s.stream), "graph launch"); };
    }
  }
  if (!raw.call) {
    raw.error = g_error;
  }
  paths.push_back(std::move(raw));

  // The replayrt paths: a kernel-mode context whose callable chains `tasks` add_one tasks.
  rrt_tensor_desc_t param{};
  param.dtype = RRT_DTYPE_F32;
  param.ndim = 1;
  param.shape[0] = floats;
  param.direction = RRT_DIR_INOUT;
  const rrt_operand_t operand{RRT_OPERAND_PARAM, 0};
  std::int32_t kernel_id = -1;
  std::int32_t callable = -1;
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_CUDA;
  bool rrt_ready = check_rrt(rrt_context_create(&options, &s.ctx), "rrt_context_create") &&
                   check_rrt(rrt_kernel_register_native(s.ctx, "add_one", &add_one_launcher,
                                                        nullptr, &kernel_id),
                             "rrt_kernel_register_native");
  std::vector<rrt_task_desc_t> task_descs(static_cast<std::size_t>(tasks),
                                          rrt_task_desc_t{kernel_id, 1, &operand});
  rrt_callable_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.bind = RRT_BIND_DEVICE_BUILD;
  desc.num_params = 1;
  desc.params = &param;
  desc.num_tasks = static_cast<std::uint32_t>(tasks);
  desc.tasks = task_descs.data();
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  rrt_ready =
      rrt_ready &&
      check_rrt(rrt_capacity_plan_fit(&desc, &config.capacity), "rrt_capacity_plan_fit") &&
      check_rrt(rrt_kernel_init(s.ctx, &config), "rrt_kernel_init") &&
      check_rrt(rrt_callable_prepare(s.ctx, &desc, &callable), "rrt_callable_prepare") &&
      check_rrt(rrt_stream_wrap_native(s.ctx, s.stream, &s.wrapped), "rrt_stream_wrap_native") &&
      check_rrt(rrt_stream_create(s.ctx, &s.owned), "rrt_stream_create") &&
      check_rrt(rrt_device_alloc(s.ctx, bytes, &s.launch_buffer), "rrt_device_alloc") &&
      check_rrt(rrt_device_alloc(s.ctx, bytes, &s.replay_buffer), "rrt_device_alloc") &&
      check_rrt(rrt_device_alloc(s.ctx, bytes, &s.owned_buffer), "rrt_device_alloc");
  const std::string rrt_setup_error = rrt_ready ? "" : g_error;
  // Each path's run args name its own buffer; they outlive the paths' calls.
  rrt_tensor_arg_t tensors[3] = {{s.launch_buffer, bytes, RRT_SPACE_DEVICE},
                                 {s.replay_buffer, bytes, RRT_SPACE_DEVICE},
                                 {s.owned_buffer, bytes, RRT_SPACE_DEVICE}};
  rrt_run_args_t args[3]{};
  for (int i = 0; i < 3; ++i) {
    args[i].struct_size = sizeof args[i];
    args[i].num_tensors = 1;
    args[i].tensors = &tensors[i];
  }

  const auto wrapped_sync = [&s] {
    return check_rrt(rrt_stream_synchronize(s.wrapped), "rrt_stream_synchronize");
  };
  Path launch;
  launch.name = "rrt_launch";
  launch.sync = wrapped_sync;
  launch.events = s.stream;
  if (rrt_ready) {
    launch.buffer = static_cast<float *>(s.launch_buffer);
    launch.call = [&s, &args, callable] {
      return check_rrt(rrt_kernel_launch(s.ctx, callable, &args[0], s.wrapped),
                       "rrt_kernel_launch");
    };
  } else {
    launch.error = rrt_setup_error;
  }
  paths.push_back(std::move(launch));

  const auto capture = [&](rrt_stream_t stream, const rrt_run_args_t *run_args, rrt_graph_t *out) {
    if (!check_rrt(rrt_stream_begin_capture(stream), "rrt_stream_begin_capture")) {
      return false;
    }
    const bool launched =
        check_rrt(rrt_kernel_launch(s.ctx, callable, run_args, stream), "rrt_kernel_launch");
    const std::string launch_error = g_error;
    const bool ended = check_rrt(rrt_stream_end_capture(stream, out), "rrt_stream_end_capture");
    if (!launched) {
      g_error = launch_error;
    }
    return launched && ended;
  };

  Path replay;
  replay.name = "rrt_replay";
  replay.sync = wrapped_sync;
  replay.events = s.stream;
  if (rrt_ready && capture(s.wrapped, &args[1], &s.replay_graph)) {
    replay.buffer = static_cast<float *>(s.replay_buffer);
    replay.call = [&s] {
      return check_rrt(rrt_graph_replay(s.replay_graph, s.wrapped), "rrt_graph_replay");
    };
  } else {
    replay.error = rrt_ready ? g_error : rrt_setup_error;
  }
  paths.push_back(std::move(replay));

  Path owned;
  owned.name = "rrt_replay_owned";
  owned.sync = [&s] {
    return check_rrt(rrt_stream_synchronize(s.owned), "rrt_stream_synchronize");
  };
  owned.has_device_time = false;
  if (rrt_ready && capture(s.owned, &args[2], &s.owned_graph)) {
    owned.buffer = static_cast<float *>(s.owned_buffer);
    owned.call = [&s] {
      return check_rrt(rrt_graph_replay(s.owned_graph, s.owned), "rrt_graph_replay");
    };
  } else {
    owned.error = rrt_ready ? g_error : rrt_setup_error;
  }
  paths.push_back(std::move(owned));

  // Zeroed buffers, then one warm-up call per path (counted in the expected value).
  for (Path &path : paths) {
    path.row = Row{path.name, floats, tasks, calls, {}, {}, {}};
    if (!path.error.empty()) {
      continue;
    }
    if (!check_cuda(cudaMemsetAsync(path.buffer, 0, bytes, s.stream), "cudaMemsetAsync") ||
        !native_sync() || !path.call() || !path.sync()) {
      path.error = g_error;
      continue;
    }
    path.calls_made = 1;
  }
  for (int rep = 0; rep < report->repetitions; ++rep) {
    for (std::size_t k = 0; k < paths.size(); ++k) {
      Path &path = paths[(k + static_cast<std::size_t>(rep)) % paths.size()];
      if (path.error.empty() && !measure_once(&path, calls, s.start, s.stop)) {
        path.error = g_error;
      }
    }
  }
  for (Path &path : paths) {
    if (path.error.empty() &&
        !check_value(path.buffer, floats, static_cast<double>(path.calls_made) * tasks)) {
      path.error = g_error;
    }
    if (!path.error.empty()) {
      std::printf("%9llu floats %3d tasks %-16s FAILED: %s\n",
                  static_cast<unsigned long long>(floats), tasks, path.name.c_str(),
                  path.error.c_str());
      report->failures.push_back(Failure{path.name, floats, tasks, path.error});
      continue;
    }
    std::printf("%9llu floats %3d tasks %-16s host %9.2f us  call+sync %9.2f us  device %s us\n",
                static_cast<unsigned long long>(floats), tasks, path.name.c_str(),
                median(path.row.host), median(path.row.sync),
                path.has_device_time ? json_number(median(path.row.device)).c_str() : "n/a");
    report->rows.push_back(path.row);
  }
  std::fflush(stdout);
}

// What one attention shape holds; the destructor releases whatever was set up.
struct AttentionSetup {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  rrt_context_t ctx = nullptr;
  rrt_stream_t wrapped = nullptr;
  void *buffers[5] = {};

  ~AttentionSetup() {
    if (stream != nullptr) {
      (void)cudaStreamSynchronize(stream);
    }
    if (wrapped != nullptr) {
      (void)rrt_stream_destroy(wrapped);
    }
    for (void *buffer : buffers) {
      if (buffer != nullptr) {
        (void)rrt_device_free(ctx, buffer);
      }
    }
    if (ctx != nullptr) {
      (void)rrt_context_destroy(ctx);
    }
    for (cudaEvent_t event : {start, stop}) {
      if (event != nullptr) {
        (void)cudaEventDestroy(event);
      }
    }
    if (stream != nullptr) {
      (void)cudaStreamDestroy(stream);
    }
    (void)cudaGetLastError();
  }
};

// Deterministic values in [-1, 1).
std::vector<float> pseudo_random(std::size_t count, std::uint32_t seed) {
  std::vector<float> values(count);
  std::uint32_t state = seed;
  for (float &value : values) {
    state = state * 1664525U + 1013904223U;
    value = static_cast<float>(state >> 8) / static_cast<float>(1U << 23) - 1.0F;
  }
  return values;
}

// True when query row `t` of head `h` of `out` matches a float64 evaluation of the attention
// built-in's definition within 1e-3 relative error; g_error says where it does not.
bool check_attention_row(const std::vector<float> &q, const std::vector<float> &k,
                         const std::vector<float> &v, const std::vector<float> &out,
                         std::uint64_t first_position, std::uint64_t t, std::uint64_t h) {
  const std::uint64_t width = kAttentionHeads * kAttentionHeadDim;
  const std::uint64_t p = first_position + t;
  const float *query = &q[t * width + h * kAttentionHeadDim];
  std::vector<double> scores(p + 1);
  double top = -INFINITY;
  for (std::uint64_t j = 0; j <= p; ++j) {
    const float *key = &k[j * width + h * kAttentionHeadDim];
    double dot = 0.0;
    for (std::uint64_t d = 0; d < kAttentionHeadDim; ++d) {
      dot += static_cast<double>(query[d]) * key[d];
    }
    scores[j] = dot / std::sqrt(static_cast<double>(kAttentionHeadDim));
    top = std::max(top, scores[j]);
  }
  double total = 0.0;
  for (double &score : scores) {
    score = std::exp(score - top);
    total += score;
  }
  for (std::uint64_t d = 0; d < kAttentionHeadDim; ++d) {
    double expected = 0.0;
    for (std::uint64_t j = 0; j <= p; ++j) {
      expected += scores[j] / total * v[j * width + h * kAttentionHeadDim + d];
    }
    const double got = out[t * width + h * kAttentionHeadDim + d];
    if (!(std::fabs(got - expected) <= 1e-3 * std::max(1.0, std::fabs(expected)))) {
      char text[200];
      std::snprintf(text, sizeof text,
                    "wrong result: query %llu head %llu element %llu is %g, expected %g",
                    static_cast<unsigned long long>(t), static_cast<unsigned long long>(h),
                    static_cast<unsigned long long>(d), got, expected);
      g_error = text;
      std::fprintf(stderr, "%s\n", text);
      return false;
    }
  }
  return true;
}

// Measures the attention built-in on `queries` query rows ending at the last cached position.
void run_attention(const char *shape, std::uint64_t queries, Report *report) {
  const std::uint64_t width = kAttentionHeads * kAttentionHeadDim;
  const std::uint64_t positions = kAttentionPositions;
  const std::uint64_t first_position = positions - queries;
  AttentionRow row{shape, queries, positions, queries == 1 ? 50 : 5, {}, {}};
  const auto finish = [&] {
    if (row.error.empty()) {
      std::printf("attention %-8s %5llu queries x %llu positions: device %9.2f us per launch\n",
                  shape, static_cast<unsigned long long>(queries),
                  static_cast<unsigned long long>(positions), median(row.device));
    } else {
      std::printf("attention %-8s FAILED: %s\n", shape, row.error.c_str());
      row.device.clear();
    }
    std::fflush(stdout);
    report->attention.push_back(row);
  };

  // q[queries, width], k and v [positions, width], pos[1] (int32), out[queries, width].
  const std::uint64_t rows[5] = {queries, positions, positions, 1, queries};
  const std::uint64_t columns[5] = {width, width, width, 1, width};
  rrt_tensor_desc_t params[5]{};
  for (int i = 0; i < 5; ++i) {
    params[i].dtype = i == 3 ? RRT_DTYPE_I32 : RRT_DTYPE_F32;
    params[i].ndim = 2;
    params[i].shape[0] = rows[i];
    params[i].shape[1] = columns[i];
    params[i].direction = i == 4 ? RRT_DIR_OUT : RRT_DIR_IN;
    params[i].space = RRT_PARAM_SPACE_DEVICE;
  }
  AttentionSetup s;
  std::int32_t attention = -1;
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_CUDA;
  if (!check_cuda(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking),
                  "cudaStreamCreate") ||
      !check_cuda(cudaEventCreate(&s.start), "cudaEventCreate") ||
      !check_cuda(cudaEventCreate(&s.stop), "cudaEventCreate") ||
      !check_rrt(rrt_context_create(&options, &s.ctx), "rrt_context_create") ||
      !check_rrt(rrt_kernel_lookup(s.ctx, "attention", &attention), "rrt_kernel_lookup")) {
    row.error = g_error;
    finish();
    return;
  }
  const auto immediate = [](std::uint64_t value) {
    return rrt_operand_t{RRT_OPERAND_IMMEDIATE, static_cast<std::uint32_t>(value)};
  };
  const rrt_operand_t operands[10] = {{RRT_OPERAND_PARAM, 0},       {RRT_OPERAND_PARAM, 1},
                                      {RRT_OPERAND_PARAM, 2},       {RRT_OPERAND_PARAM, 3},
                                      {RRT_OPERAND_PARAM, 4},       immediate(queries),
                                      immediate(kAttentionHeads),   immediate(kAttentionHeads),
                                      immediate(kAttentionHeadDim), immediate(positions)};
  const rrt_task_desc_t task{attention, 10, operands};
  rrt_callable_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.bind = RRT_BIND_DEVICE_BUILD;
  desc.num_params = 5;
  desc.params = params;
  desc.num_tasks = 1;
  desc.tasks = &task;
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  std::int32_t callable = -1;
  bool ready =
      check_rrt(rrt_capacity_plan_fit(&desc, &config.capacity), "rrt_capacity_plan_fit") &&
      check_rrt(rrt_kernel_init(s.ctx, &config), "rrt_kernel_init") &&
      check_rrt(rrt_callable_prepare(s.ctx, &desc, &callable), "rrt_callable_prepare") &&
      check_rrt(rrt_stream_wrap_native(s.ctx, s.stream, &s.wrapped), "rrt_stream_wrap_native");
  rrt_tensor_arg_t tensors[5]{};
  for (int i = 0; ready && i < 5; ++i) {
    const std::uint64_t bytes = rows[i] * columns[i] * 4;
    ready = check_rrt(rrt_device_alloc(s.ctx, bytes, &s.buffers[i]), "rrt_device_alloc");
    tensors[i] = {s.buffers[i], bytes, RRT_SPACE_DEVICE};
  }
  const std::vector<float> q = pseudo_random(queries * width, 1);
  const std::vector<float> k = pseudo_random(positions * width, 2);
  const std::vector<float> v = pseudo_random(positions * width, 3);
  const auto position = static_cast<std::int32_t>(first_position);
  ready = ready &&
          check_rrt(rrt_memcpy_h2d(s.ctx, s.buffers[0], q.data(), tensors[0].bytes, nullptr),
                    "rrt_memcpy_h2d") &&
          check_rrt(rrt_memcpy_h2d(s.ctx, s.buffers[1], k.data(), tensors[1].bytes, nullptr),
                    "rrt_memcpy_h2d") &&
          check_rrt(rrt_memcpy_h2d(s.ctx, s.buffers[2], v.data(), tensors[2].bytes, nullptr),
                    "rrt_memcpy_h2d") &&
          check_rrt(rrt_memcpy_h2d(s.ctx, s.buffers[3], &position, 4, nullptr), "rrt_memcpy_h2d");
  rrt_run_args_t args{};
  args.struct_size = sizeof args;
  args.num_tensors = 5;
  args.tensors = tensors;
  const auto launch = [&] {
    return check_rrt(rrt_kernel_launch(s.ctx, callable, &args, s.wrapped), "rrt_kernel_launch");
  };
  // The warm-up launch, whose output is checked.
  std::vector<float> out(queries * width);
  ready = ready && launch() &&
          check_rrt(rrt_stream_synchronize(s.wrapped), "rrt_stream_synchronize") &&
          check_rrt(rrt_memcpy_d2h(s.ctx, out.data(), s.buffers[4], tensors[4].bytes, nullptr),
                    "rrt_memcpy_d2h");
  for (const std::uint64_t t : {std::uint64_t{0}, queries - 1}) {
    for (const std::uint64_t h : {std::uint64_t{0}, kAttentionHeads - 1}) {
      ready = ready && check_attention_row(q, k, v, out, first_position, t, h);
    }
  }
  for (int rep = 0; ready && rep < report->repetitions; ++rep) {
    ready = check_cuda(cudaEventRecord(s.start, s.stream), "cudaEventRecord");
    for (int i = 0; ready && i < row.calls; ++i) {
      ready = launch();
    }
    float ms = 0.0F;
    ready = ready && check_cuda(cudaEventRecord(s.stop, s.stream), "cudaEventRecord") &&
            check_cuda(cudaEventSynchronize(s.stop), "cudaEventSynchronize") &&
            check_cuda(cudaEventElapsedTime(&ms, s.start, s.stop), "cudaEventElapsedTime");
    if (ready) {
      row.device.push_back(static_cast<double>(ms) * 1000.0 / row.calls);
    }
  }
  if (!ready) {
    row.error = g_error;
  }
  finish();
}

bool parse_args(int argc, char **argv, Report *report) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      report->json_path = argv[++i];
    } else if (std::strcmp(argv[i], "--repetitions") == 0 && i + 1 < argc) {
      report->repetitions = std::atoi(argv[++i]);
    } else {
      return false;
    }
  }
  // At most 25: the expected sums stay exact in float32.
  return report->repetitions >= 5 && report->repetitions <= 25;
}

}  // namespace

int main(int argc, char **argv) {
  Report report;
  if (!parse_args(argc, argv, &report)) {
    std::fprintf(stderr, "usage: gpu_replay_bench [--json FILE] [--repetitions R (5..25)]\n");
    return argc > 1 && std::strcmp(argv[1], "--help") == 0 ? 0 : 2;
  }
  int devices = 0;
  const cudaError_t count_error = cudaGetDeviceCount(&devices);
  if (count_error != cudaSuccess || devices == 0) {
    write_startup_error(
        report.json_path,
        std::string("no usable CUDA device: cudaGetDeviceCount: ") +
            (count_error != cudaSuccess ? cudaGetErrorName(count_error) : "no devices") +
            (count_error != cudaSuccess ? std::string(" (") + cudaGetErrorString(count_error) + ")"
                                        : std::string()));
    return 2;
  }
  cudaDeviceProp prop{};
  Environment &env = report.env;
  if (!check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties")) {
    write_startup_error(report.json_path, "no usable CUDA device: " + g_error);
    return 2;
  }
  env.gpu = prop.name;
  env.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  env.sms = prop.multiProcessorCount;
  env.memory_gib = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
  (void)cudaDriverGetVersion(&env.driver);
  (void)cudaRuntimeGetVersion(&env.runtime);
  const char *loading = std::getenv("CUDA_MODULE_LOADING");
  env.module_loading = loading != nullptr ? loading : "default";
  std::printf("device 0 of %d: %s, compute capability %s, %d SMs, %.1f GiB\n", devices,
              env.gpu.c_str(), env.compute_capability.c_str(), env.sms, env.memory_gib);
  std::printf("CUDA driver %d.%d, runtime %d.%d, CUDA_MODULE_LOADING %s, %d repetitions\n",
              env.driver / 1000, env.driver % 1000 / 10, env.runtime / 1000,
              env.runtime % 1000 / 10, env.module_loading.c_str(), report.repetitions);
  // The launcher contract: the kernel's module is loaded before any capture launches it
  // (lazy loading would otherwise invalidate the first capture).
  cudaFuncAttributes attributes{};
  if (!check_cuda(cudaFuncGetAttributes(&attributes, &add_one), "cudaFuncGetAttributes")) {
    write_startup_error(report.json_path, "the benchmark kernel does not load: " + g_error);
    return 2;
  }
  write_json(report, false);
  for (const std::uint64_t floats : {std::uint64_t{1} << 10, std::uint64_t{16} << 20}) {
    for (const int tasks : {1, 16, 256}) {
      run_config(floats, tasks, &report);
      write_json(report, false);
    }
  }
  run_attention("decode", 1, &report);
  write_json(report, false);
  run_attention("prefill", kAttentionPositions, &report);
  write_json(report, true);
  if (report.json_path == nullptr) {
    std::printf("%zu results, %zu errors\n", report.rows.size(), report.failures.size());
  }
  const bool attention_failed =
      std::any_of(report.attention.begin(), report.attention.end(),
                  [](const AttentionRow &row) { return !row.error.empty(); });
  return report.failures.empty() && !attention_failed ? 0 : 1;
}
