// The GPU benchmark: chains of N in-place "add one" tasks on N in {1, 16, 256}, over 1 Ki
// floats (launch-bound) and 16 Mi floats (64 MiB, bandwidth-bound), on four paths over the
// same CUDA kernel:
//   eager        N kernel launches per call
//   raw_graph    cudaGraphLaunch of a capture of those N launches (the limit)
//   rrt_launch   rrt_kernel_launch of a kernel-mode callable of N tasks (the task launcher)
//   rrt_replay   rrt_graph_replay of a capture of that launch
// Per path: host time per call (issue `calls` calls, divide), call plus synchronize, and device
// time per call from events around `calls` back-to-back calls; each the median of 5
// repetitions. Every path's result is checked (each call adds N to every element; a wrong
// count or NaN fails the run). Usage: gpu_replay_bench [--json FILE]. Exit status 0, or 1 on
// a failed check or a CUDA/replayrt error, 2 without a device.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
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

bool check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(error));
    return false;
  }
  return true;
}

bool check_rrt(rrt_status_t status, const char *what) {
  if (status != RRT_OK) {
    rrt_error_detail_t detail{};
    (void)rrt_last_error(&detail);
    std::fprintf(stderr, "%s: %s (%s)\n", what, rrt_status_name(status), detail.message);
    return false;
  }
  return true;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Result {
  std::string path;
  std::uint64_t floats;
  int tasks;
  double host_us;
  double sync_us;
  double device_us;
};

// Measures `call` (one call of the path, enqueued on `stream`).
bool measure(const std::function<bool()> &call, cudaStream_t stream, int calls, Result *out) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  if (!check_cuda(cudaEventCreate(&start), "cudaEventCreate") ||
      !check_cuda(cudaEventCreate(&stop), "cudaEventCreate")) {
    return false;
  }
  std::vector<double> host;
  std::vector<double> sync;
  std::vector<double> device;
  for (int rep = 0; rep < 5; ++rep) {
    double begin = now_us();
    for (int i = 0; i < calls; ++i) {
      if (!call()) {
        return false;
      }
    }
    host.push_back((now_us() - begin) / calls);
    if (!check_cuda(cudaStreamSynchronize(stream), "sync")) {
      return false;
    }
    begin = now_us();
    for (int i = 0; i < calls; ++i) {
      if (!call() || !check_cuda(cudaStreamSynchronize(stream), "sync")) {
        return false;
      }
    }
    sync.push_back((now_us() - begin) / calls);
    (void)cudaEventRecord(start, stream);
    for (int i = 0; i < calls; ++i) {
      if (!call()) {
        return false;
      }
    }
    (void)cudaEventRecord(stop, stream);
    if (!check_cuda(cudaEventSynchronize(stop), "event sync")) {
      return false;
    }
    float ms = 0.0F;
    (void)cudaEventElapsedTime(&ms, start, stop);
    device.push_back(static_cast<double>(ms) * 1000.0 / calls);
  }
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  out->host_us = median(host);
  out->sync_us = median(sync);
  out->device_us = median(device);
  return true;
}

// True when every element equals `expected`.
bool check_value(const float *device, std::uint64_t floats, double expected, const char *path) {
  std::vector<float> host(floats);
  if (!check_cuda(cudaMemcpy(host.data(), device, floats * 4, cudaMemcpyDeviceToHost), "read")) {
    return false;
  }
  for (std::uint64_t i = 0; i < floats; i += std::max<std::uint64_t>(1, floats / 4096)) {
    if (std::isnan(host[i]) || static_cast<double>(host[i]) != expected) {
      std::fprintf(stderr, "%s: element %llu is %g, expected %g\n", path,
                   static_cast<unsigned long long>(i), static_cast<double>(host[i]), expected);
      return false;
    }
  }
  return true;
}

std::uint64_t g_generation = std::uint64_t{9} << 40;

