// Live bytes of a kernel-mode context planned with rrt_capacity_plan_fit, MEASURED (not
// timed, not asserted). The model is a chain of kLayers matmuls h = h @ W over kWidth floats:
// the input x and the output y are HOST params, the kLayers weights [kWidth, kWidth] live in
// caller memory (rrt_device_alloc, outside the runtime's statistics). After kernel init, the
// prepare and one launch, each row reports
//   live_bytes         rrt_context_stats live_bytes
//   host_param_bytes   the bytes of the HOST params (x and y)
//   staging_bytes      retained and host staging the context holds (rrt_context_stats)
//   weight_bytes       the bytes of the weights
//   frozen_regions     every other region the context holds (gm_heap, gm_sm, runtime pool,
//                      graph definitions, profiling collectors), as committed from the plan
//   staging_over_host  staging_bytes / host_param_bytes
//   live_over_needed   live_bytes / (host_param_bytes + frozen_regions); live_bytes also holds
//                      each block's rounding to the device allocation granularity
//
//   plan/device_weights  the weights declared RRT_PARAM_SPACE_DEVICE (a 1.2 desc)
//   plan/any_weights     the weights declared ANY (the ABI 1.1 plan: staged as if HOST)
// The goal of plan/device_weights: live_bytes <= 1.05 * host_param_bytes + frozen_regions
// (live_over_needed about 1).
#include <cstdint>
#include <vector>

#include "bench_support.h"

namespace {

using replayrt::bench::check;
using replayrt::testing::CallableBuilder;
using replayrt::testing::f32;
using replayrt::testing::imm;
using replayrt::testing::inter;
using replayrt::testing::kMatmul;
using replayrt::testing::param;

constexpr std::uint32_t kLayers = 4;
constexpr std::uint32_t kWidth = 512;
constexpr std::uint64_t kRowBytes = std::uint64_t{kWidth} * sizeof(float);
constexpr std::uint64_t kWeightBytes = kRowBytes * kWidth;

// Params: x, y, then the weights. Intermediates: one row per layer but the last.
CallableBuilder model(rrt_param_space_t weight_space) {
  CallableBuilder builder;
  rrt_tensor_desc_t x = f32({1, kWidth}, RRT_DIR_IN);
  rrt_tensor_desc_t y = f32({1, kWidth}, RRT_DIR_OUT);
  x.space = RRT_PARAM_SPACE_HOST;
  y.space = RRT_PARAM_SPACE_HOST;
  builder.param(x).param(y);
  for (std::uint32_t l = 0; l < kLayers; ++l) {
    rrt_tensor_desc_t weight = f32({kWidth, kWidth}, RRT_DIR_IN);
    weight.space = weight_space;
    builder.param(weight);
  }
  for (std::uint32_t l = 0; l + 1 < kLayers; ++l) {
    builder.intermediate(f32({1, kWidth}));
  }
  for (std::uint32_t l = 0; l < kLayers; ++l) {
    const rrt_operand_t in = l == 0 ? param(0) : inter(l - 1);
    const rrt_operand_t out = l + 1 == kLayers ? param(1) : inter(l);
    builder.task(kMatmul, {in, param(2 + l), out, imm(1), imm(kWidth), imm(kWidth)});
  }
  return builder;
}

void measure_plan(benchmark::State &state, rrt_param_space_t weight_space) {
  CallableBuilder builder = model(weight_space);
  const rrt_callable_desc_t &desc = builder.desc();
  rrt_context_t ctx = replayrt::bench::make_context(1);
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  check(rrt_capacity_plan_fit(&desc, &config.capacity), "rrt_capacity_plan_fit");
  check(rrt_kernel_init(ctx, &config), "rrt_kernel_init");
  const std::int32_t id = replayrt::bench::prepare(ctx, desc);
  rrt_stream_t stream = nullptr;
  check(rrt_stream_create(ctx, &stream), "rrt_stream_create");

  std::vector<float> x(kWidth, 1.0F);
  std::vector<float> y(kWidth, 0.0F);
  std::vector<float> identity(std::uint64_t{kWidth} * kWidth, 0.0F);
  for (std::uint32_t i = 0; i < kWidth; ++i) {
    identity[std::uint64_t{i} * kWidth + i] = 1.0F;
  }
  std::vector<void *> weights(kLayers, nullptr);
  std::vector<rrt_tensor_arg_t> tensors = {{x.data(), kRowBytes, RRT_SPACE_HOST},
                                           {y.data(), kRowBytes, RRT_SPACE_HOST}};
  for (void *&weight : weights) {
    check(rrt_device_alloc(ctx, kWeightBytes, &weight), "rrt_device_alloc");
    check(rrt_memcpy_h2d(ctx, weight, identity.data(), kWeightBytes, nullptr), "rrt_memcpy_h2d");
    tensors.push_back({weight, kWeightBytes, RRT_SPACE_DEVICE});
  }
  const rrt_run_args_t args =
      replayrt::bench::run_args(tensors.data(), static_cast<std::uint32_t>(tensors.size()));
  for (auto _ : state) {
    check(rrt_kernel_launch(ctx, id, &args, stream), "rrt_kernel_launch");
    check(rrt_stream_synchronize(stream), "rrt_stream_synchronize");
  }
  if (y[kWidth - 1] != 1.0F) {
    state.SkipWithError("the model computed a wrong output");
  }
  const rrt_stats_t stats = replayrt::bench::stats_of(ctx);
  double regions = 0.0;
  double staging = 0.0;
  for (int point = 0; point < RRT_GROWTH_POINT_COUNT; ++point) {
    const bool is_staging =
        point == RRT_GROWTH_RETAINED_STAGING || point == RRT_GROWTH_HOST_STAGING;
    (is_staging ? staging : regions) += static_cast<double>(stats.regions[point].capacity_bytes);
  }
  const double host_params = 2.0 * static_cast<double>(kRowBytes);
  state.counters["live_bytes"] = static_cast<double>(stats.live_bytes);
  state.counters["host_param_bytes"] = host_params;
  state.counters["staging_bytes"] = staging;
  state.counters["staging_over_host"] = staging / host_params;
  state.counters["weight_bytes"] = static_cast<double>(kLayers * kWeightBytes);
  state.counters["frozen_regions"] = regions;
  state.counters["live_over_needed"] =
      static_cast<double>(stats.live_bytes) / (host_params + regions);

  for (void *weight : weights) {
    check(rrt_device_free(ctx, weight), "rrt_device_free");
  }
  check(rrt_stream_destroy(stream), "rrt_stream_destroy");
  check(rrt_context_destroy(ctx), "rrt_context_destroy");
}

void register_all() {
  benchmark::RegisterBenchmark("plan/device_weights", [](benchmark::State &state) {
    measure_plan(state, RRT_PARAM_SPACE_DEVICE);
  })->Iterations(4);
  benchmark::RegisterBenchmark("plan/any_weights", [](benchmark::State &state) {
    measure_plan(state, RRT_PARAM_SPACE_ANY);
  })->Iterations(4);
}

}  // namespace

int main(int argc, char **argv) {
  return replayrt::bench::bench_main(argc, argv, &register_all);
}
