// Exact capacity plans through the public C ABI: parameter spaces (rrt_tensor_desc_t.space),
// runtime-picked context generations and rrt_kernel_config_fit.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"

namespace {

using replayrt::testing::last_message;
using replayrt::testing::run_args;
using replayrt::testing::stats_of;

constexpr std::uint64_t kN = 256;
constexpr std::uint64_t kBytes = kN * sizeof(float);
constexpr std::uint32_t kV11DescSize = offsetof(rrt_callable_desc_t, num_views);

rrt_context_t make_context(bool profiling = false) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.profiling = profiling ? 1 : 0;
  rrt_context_t ctx = nullptr;
  EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  return ctx;
}

// out = in (one "copy" task), then `extra` tasks out += in, over two params declared in
// `in_space` and `out_space`. The spaces are raw integers, stored as a C caller would, so a
// test can pass a value that is no enumerator.
class CopyCallable {
 public:
  CopyCallable(std::int32_t in_space, std::int32_t out_space,
               rrt_bind_strategy_t bind = RRT_BIND_DEVICE_BUILD, std::uint32_t extra = 0) {
    const std::int32_t spaces[2] = {in_space, out_space};
    for (int i = 0; i < 2; ++i) {
      params_[i] = rrt_tensor_desc_t{};
      params_[i].dtype = RRT_DTYPE_F32;
      params_[i].ndim = 1;
      params_[i].shape[0] = kN;
      params_[i].direction = i == 0 ? RRT_DIR_IN : RRT_DIR_OUT;
      std::memcpy(&params_[i].space, &spaces[i], sizeof spaces[i]);
    }
    // Built-in ids do not depend on the context: look them up in a scratch one.
    rrt_context_t scratch = make_context();
    std::int32_t copy = -1;
    std::int32_t add = -1;
    EXPECT_EQ(rrt_kernel_lookup(scratch, "copy", &copy), RRT_OK);
    EXPECT_EQ(rrt_kernel_lookup(scratch, "add", &add), RRT_OK);
    EXPECT_EQ(rrt_context_destroy(scratch), RRT_OK);
    copy_ops_[0] = {RRT_OPERAND_PARAM, 0};
    copy_ops_[1] = {RRT_OPERAND_PARAM, 1};
    add_ops_[0] = {RRT_OPERAND_PARAM, 1};
    add_ops_[1] = {RRT_OPERAND_PARAM, 0};
    add_ops_[2] = {RRT_OPERAND_PARAM, 1};
    tasks_.push_back({copy, 2, copy_ops_});
    for (std::uint32_t t = 0; t < extra; ++t) {
      tasks_.push_back({add, 3, add_ops_});
    }
    desc_.struct_size = sizeof desc_;
    desc_.bind = bind;
    desc_.num_params = 2;
    desc_.params = params_;
    desc_.num_tasks = static_cast<std::uint32_t>(tasks_.size());
    desc_.tasks = tasks_.data();
  }
  CopyCallable(const CopyCallable &) = delete;
  CopyCallable &operator=(const CopyCallable &) = delete;

  const rrt_callable_desc_t *desc() const { return &desc_; }
  rrt_callable_desc_t *mutable_desc() { return &desc_; }

 private:
  rrt_tensor_desc_t params_[2];
  rrt_operand_t copy_ops_[2];
  rrt_operand_t add_ops_[3];
  std::vector<rrt_task_desc_t> tasks_;
  rrt_callable_desc_t desc_{};
};

rrt_capacity_plan_t plan_for(const rrt_callable_desc_t *desc) {
  rrt_capacity_plan_t plan{};
  EXPECT_EQ(rrt_capacity_plan_fit(desc, &plan), RRT_OK) << last_message();
  return plan;
}

rrt_kernel_config_t kernel_config(const rrt_capacity_plan_t &plan) {
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = 0;
  config.capacity = plan;
  return config;
}

std::uint64_t staging_of(const rrt_capacity_plan_t &plan) {
  return plan.retained_staging_bytes + plan.host_staging_bytes;
}

// A kernel-mode context with the callable prepared and two device buffers of kBytes.
struct DeviceRig {
  explicit DeviceRig(const rrt_callable_desc_t *desc, bool profiling = false)
      : ctx(make_context(profiling)) {
    const rrt_kernel_config_t config = kernel_config(plan_for(desc));
    EXPECT_EQ(rrt_kernel_init(ctx, &config), RRT_OK) << last_message();
    EXPECT_EQ(rrt_callable_prepare(ctx, desc, &id), RRT_OK) << last_message();
    EXPECT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
    EXPECT_EQ(rrt_device_alloc(ctx, kBytes, &in), RRT_OK);
    EXPECT_EQ(rrt_device_alloc(ctx, kBytes, &out), RRT_OK);
    EXPECT_EQ(rrt_memcpy_h2d(ctx, in, host_in.data(), kBytes, nullptr), RRT_OK);
  }
  ~DeviceRig() {
    EXPECT_EQ(rrt_device_free(ctx, in), RRT_OK);
    EXPECT_EQ(rrt_device_free(ctx, out), RRT_OK);
    EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
    EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
  }
  DeviceRig(const DeviceRig &) = delete;
  DeviceRig &operator=(const DeviceRig &) = delete;