bool run_config(std::uint64_t floats, int tasks, std::vector<Result> *results) {
  const int calls = floats > (1 << 20) ? 4 : 200;
  // Each path runs 3 metrics x 5 repetitions x `calls` calls, each adding `tasks`.
  const double per_path = 3.0 * 5.0 * calls * tasks;
  const std::uint64_t bytes = floats * sizeof(float);
  cudaStream_t stream = nullptr;
  if (!check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream")) {
    return false;
  }

  // Paths 1 and 2 on a buffer of their own.
  float *x = nullptr;
  if (!check_cuda(cudaMalloc(&x, bytes), "cudaMalloc")) {
    return false;
  }
  const auto eager = [&] {
    for (int t = 0; t < tasks; ++t) {
      launch_add(x, floats, stream);
    }
    return true;
  };
  Result r{"eager", floats, tasks, 0, 0, 0};
  (void)cudaMemsetAsync(x, 0, bytes, stream);
  if (!measure(eager, stream, calls, &r) || !check_value(x, floats, per_path, "eager")) {
    return false;
  }
  results->push_back(r);

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (!check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture")) {
    return false;
  }
  (void)eager();
  if (!check_cuda(cudaStreamEndCapture(stream, &graph), "end capture") ||
      !check_cuda(cudaGraphInstantiateWithFlags(&exec, graph, 0), "instantiate") ||
      !check_cuda(cudaGraphUpload(exec, stream), "upload")) {
    return false;
  }
  r = Result{"raw_graph", floats, tasks, 0, 0, 0};
  (void)cudaMemsetAsync(x, 0, bytes, stream);
  const auto raw = [&] { return check_cuda(cudaGraphLaunch(exec, stream), "graph launch"); };
  if (!measure(raw, stream, calls, &r) || !check_value(x, floats, per_path, "raw_graph")) {
    return false;
  }
  results->push_back(r);
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
  (void)cudaFree(x);

  // Paths 3 and 4: a kernel-mode context whose callable chains `tasks` add_one tasks.
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_CUDA;
  rrt_context_t ctx = nullptr;
  if (!check_rrt(rrt_context_create(&options, &ctx), "rrt_context_create")) {
    return false;
  }
  std::int32_t kernel_id = -1;
  if (!check_rrt(rrt_kernel_register_native(ctx, "add_one", &add_one_launcher, nullptr, &kernel_id),
                 "register")) {
    return false;
  }
  rrt_tensor_desc_t param{};
  param.dtype = RRT_DTYPE_F32;
  param.ndim = 1;
  param.shape[0] = floats;
  param.direction = RRT_DIR_INOUT;
  const rrt_operand_t operand{RRT_OPERAND_PARAM, 0};
  std::vector<rrt_task_desc_t> task_descs(tasks, rrt_task_desc_t{kernel_id, 1, &operand});
  rrt_callable_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.bind = RRT_BIND_DEVICE_BUILD;
  desc.num_params = 1;
  desc.params = &param;
  desc.num_tasks = static_cast<std::uint32_t>(tasks);
  desc.tasks = task_descs.data();
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = ++g_generation;
  std::int32_t callable = -1;
  if (!check_rrt(rrt_capacity_plan_fit(&desc, &config.capacity), "plan") ||
      !check_rrt(rrt_kernel_init(ctx, &config), "kernel init") ||
      !check_rrt(rrt_callable_prepare(ctx, &desc, &callable), "prepare")) {
    return false;
  }
  void *y = nullptr;
  rrt_stream_t rrt_stream = nullptr;
  if (!check_rrt(rrt_device_alloc(ctx, bytes, &y), "alloc") ||
      !check_rrt(rrt_stream_wrap_native(ctx, stream, &rrt_stream), "wrap")) {
    return false;
  }
  const rrt_tensor_arg_t tensor{y, bytes, RRT_SPACE_DEVICE};
  rrt_run_args_t args{};
  args.struct_size = sizeof args;
  args.num_tensors = 1;
  args.tensors = &tensor;
  const auto launch = [&] {
    return check_rrt(rrt_kernel_launch(ctx, callable, &args, rrt_stream), "rrt_kernel_launch");
  };
  r = Result{"rrt_launch", floats, tasks, 0, 0, 0};
  (void)cudaMemsetAsync(y, 0, bytes, stream);
  if (!measure(launch, stream, calls, &r) ||
      !check_value(static_cast<float *>(y), floats, per_path, "rrt_launch")) {
    return false;
  }
  results->push_back(r);

  rrt_graph_t rrt_graph = nullptr;
  if (!check_rrt(rrt_stream_begin_capture(rrt_stream), "begin") || !launch() ||
      !check_rrt(rrt_stream_end_capture(rrt_stream, &rrt_graph), "end")) {
    return false;
  }
  r = Result{"rrt_replay", floats, tasks, 0, 0, 0};
  (void)cudaMemsetAsync(y, 0, bytes, stream);
  const auto replay = [&] { return check_rrt(rrt_graph_replay(rrt_graph, rrt_stream), "replay"); };
  if (!measure(replay, stream, calls, &r) ||
      !check_value(static_cast<float *>(y), floats, per_path, "rrt_replay")) {
    return false;
  }
  results->push_back(r);
  (void)rrt_graph_destroy(rrt_graph);
  (void)rrt_stream_destroy(rrt_stream);
  (void)rrt_device_free(ctx, y);
  (void)rrt_context_destroy(ctx);
  (void)cudaStreamDestroy(stream);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  const char *json_path = nullptr;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json_path = argv[i + 1];
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA device: %s\n", cudaGetErrorName(cudaGetLastError()));
    return 2;
  }
  cudaDeviceProp prop{};
  (void)cudaGetDeviceProperties(&prop, 0);
  int driver = 0;
  int runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  std::vector<Result> results;
  for (const std::uint64_t floats : {std::uint64_t{1} << 10, std::uint64_t{16} << 20}) {
    for (const int tasks : {1, 16, 256}) {
      if (!run_config(floats, tasks, &results)) {
        return 1;
      }
      const Result &last = results.back();
      std::printf("%8llu floats %3d tasks: rrt_replay host %.2f us, sync %.2f us, device %.2f us\n",
                  static_cast<unsigned long long>(floats), tasks, last.host_us, last.sync_us,
                  last.device_us);
    }
  }
  FILE *out = json_path != nullptr ? std::fopen(json_path, "w") : stdout;
  if (out == nullptr) {
    return 1;
  }
  std::fprintf(out,
               "{\n  \"gpu\": \"%s\",\n  \"driver\": %d,\n  \"runtime\": %d,\n  \"results\": [\n",
               prop.name, driver, runtime);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result &r = results[i];
    std::fprintf(out,
                 "    {\"path\": \"%s\", \"floats\": %llu, \"tasks\": %d, \"host_us\": %.4f, "
                 "\"sync_us\": %.4f, \"device_us\": %.4f}%s\n",
                 r.path.c_str(), static_cast<unsigned long long>(r.floats), r.tasks, r.host_us,
                 r.sync_us, r.device_us, i + 1 < results.size() ? "," : "");
  }
  std::fprintf(out, "  ]\n}\n");
  if (out != stdout) {
    std::fclose(out);
  }
  return 0;
}
