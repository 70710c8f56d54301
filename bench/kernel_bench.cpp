// The simulator's CPU kernels for a linear layer, called directly (no runtime around them):
// the `linear` built-in on a checkpoint-layout weight [N, K] against the `matmul` built-in on
// the same weight transposed at load to [K, N], the layout matmul needs. Both compute
// y[M, N] = x[M, K] times the weight; M = 1 is a decode step, M = 16 a short prefill.
//
//   kernels/linear_f32/<M>/<K>/<N>    linear, f32 weights [N, K]
//   kernels/linear_f16/<M>/<K>/<N>    linear, f16 weights [N, K] (widened exactly in the kernel)
//   kernels/linear_bf16/<M>/<K>/<N>   linear, bf16 weights [N, K]
//   kernels/matmul/<M>/<K>/<N>        matmul, f32 weights [K, N] (the comparison)
// Every benchmark reports the counter `flops` (2 M K N per call, as a rate).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "platform/sim/kernels/builtin_kernels.h"

namespace {

rrt_kernel_fn kernel(std::string_view name) {
  if (const rrt_kernel_fn fn = replayrt::sim::builtin_host_kernel(name); fn != nullptr) {
    return fn;
  }
  std::fprintf(stderr, "kernel_bench: no built-in %.*s\n", static_cast<int>(name.size()),
               name.data());
  std::abort();
}

// Calls `name` on x [M, K], a weight of `weight_bytes` and y [M, N] until the state ends.
void run_kernel(benchmark::State &state, std::string_view name, std::uint64_t wdtype,
                std::uint64_t weight_bytes) {
  const auto m = static_cast<std::uint64_t>(state.range(0));
  const auto k = static_cast<std::uint64_t>(state.range(1));
  const auto n = static_cast<std::uint64_t>(state.range(2));
  std::vector<float> x(m * k, 0.25F);
  // 0x3C00 is 1.0 in f16 and 0x3F80 1.0 in bf16; read as f32, either pair is a finite float.
  std::vector<std::uint16_t> weight(weight_bytes / 2, wdtype == RRT_DTYPE_BF16 ? 0x3F80 : 0x3C00);
  std::vector<float> y(m * n, 0.0F);
  std::vector<void *> tensors = {x.data(), weight.data(), y.data()};
  std::vector<std::uint64_t> bytes = {x.size() * 4, weight_bytes, y.size() * 4};
  std::vector<std::uint64_t> scalars = {m, k, n};
  if (name == "linear") {
    scalars.push_back(wdtype);
  }
  const rrt_kernel_args_t args{
      3, tensors.data(), bytes.data(), static_cast<std::uint32_t>(scalars.size()), scalars.data(),
      0, nullptr};
  const rrt_kernel_fn fn = kernel(name);
  for (auto _ : state) {
    if (fn(&args, nullptr) != 0) {
      state.SkipWithError("the kernel refused its operands");
      return;
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["flops"] = benchmark::Counter(static_cast<double>(2 * m * k * n),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void linear_f32(benchmark::State &state) {
  run_kernel(state, "linear", RRT_DTYPE_F32,
             static_cast<std::uint64_t>(state.range(1) * state.range(2)) * 4);
}

void linear_f16(benchmark::State &state) {
  run_kernel(state, "linear", RRT_DTYPE_F16,
             static_cast<std::uint64_t>(state.range(1) * state.range(2)) * 2);
}

void linear_bf16(benchmark::State &state) {
  run_kernel(state, "linear", RRT_DTYPE_BF16,
             static_cast<std::uint64_t>(state.range(1) * state.range(2)) * 2);
}

void matmul(benchmark::State &state) {
  run_kernel(state, "matmul", RRT_DTYPE_F32,
             static_cast<std::uint64_t>(state.range(1) * state.range(2)) * 4);
}

void shapes(benchmark::internal::Benchmark *b) {
  b->ArgNames({"M", "K", "N"});
  b->Args({1, 1024, 1024});
  b->Args({16, 1024, 1024});
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(linear_f32)->Name("kernels/linear_f32")->Apply(shapes);
BENCHMARK(linear_f16)->Name("kernels/linear_f16")->Apply(shapes);
BENCHMARK(linear_bf16)->Name("kernels/linear_bf16")->Apply(shapes);
BENCHMARK(matmul)->Name("kernels/matmul")->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