  std::vector<float> read_out() const {
    std::vector<float> values(kN, -1.0F);
    EXPECT_EQ(rrt_memcpy_d2h(ctx, values.data(), out, kBytes, nullptr), RRT_OK);
    return values;
  }

  rrt_context_t ctx = nullptr;
  rrt_stream_t stream = nullptr;
  std::int32_t id = -1;
  void *in = nullptr;
  void *out = nullptr;
  std::vector<float> host_in = std::vector<float>(kN, 3.0F);
};

TEST(ParamSpaceTest, ADeviceDeclaredModelPlansNoStagingAndItsLaunchesWork) {
  for (const rrt_bind_strategy_t bind : {RRT_BIND_DEVICE_BUILD, RRT_BIND_HOST_BUILD}) {
    SCOPED_TRACE(bind);
    CopyCallable callable(RRT_PARAM_SPACE_DEVICE, RRT_PARAM_SPACE_DEVICE, bind);
    EXPECT_EQ(staging_of(plan_for(callable.desc())), 0u);
    DeviceRig rig(callable.desc());
    const rrt_stats_t committed = stats_of(rig.ctx);
    EXPECT_EQ(committed.regions[RRT_GROWTH_RETAINED_STAGING].capacity_bytes, 0u);
    EXPECT_EQ(committed.regions[RRT_GROWTH_HOST_STAGING].capacity_bytes, 0u);

    const rrt_tensor_arg_t tensors[2] = {{rig.in, kBytes, RRT_SPACE_DEVICE},
                                         {rig.out, kBytes, RRT_SPACE_DEVICE}};
    const rrt_run_args_t args = run_args(tensors);
    ASSERT_EQ(rrt_kernel_launch(rig.ctx, rig.id, &args, rig.stream), RRT_OK) << last_message();
    ASSERT_EQ(rrt_stream_synchronize(rig.stream), RRT_OK);
    EXPECT_FLOAT_EQ(rig.read_out()[kN - 1], 3.0F);

    ASSERT_EQ(rrt_stream_begin_capture(rig.stream), RRT_OK);
    ASSERT_EQ(rrt_kernel_launch(rig.ctx, rig.id, &args, rig.stream), RRT_OK) << last_message();
    rrt_graph_t graph = nullptr;
    ASSERT_EQ(rrt_stream_end_capture(rig.stream, &graph), RRT_OK);
    rig.host_in.assign(kN, 7.0F);
    ASSERT_EQ(rrt_memcpy_h2d(rig.ctx, rig.in, rig.host_in.data(), kBytes, nullptr), RRT_OK);
    ASSERT_EQ(rrt_graph_replay(graph, rig.stream), RRT_OK);
    ASSERT_EQ(rrt_stream_synchronize(rig.stream), RRT_OK);
    EXPECT_FLOAT_EQ(rig.read_out()[0], 7.0F);
    const rrt_stats_t after = stats_of(rig.ctx);
    EXPECT_EQ(after.device_alloc_calls, committed.device_alloc_calls);
    EXPECT_EQ(after.refusals[RRT_GROWTH_RETAINED_STAGING], 0u);
    EXPECT_EQ(after.refusals[RRT_GROWTH_HOST_STAGING], 0u);
    ASSERT_EQ(rrt_graph_destroy(graph), RRT_OK);
  }
}

