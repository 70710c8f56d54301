// The CUDA backend's host cost per call, measured without a GPU: the backend over FakeCuda with
// its work dropped (FakeCuda::discard_work), so each pair of benchmarks times replayrt's own
// host work against the bare CUDA call it ends in, on the same fake:
//   cuda_host/raw_graph_launch      cudaGraphLaunch of the executable graph (the limit)
//   cuda_host/stream_replay         CudaStream::replay of the graph that holds it
//   cuda_host/engine_replay         Engine::replay (rrt_graph_replay below the ABI guard)
//   cuda_host/raw_kernel_launch     cudaLaunchKernel of the built-in "scale" kernel (the limit)
//   cuda_host/engine_kernel_launch  Engine::kernel_launch of a 1-task kernel-mode callable of it
// The fake's calls cost a lock and a map lookup, a real cudaGraphLaunch about 2.5 us of host
// time: the differences are what replayrt adds to a real launch, not the ratios.
#include <memory>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "platform/cuda/builtin_params.h"
#include "platform/cuda/cuda_device.h"
#include "platform/cuda/cuda_stream.h"
#include "runtime/engine.h"
#include "support/callable_builder.h"
#include "support/fake_cuda.h"

namespace {

using replayrt::Engine;
using replayrt::Graph;
using replayrt::RunArgsView;
using replayrt::Status;
using replayrt::Stream;

// A kernel-mode engine over FakeCuda with one 1-task callable (y = x * 2) and a graph of one
// launch of it.
class Rig {
 public:
  Rig() {
    std::unique_ptr<replayrt::Device> device;
    ok_ = replayrt::cuda::CudaDevice::create(fake_.api(), 0, {}, &device).is_ok();
    cuda_ = device.get();
    ok_ = ok_ && Engine::create(std::move(device), 1, generations_, &engine_).is_ok();
    replayrt::CapacityPlan plan;
    plan.gm_sm_bytes = 1024;
    plan.runtime_pool_bytes = 4096;
    ok_ = ok_ && engine_->kernel_init(plan, 0, 0).is_ok();
    replayrt::testing::CallableBuilder b;
    b.param(replayrt::testing::f32({1024})).param(replayrt::testing::f32({1024}, RRT_DIR_OUT));
    b.task(replayrt::testing::kScale, {replayrt::testing::param(0), replayrt::testing::param(1),
                                       replayrt::testing::imm_f32(2.0F)});
    ok_ = ok_ && engine_->prepare_callable(b.spec(), &callable_).is_ok();
    x_ = cuda_->allocate(4096);
    y_ = cuda_->allocate(4096);
    tensors_ = {{x_, 4096, RRT_SPACE_DEVICE}, {y_, 4096, RRT_SPACE_DEVICE}};
    ok_ = ok_ && cuda_->create_stream(&stream_).is_ok();
    ok_ = ok_ && stream_->begin_capture().is_ok() &&
          engine_->kernel_launch(callable_, args(), *stream_).is_ok() &&
          stream_->end_capture(&graph_).is_ok();
    fake_.discard_work = true;
  }
  ~Rig() {
    fake_.discard_work = false;
    graph_.reset();
    stream_.reset();
    engine_.reset();
  }
  Rig(const Rig &) = delete;
  Rig &operator=(const Rig &) = delete;

  bool ok() const { return ok_; }
  RunArgsView args() const { return RunArgsView{tensors_, {}}; }

  replayrt::testing::FakeCuda fake_;
  replayrt::Device *cuda_ = nullptr;
  replayrt::GenerationRegistry generations_;
  std::unique_ptr<Engine> engine_;
  std::int32_t callable_ = -1;
  void *x_ = nullptr;
  void *y_ = nullptr;
  std::vector<replayrt::TensorArg> tensors_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Graph> graph_;

 private:
  bool ok_ = false;
};

// The executable graph behind a CudaGraph (the fake keeps one per instantiation).
cudaGraphExec_t exec_of(Rig &rig) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  const auto stream = static_cast<cudaStream_t>(rig.stream_->native_handle());
  rig.fake_.discard_work = false;
  (void)rig.fake_.api().stream_begin_capture(stream, cudaStreamCaptureModeThreadLocal);
  (void)rig.fake_.api().memset_async(rig.x_, 0, 4, stream);
  (void)rig.fake_.api().stream_end_capture(stream, &graph);
  (void)rig.fake_.api().graph_instantiate_with_flags(&exec, graph, 0);
  (void)rig.fake_.api().graph_destroy(graph);
  rig.fake_.discard_work = true;
  return exec;
}

void raw_graph_launch(benchmark::State &state) {
  Rig rig;
  const cudaGraphExec_t exec = exec_of(rig);
  const auto stream = static_cast<cudaStream_t>(rig.stream_->native_handle());
  for (auto _ : state) {
    benchmark::DoNotOptimize(rig.fake_.api().graph_launch(exec, stream));
  }
  (void)rig.fake_.api().graph_exec_destroy(exec);
}
BENCHMARK(raw_graph_launch)->Name("cuda_host/raw_graph_launch");

void stream_replay(benchmark::State &state) {
  Rig rig;
  if (!rig.ok()) {
    state.SkipWithError("rig setup failed");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(rig.stream_->replay(*rig.graph_));
  }
}
BENCHMARK(stream_replay)->Name("cuda_host/stream_replay");

void engine_replay(benchmark::State &state) {
  Rig rig;
  if (!rig.ok()) {
    state.SkipWithError("rig setup failed");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(rig.engine_->replay(*rig.graph_, *rig.stream_));
  }
}
BENCHMARK(engine_replay)->Name("cuda_host/engine_replay");

void raw_kernel_launch(benchmark::State &state) {
  Rig rig;
  const auto stream = static_cast<cudaStream_t>(rig.stream_->native_handle());
  const void *scale = nullptr;
  for (const replayrt::cuda::DeviceKernel &kernel : replayrt::cuda::device_kernels()) {
    if (std::string_view(kernel.name) == "scale") {
      scale = kernel.function;
    }
  }
  replayrt::cuda::BuiltinParams params;
  params.num_tensors = 2;
  params.num_scalars = 1;
  params.tensors[0] = rig.x_;
  params.tensors[1] = rig.y_;
  params.tensor_bytes[0] = params.tensor_bytes[1] = 4096;
  void *args[] = {&params};
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        rig.fake_.api().launch_kernel(scale, dim3(4), dim3(256), args, 0, stream));
  }
}
BENCHMARK(raw_kernel_launch)->Name("cuda_host/raw_kernel_launch");

void engine_kernel_launch(benchmark::State &state) {
  Rig rig;
  if (!rig.ok()) {
    state.SkipWithError("rig setup failed");
    return;
  }
  const RunArgsView args = rig.args();
  for (auto _ : state) {
    benchmark::DoNotOptimize(rig.engine_->kernel_launch(rig.callable_, args, *rig.stream_));
  }
}
BENCHMARK(engine_kernel_launch)->Name("cuda_host/engine_kernel_launch");

}  // namespace

BENCHMARK_MAIN();