TEST(CallerMemoryTest, CallerAllocationsStayAllowedAfterKernelInitAndLeaveTheRuntimeAsItWas) {
  CopyCallable callable(RRT_PARAM_SPACE_DEVICE, RRT_PARAM_SPACE_DEVICE);
  DeviceRig rig(callable.desc());
  const rrt_stats_t before = stats_of(rig.ctx);
  void *extra = nullptr;
  ASSERT_EQ(rrt_device_alloc(rig.ctx, std::size_t{8} << 20, &extra), RRT_OK) << last_message();
  const rrt_tensor_arg_t tensors[2] = {{rig.in, kBytes, RRT_SPACE_DEVICE},
                                       {rig.out, kBytes, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = run_args(tensors);
  ASSERT_EQ(rrt_kernel_launch(rig.ctx, rig.id, &args, rig.stream), RRT_OK) << last_message();
  ASSERT_EQ(rrt_stream_synchronize(rig.stream), RRT_OK);
  EXPECT_EQ(rrt_device_free(rig.ctx, extra), RRT_OK);
  const rrt_stats_t after = stats_of(rig.ctx);
  EXPECT_EQ(after.device_alloc_calls, before.device_alloc_calls);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  for (int point = 0; point < RRT_GROWTH_POINT_COUNT; ++point) {
    EXPECT_EQ(after.regions[point].capacity_bytes, before.regions[point].capacity_bytes) << point;
    EXPECT_EQ(after.refusals[point], 0u) << point;
  }
}

// The statistics add up: live_bytes is the sum of the regions' capacities, and after kernel
// init each planned region holds exactly its plan field, none of them a multiple of the
// simulator's 1024-byte allocation granularity here.
TEST(StatisticsTest, LiveBytesAreTheRegionsAndTheRegionsAreThePlan) {
  CopyCallable device_build(RRT_PARAM_SPACE_HOST, RRT_PARAM_SPACE_HOST, RRT_BIND_DEVICE_BUILD, 2);
  CopyCallable host_build(RRT_PARAM_SPACE_HOST, RRT_PARAM_SPACE_HOST, RRT_BIND_HOST_BUILD, 1);
  const rrt_callable_desc_t *descs[] = {device_build.desc(), host_build.desc()};
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  ASSERT_EQ(rrt_kernel_config_fit(descs, 2, &config), RRT_OK);
  const rrt_capacity_plan_t &plan = config.capacity;
  rrt_context_t ctx = make_context(true);
  ASSERT_EQ(rrt_kernel_init(ctx, &config), RRT_OK) << last_message();
  const auto sum_of_regions = [](const rrt_stats_t &stats) {
    std::uint64_t sum = 0;
    for (const rrt_region_stats_t &region : stats.regions) {
      sum += region.capacity_bytes;
    }
    return sum;
  };
  const rrt_stats_t initialized = stats_of(ctx);
  EXPECT_EQ(initialized.live_bytes, sum_of_regions(initialized));
  const std::uint64_t planned[][2] = {{RRT_GROWTH_ARENA_GM_HEAP, plan.gm_heap_bytes},
                                      {RRT_GROWTH_ARENA_GM_SM, plan.gm_sm_bytes},
                                      {RRT_GROWTH_ARENA_RUNTIME_POOL, plan.runtime_pool_bytes},
                                      {RRT_GROWTH_RETAINED_STAGING, plan.retained_staging_bytes},
                                      {RRT_GROWTH_GRAPH_DEFINITION, plan.graph_definition_bytes},
                                      {RRT_GROWTH_HOST_STAGING, plan.host_staging_bytes}};
  bool a_size_is_not_rounded = false;
  for (const auto &[point, bytes] : planned) {
    EXPECT_EQ(initialized.regions[point].capacity_bytes, bytes) << "growth point " << point;
    a_size_is_not_rounded = a_size_is_not_rounded || bytes % 1024 != 0;
  }
  EXPECT_TRUE(a_size_is_not_rounded) << "the plan cannot tell asked-for bytes from rounded ones";
  EXPECT_GT(initialized.regions[RRT_GROWTH_DFX_COLLECTORS].capacity_bytes, 0u);

  std::vector<float> in(kN, 1.0F);
  std::vector<float> out(kN, 0.0F);
  const rrt_tensor_arg_t tensors[2] = {{in.data(), kBytes, RRT_SPACE_HOST},
                                       {out.data(), kBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t args = run_args(tensors);
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
  for (const rrt_callable_desc_t *desc : descs) {
    std::int32_t id = -1;
    ASSERT_EQ(rrt_callable_prepare(ctx, desc, &id), RRT_OK) << last_message();
    ASSERT_EQ(rrt_kernel_launch(ctx, id, &args, stream), RRT_OK) << last_message();
    ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
    const rrt_stats_t after = stats_of(ctx);
    EXPECT_EQ(after.live_bytes, sum_of_regions(after));
    EXPECT_EQ(after.live_bytes, initialized.live_bytes) << "kernel mode allocated after init";
  }
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(ParamSpaceTest, OnlyHostAndAnyParamsAreStaged) {
  CopyCallable any(RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_ANY);
  CopyCallable host_in(RRT_PARAM_SPACE_HOST, RRT_PARAM_SPACE_DEVICE);
  CopyCallable any_in(RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_DEVICE);
  const std::uint64_t all = plan_for(any.desc()).retained_staging_bytes;
  EXPECT_GE(all, 2 * kBytes);
  EXPECT_EQ(plan_for(host_in.desc()).retained_staging_bytes, all / 2);
  EXPECT_EQ(plan_for(any_in.desc()).retained_staging_bytes, all / 2);

  // A HOST input staged into the exact plan; the DEVICE output passes through.
  DeviceRig rig(host_in.desc());
  std::vector<float> input(kN, 5.0F);
  const rrt_tensor_arg_t tensors[2] = {{input.data(), kBytes, RRT_SPACE_HOST},
                                       {rig.out, kBytes, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = run_args(tensors);
  ASSERT_EQ(rrt_kernel_launch(rig.ctx, rig.id, &args, rig.stream), RRT_OK) << last_message();
  ASSERT_EQ(rrt_stream_synchronize(rig.stream), RRT_OK);
  EXPECT_FLOAT_EQ(rig.read_out()[3], 5.0F);
}

TEST(ParamSpaceTest, AV11DescReadsNoSpaceAndStagesEveryParam) {
  CopyCallable v12_any(RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_ANY);
  // A 1.1 caller's tensor descs end in padding: whatever it holds is not a space.
  CopyCallable v11(RRT_PARAM_SPACE_DEVICE, 0x7f);
  v11.mutable_desc()->struct_size = kV11DescSize;
  const rrt_capacity_plan_t plan = plan_for(v11.desc());
  EXPECT_EQ(plan.retained_staging_bytes, plan_for(v12_any.desc()).retained_staging_bytes);

  // Either space runs, as in ABI 1.1.
  DeviceRig rig(v11.desc());
  std::vector<float> input(kN, 2.0F);
  std::vector<float> output(kN, 0.0F);
  const rrt_tensor_arg_t host[2] = {{input.data(), kBytes, RRT_SPACE_HOST},
                                    {output.data(), kBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t host_args = run_args(host);
  ASSERT_EQ(rrt_kernel_launch(rig.ctx, rig.id, &host_args, rig.stream), RRT_OK) << last_message();
  const rrt_tensor_arg_t device[2] = {{rig.in, kBytes, RRT_SPACE_DEVICE},
                                      {rig.out, kBytes, RRT_SPACE_DEVICE}};
  const rrt_run_args_t device_args = run_args(device);
  ASSERT_EQ(rrt_kernel_launch(rig.ctx, rig.id, &device_args, rig.stream), RRT_OK) << last_message();
  ASSERT_EQ(rrt_stream_synchronize(rig.stream), RRT_OK);
  EXPECT_FLOAT_EQ(output[0], 2.0F);
  EXPECT_FLOAT_EQ(rig.read_out()[0], 3.0F);
}

TEST(ParamSpaceTest, AnUnknownSpaceInAV12DescIsInvalid) {
  CopyCallable callable(RRT_PARAM_SPACE_ANY, 3);
  rrt_capacity_plan_t plan{};
  EXPECT_EQ(rrt_capacity_plan_fit(callable.desc(), &plan), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("param 1"), std::string::npos) << last_message();
  EXPECT_EQ(staging_of(plan), 0u);
  rrt_context_t ctx = make_context();
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  std::int32_t id = -1;
  EXPECT_EQ(rrt_callable_prepare(ctx, callable.desc(), &id), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("space"), std::string::npos) << last_message();
  ASSERT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(ParamSpaceTest, AKernelLaunchInTheOtherSpaceIsRefusedNamingTheParamAndChangesNothing) {
  CopyCallable callable(RRT_PARAM_SPACE_HOST, RRT_PARAM_SPACE_DEVICE);
  DeviceRig rig(callable.desc());
  std::vector<float> input(kN, 4.0F);
  std::vector<float> output(kN, 0.0F);
  const rrt_stats_t before = stats_of(rig.ctx);
  // The DEVICE-declared output passed as HOST.
  const rrt_tensor_arg_t host_out[2] = {{input.data(), kBytes, RRT_SPACE_HOST},
                                        {output.data(), kBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t host_out_args = run_args(host_out);
  EXPECT_EQ(rrt_kernel_launch(rig.ctx, rig.id, &host_out_args, rig.stream),
            RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("param 1 is declared DEVICE"), std::string::npos) << last_message();
  // The HOST-declared input passed as DEVICE.
  const rrt_tensor_arg_t device_in[2] = {{rig.in, kBytes, RRT_SPACE_DEVICE},
                                         {rig.out, kBytes, RRT_SPACE_DEVICE}};
  const rrt_run_args_t device_in_args = run_args(device_in);
  EXPECT_EQ(rrt_kernel_launch(rig.ctx, rig.id, &device_in_args, rig.stream),
            RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("param 0 is declared HOST"), std::string::npos) << last_message();
  ASSERT_EQ(rrt_stream_synchronize(rig.stream), RRT_OK);
  const rrt_stats_t after = stats_of(rig.ctx);
  EXPECT_EQ(after.launches, before.launches);
  EXPECT_EQ(after.device_alloc_calls, before.device_alloc_calls);
  EXPECT_EQ(std::memcmp(after.regions, before.regions, sizeof after.regions), 0);
  EXPECT_FLOAT_EQ(output[0], 0.0F);
}

TEST(ParamSpaceTest, AProgramRunInTheOtherSpaceIsRefusedNamingTheParamAndChangesNothing) {
  CopyCallable callable(RRT_PARAM_SPACE_DEVICE, RRT_PARAM_SPACE_HOST);
  rrt_context_t ctx = make_context();
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, callable.desc(), &id), RRT_OK) << last_message();
  void *in = nullptr;
  ASSERT_EQ(rrt_device_alloc(ctx, kBytes, &in), RRT_OK);
  std::vector<float> input(kN, 6.0F);
  std::vector<float> output(kN, 0.0F);
  ASSERT_EQ(rrt_memcpy_h2d(ctx, in, input.data(), kBytes, nullptr), RRT_OK);
  const rrt_stats_t before = stats_of(ctx);

  const rrt_tensor_arg_t wrong[2] = {{input.data(), kBytes, RRT_SPACE_HOST},
                                     {output.data(), kBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t wrong_args = run_args(wrong);
  rrt_run_t run = nullptr;
  EXPECT_EQ(rrt_run_prepare(ctx, id, &wrong_args, &run), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(run, nullptr);
  EXPECT_NE(last_message().find("param 0 is declared DEVICE"), std::string::npos) << last_message();
  EXPECT_EQ(rrt_run(ctx, id, &wrong_args), RRT_ERR_INVALID_ARGUMENT);
  const rrt_stats_t after = stats_of(ctx);
  EXPECT_EQ(after.launches, before.launches);
  EXPECT_EQ(after.device_alloc_calls, before.device_alloc_calls);
  EXPECT_EQ(std::memcmp(after.regions, before.regions, sizeof after.regions), 0);
  EXPECT_FLOAT_EQ(output[0], 0.0F);

  // The declared spaces run; two runs in a row allocate nothing the second time.
  const rrt_tensor_arg_t right[2] = {{in, kBytes, RRT_SPACE_DEVICE},
                                     {output.data(), kBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t right_args = run_args(right);
  ASSERT_EQ(rrt_run(ctx, id, &right_args), RRT_OK) << last_message();
  EXPECT_FLOAT_EQ(output[kN - 1], 6.0F);
  ASSERT_EQ(rrt_device_free(ctx, in), RRT_OK);
  ASSERT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(ContextGenerationTest, TwoContextsAskingForGenerationZeroBothInitialize) {
  CopyCallable callable(RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_ANY);
  const rrt_kernel_config_t config = kernel_config(plan_for(callable.desc()));
  rrt_context_t first = make_context();
  rrt_context_t second = make_context();
  ASSERT_EQ(rrt_kernel_init(first, &config), RRT_OK) << last_message();
  ASSERT_EQ(rrt_kernel_init(second, &config), RRT_OK) << last_message();
  for (rrt_context_t ctx : {first, second}) {
    std::int32_t id = -1;
    ASSERT_EQ(rrt_callable_prepare(ctx, callable.desc(), &id), RRT_OK) << last_message();
    std::vector<float> input(kN, 1.5F);
    std::vector<float> output(kN, 0.0F);
    const rrt_tensor_arg_t tensors[2] = {{input.data(), kBytes, RRT_SPACE_HOST},
                                         {output.data(), kBytes, RRT_SPACE_HOST}};
    const rrt_run_args_t args = run_args(tensors);
    rrt_stream_t stream = nullptr;
    ASSERT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
    ASSERT_EQ(rrt_kernel_launch(ctx, id, &args, stream), RRT_OK) << last_message();
    ASSERT_EQ(rrt_stream_destroy(stream), RRT_OK);
    EXPECT_FLOAT_EQ(output[0], 1.5F);
  }
  ASSERT_EQ(rrt_context_destroy(first), RRT_OK);
  ASSERT_EQ(rrt_context_destroy(second), RRT_OK);
}

TEST(ContextGenerationTest, AnExplicitGenerationIsStillRefusedTheSecondTime) {
  CopyCallable callable(RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_ANY);
  rrt_kernel_config_t config = kernel_config(plan_for(callable.desc()));
  config.context_generation = 0x5eed0011;
  rrt_context_t first = make_context();
  rrt_context_t second = make_context();
  ASSERT_EQ(rrt_kernel_init(first, &config), RRT_OK) << last_message();
  EXPECT_EQ(rrt_kernel_init(second, &config), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("already used"), std::string::npos) << last_message();
  rrt_mode_t mode = RRT_MODE_KERNEL;
  int latched = -1;
  ASSERT_EQ(rrt_context_mode(second, &mode, &latched), RRT_OK);
  EXPECT_EQ(latched, 0);
  config.context_generation = 0;
  ASSERT_EQ(rrt_kernel_init(second, &config), RRT_OK) << last_message();
  ASSERT_EQ(rrt_context_destroy(first), RRT_OK);
  ASSERT_EQ(rrt_context_destroy(second), RRT_OK);
}

TEST(KernelConfigFitTest, RaisesTheTaskCapacityToTheLargestCallableAndGrowsTheCapacity) {
  CopyCallable one(RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_ANY, RRT_BIND_DEVICE_BUILD, 0);
  CopyCallable three(RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_ANY, RRT_BIND_DEVICE_BUILD, 2);
  const rrt_callable_desc_t *descs[2] = {one.desc(), three.desc()};
  rrt_capacity_plan_t expected{};
  ASSERT_EQ(rrt_capacity_plan_fit_all(descs, 2, &expected), RRT_OK);
  rrt_kernel_config_t config = kernel_config({});
  ASSERT_EQ(rrt_kernel_config_fit(descs, 2, &config), RRT_OK) << last_message();
  EXPECT_EQ(std::memcmp(&config.capacity, &expected, sizeof expected), 0);
  EXPECT_EQ(config.profiling_task_capacity, 3u);
  EXPECT_EQ(config.context_generation, 0u);
  // A larger capacity already there stays.
  config.profiling_task_capacity = 9;
  ASSERT_EQ(rrt_kernel_config_fit(descs, 2, &config), RRT_OK);
  EXPECT_EQ(config.profiling_task_capacity, 9u);
  config.profiling_task_capacity = 0;
  ASSERT_EQ(rrt_kernel_config_fit(descs, 2, &config), RRT_OK);

  // The 1-task callable first, then the 3-task one: both prepare and profile.
  rrt_context_t ctx = make_context(true);
  ASSERT_EQ(rrt_kernel_init(ctx, &config), RRT_OK) << last_message();
  std::int32_t ids[2] = {-1, -1};
  ASSERT_EQ(rrt_callable_prepare(ctx, one.desc(), &ids[0]), RRT_OK) << last_message();
  ASSERT_EQ(rrt_callable_prepare(ctx, three.desc(), &ids[1]), RRT_OK) << last_message();
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
  std::vector<float> input(kN, 1.0F);
  std::vector<float> output(kN, 0.0F);
  const rrt_tensor_arg_t tensors[2] = {{input.data(), kBytes, RRT_SPACE_HOST},
                                       {output.data(), kBytes, RRT_SPACE_HOST}};
  const rrt_run_args_t args = run_args(tensors);
  ASSERT_EQ(rrt_kernel_launch(ctx, ids[1], &args, stream), RRT_OK) << last_message();
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_FLOAT_EQ(output[0], 3.0F);
  std::uint32_t count = 0;
  rrt_task_timing_t timings[4];
  ASSERT_EQ(rrt_context_profile(ctx, timings, 4, &count), RRT_OK);
  EXPECT_EQ(count, 3u);
  ASSERT_EQ(rrt_stream_destroy(stream), RRT_OK);
  ASSERT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(KernelConfigFitTest, InvalidArgumentsLeaveTheConfigUnchanged) {
  CopyCallable good(RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_ANY);
  CopyCallable bad(RRT_PARAM_SPACE_ANY, 9);
  const rrt_callable_desc_t *descs[2] = {good.desc(), bad.desc()};
  rrt_kernel_config_t config = kernel_config({});
  config.profiling_task_capacity = 0;
  EXPECT_EQ(rrt_kernel_config_fit(descs, 2, nullptr), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_kernel_config_fit(nullptr, 1, &config), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_kernel_config_fit(descs, 2, &config), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("descs[1]"), std::string::npos) << last_message();
  rrt_kernel_config_t small = config;
  small.struct_size = 4;
  EXPECT_EQ(rrt_kernel_config_fit(descs, 1, &small), RRT_ERR_INVALID_ARGUMENT);
  const rrt_kernel_config_t untouched = kernel_config({});
  EXPECT_EQ(std::memcmp(&config.capacity, &untouched.capacity, sizeof config.capacity), 0);
  EXPECT_EQ(config.profiling_task_capacity, untouched.profiling_task_capacity);
  EXPECT_EQ(config.context_generation, untouched.context_generation);
  // A 1.1 config (no profiling_task_capacity) gets its capacity grown only.
  rrt_kernel_config_t v11{};
  v11.struct_size = offsetof(rrt_kernel_config_t, profiling_task_capacity);
  v11.profiling_task_capacity = 77;
  ASSERT_EQ(rrt_kernel_config_fit(descs, 1, &v11), RRT_OK) << last_message();
  EXPECT_EQ(v11.profiling_task_capacity, 77u);
  EXPECT_GT(v11.capacity.runtime_pool_bytes, 0u);
}

TEST(KernelConfigFitTest, TheTaskCapacityRefusalNamesTheSetting) {
  CopyCallable one(RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_ANY, RRT_BIND_DEVICE_BUILD, 0);
  CopyCallable three(RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_ANY, RRT_BIND_DEVICE_BUILD, 2);
  const rrt_callable_desc_t *descs[2] = {one.desc(), three.desc()};
  rrt_kernel_config_t config = kernel_config({});
  ASSERT_EQ(rrt_capacity_plan_fit_all(descs, 2, &config.capacity), RRT_OK);
  rrt_context_t ctx = make_context(true);
  ASSERT_EQ(rrt_kernel_init(ctx, &config), RRT_OK) << last_message();
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, one.desc(), &id), RRT_OK) << last_message();
  const rrt_stats_t before = stats_of(ctx);
  EXPECT_EQ(rrt_callable_prepare(ctx, three.desc(), &id), RRT_ERR_INTERNAL);
  rrt_error_detail_t detail{};
  ASSERT_EQ(rrt_last_error(&detail), RRT_ERR_INTERNAL);
  EXPECT_EQ(detail.growth_point, RRT_GROWTH_DFX_COLLECTORS);
  EXPECT_NE(std::string(detail.message).find("profiling_task_capacity"), std::string::npos)
      << detail.message;
  EXPECT_NE(std::string(detail.message).find("3 task records"), std::string::npos)
      << detail.message;
  EXPECT_EQ(stats_of(ctx).device_alloc_calls, before.device_alloc_calls);
  ASSERT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

// A kernel-mode context with profiling whose collectors hold `task_capacity` records, with a
// 2-task and a 3-task callable prepared.
struct ProfiledRig {
  explicit ProfiledRig(std::uint32_t task_capacity) : ctx(make_context(true)) {
    const rrt_callable_desc_t *descs[2] = {two.desc(), three.desc()};
    rrt_kernel_config_t config = kernel_config({});
    EXPECT_EQ(rrt_kernel_config_fit(descs, 2, &config), RRT_OK) << last_message();
    config.profiling_task_capacity = task_capacity;
    EXPECT_EQ(rrt_kernel_init(ctx, &config), RRT_OK) << last_message();
    EXPECT_EQ(rrt_callable_prepare(ctx, two.desc(), &two_id), RRT_OK) << last_message();
    EXPECT_EQ(rrt_callable_prepare(ctx, three.desc(), &three_id), RRT_OK) << last_message();
    EXPECT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
  }
  ~ProfiledRig() {
    EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
    EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
  }
  ProfiledRig(const ProfiledRig &) = delete;
  ProfiledRig &operator=(const ProfiledRig &) = delete;

  std::vector<rrt_task_timing_t> profile() const {
    std::vector<rrt_task_timing_t> timings(16);
    std::uint32_t count = 0;
    EXPECT_EQ(rrt_context_profile(ctx, timings.data(), 16, &count), RRT_OK) << last_message();
    timings.resize(count);
    return timings;
  }

  CopyCallable two{RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_ANY, RRT_BIND_DEVICE_BUILD, 1};
  CopyCallable three{RRT_PARAM_SPACE_ANY, RRT_PARAM_SPACE_ANY, RRT_BIND_HOST_BUILD, 2};
  rrt_context_t ctx = nullptr;
  rrt_stream_t stream = nullptr;
  std::int32_t two_id = -1;
  std::int32_t three_id = -1;
  std::vector<float> input = std::vector<float>(kN, 1.0F);
  std::vector<float> first = std::vector<float>(kN, 0.0F);
  std::vector<float> second = std::vector<float>(kN, 0.0F);
  rrt_tensor_arg_t first_tensors[2] = {{input.data(), kBytes, RRT_SPACE_HOST},
                                       {first.data(), kBytes, RRT_SPACE_HOST}};
  rrt_tensor_arg_t second_tensors[2] = {{input.data(), kBytes, RRT_SPACE_HOST},
                                        {second.data(), kBytes, RRT_SPACE_HOST}};
};

TEST(MultiLaunchProfileTest, AReplayOfSeveralLaunchesReportsEveryLaunchsTasksInLaunchOrder) {
  ProfiledRig rig(5);
  const rrt_run_args_t first_args = run_args(rig.first_tensors);
  const rrt_run_args_t second_args = run_args(rig.second_tensors);
  ASSERT_EQ(rrt_stream_begin_capture(rig.stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(rig.ctx, rig.two_id, &first_args, rig.stream), RRT_OK)
      << last_message();
  ASSERT_EQ(rrt_kernel_launch(rig.ctx, rig.three_id, &second_args, rig.stream), RRT_OK)
      << last_message();
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(rig.stream, &graph), RRT_OK);
  const rrt_stats_t before = stats_of(rig.ctx);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(rrt_graph_replay(graph, rig.stream), RRT_OK);
  }
  ASSERT_EQ(rrt_stream_synchronize(rig.stream), RRT_OK);
  EXPECT_FLOAT_EQ(rig.first[0], 2.0F);
  EXPECT_FLOAT_EQ(rig.second[0], 3.0F);
  const std::vector<rrt_task_timing_t> timings = rig.profile();
  ASSERT_EQ(timings.size(), 5u);
  const std::uint32_t expected_tasks[5] = {0, 1, 0, 1, 2};
  for (std::size_t i = 0; i < timings.size(); ++i) {
    EXPECT_EQ(timings[i].task, expected_tasks[i]) << i;
    EXPECT_GT(timings[i].start_ns, 0u) << i;
    EXPECT_LE(timings[i].start_ns, timings[i].end_ns) << i;
  }
  // The second launch runs after the first on the stream.
  EXPECT_LE(timings[1].end_ns, timings[2].start_ns);
  const rrt_stats_t after = stats_of(rig.ctx);
  EXPECT_EQ(after.device_alloc_calls, before.device_alloc_calls);
  EXPECT_EQ(after.regions[RRT_GROWTH_DFX_COLLECTORS].base_changes, 0u);

  // A launch on its own afterwards reports its own tasks only.
  ASSERT_EQ(rrt_kernel_launch(rig.ctx, rig.three_id, &second_args, rig.stream), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(rig.stream), RRT_OK);
  EXPECT_EQ(rig.profile().size(), 3u);
  ASSERT_EQ(rrt_graph_replay(graph, rig.stream), RRT_OK);
  EXPECT_EQ(rig.profile().size(), 5u);
  ASSERT_EQ(rrt_graph_destroy(graph), RRT_OK);
}

TEST(MultiLaunchProfileTest, ACaptureWhoseLaunchesExceedTheTaskCapacityIsRefusedAtTheLaunch) {
  ProfiledRig rig(4);
  const rrt_run_args_t first_args = run_args(rig.first_tensors);
  const rrt_run_args_t second_args = run_args(rig.second_tensors);
  ASSERT_EQ(rrt_stream_begin_capture(rig.stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(rig.ctx, rig.two_id, &first_args, rig.stream), RRT_OK)
      << last_message();
  const rrt_stats_t before = stats_of(rig.ctx);
  EXPECT_EQ(rrt_kernel_launch(rig.ctx, rig.three_id, &second_args, rig.stream), RRT_ERR_INTERNAL);
  rrt_error_detail_t detail{};
  ASSERT_EQ(rrt_last_error(&detail), RRT_ERR_INTERNAL);
  EXPECT_EQ(detail.growth_point, RRT_GROWTH_DFX_COLLECTORS);
  EXPECT_NE(std::string(detail.message).find("profiling_task_capacity"), std::string::npos)
      << detail.message;
  const rrt_stats_t after = stats_of(rig.ctx);
  EXPECT_EQ(after.launches, before.launches);
  EXPECT_EQ(after.device_alloc_calls, before.device_alloc_calls);
  EXPECT_EQ(after.regions[RRT_GROWTH_DFX_COLLECTORS].base_changes, 0u);
  // The refused launch is not in the graph: a replay writes the first launch's records.
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(rig.stream, &graph), RRT_OK);
  ASSERT_EQ(rrt_graph_replay(graph, rig.stream), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(rig.stream), RRT_OK);
  EXPECT_FLOAT_EQ(rig.first[0], 2.0F);
  EXPECT_FLOAT_EQ(rig.second[0], 0.0F);
  EXPECT_EQ(rig.profile().size(), 2u);
  ASSERT_EQ(rrt_graph_destroy(graph), RRT_OK);

  // A fresh capture starts from the first record again.
  ASSERT_EQ(rrt_stream_begin_capture(rig.stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(rig.ctx, rig.three_id, &second_args, rig.stream), RRT_OK)
      << last_message();
  ASSERT_EQ(rrt_stream_end_capture(rig.stream, &graph), RRT_OK);
  ASSERT_EQ(rrt_graph_replay(graph, rig.stream), RRT_OK);
  EXPECT_EQ(rig.profile().size(), 3u);
  ASSERT_EQ(rrt_graph_destroy(graph), RRT_OK);
}

}  // namespace
