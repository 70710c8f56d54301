// Profiling collectors (DFX) through the public C ABI.
#include <cstddef>
#include <set>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"
#include "test_platform.h"

namespace {

using replayrt::testing::run_args;
using replayrt::testing::stats_of;

constexpr std::uint64_t kN = 512;

rrt_context_t make_profiling_context(bool profiling) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = replayrt::testing::test_platform();
  options.profiling = profiling ? 1 : 0;
  rrt_context_t ctx = nullptr;
  EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  return ctx;
}

// A chain of `tasks` tasks: out = in, then out += in, ... so out = tasks * in.
class Chain {
 public:
  Chain(rrt_context_t ctx, std::uint32_t tasks) {
    for (int i = 0; i < 2; ++i) {
      params_[i] = rrt_tensor_desc_t{};
      params_[i].dtype = RRT_DTYPE_F32;
      params_[i].ndim = 1;
      params_[i].shape[0] = kN;
      params_[i].direction = i == 0 ? RRT_DIR_IN : RRT_DIR_OUT;
    }
    std::int32_t copy = -1;
    std::int32_t add = -1;
    EXPECT_EQ(rrt_kernel_lookup(ctx, "copy", &copy), RRT_OK);
    EXPECT_EQ(rrt_kernel_lookup(ctx, "add", &add), RRT_OK);
    copy_ops_[0] = {RRT_OPERAND_PARAM, 0};
    copy_ops_[1] = {RRT_OPERAND_PARAM, 1};
    add_ops_[0] = {RRT_OPERAND_PARAM, 1};
    add_ops_[1] = {RRT_OPERAND_PARAM, 0};
    add_ops_[2] = {RRT_OPERAND_PARAM, 1};
    tasks_.push_back({copy, 2, copy_ops_});
    for (std::uint32_t t = 1; t < tasks; ++t) {
      tasks_.push_back({add, 3, add_ops_});
    }
    desc_.struct_size = sizeof desc_;
    desc_.bind = RRT_BIND_DEVICE_BUILD;
    desc_.num_params = 2;
    desc_.params = params_;
    desc_.num_tasks = tasks;
    desc_.tasks = tasks_.data();
  }
  const rrt_callable_desc_t *desc() const { return &desc_; }

 private:
  rrt_tensor_desc_t params_[2];
  rrt_operand_t copy_ops_[2];
  rrt_operand_t add_ops_[3];
  std::vector<rrt_task_desc_t> tasks_;
  rrt_callable_desc_t desc_{};
};

struct HostBuffers {
  std::vector<float> in = std::vector<float>(kN, 1.0F);
  std::vector<float> out = std::vector<float>(kN, 0.0F);
  rrt_tensor_arg_t tensors[2] = {{in.data(), kN * 4, RRT_SPACE_HOST},
                                 {out.data(), kN * 4, RRT_SPACE_HOST}};
  rrt_run_args_t args() const { return run_args(tensors); }
};

TEST(ProfilingTest, AProgramRunReportsOneTimingPerTask) {
  rrt_context_t ctx = make_profiling_context(true);
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  Chain chain(ctx, 6);
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, chain.desc(), &id), RRT_OK);
  HostBuffers buffers;
  const rrt_run_args_t args = buffers.args();
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx, id, &args, &run), RRT_OK);
  std::uint32_t count = 99;
  EXPECT_EQ(rrt_run_profile(run, nullptr, 0, &count), RRT_ERR_INVALID_STATE);
  ASSERT_EQ(rrt_run_launch(run, nullptr), RRT_OK);
  ASSERT_EQ(rrt_run_wait(run), RRT_OK);
  EXPECT_FLOAT_EQ(buffers.out[0], 6.0F);

  std::vector<rrt_task_timing_t> timings(16);
  ASSERT_EQ(rrt_run_profile(run, timings.data(), 16, &count), RRT_OK);
  ASSERT_EQ(count, 6u);
  std::set<std::uint32_t> tasks;
  for (std::uint32_t i = 0; i < count; ++i) {
    EXPECT_LE(timings[i].start_ns, timings[i].end_ns);
    EXPECT_GT(timings[i].start_ns, 0u);
    tasks.insert(timings[i].task);
    EXPECT_EQ(timings[i].worker, 0u);
  }
  EXPECT_EQ(tasks.size(), 6u);
  // The chain runs in order.
  for (std::uint32_t i = 1; i < count; ++i) {
    EXPECT_LE(timings[i - 1].end_ns, timings[i].start_ns);
  }
  // A smaller buffer gets a prefix and the full count.
  std::vector<rrt_task_timing_t> two(2);
  ASSERT_EQ(rrt_run_profile(run, two.data(), 2, &count), RRT_OK);
  EXPECT_EQ(count, 6u);
  EXPECT_EQ(two[1].task, timings[1].task);
  ASSERT_EQ(rrt_run_finalize(run), RRT_OK);
  ASSERT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(ProfilingTest, ProfilingOffIsInvalidState) {
  rrt_context_t ctx = make_profiling_context(false);
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  Chain chain(ctx, 2);
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, chain.desc(), &id), RRT_OK);
  HostBuffers buffers;
  const rrt_run_args_t args = buffers.args();
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx, id, &args, &run), RRT_OK);
  ASSERT_EQ(rrt_run_launch(run, nullptr), RRT_OK);
  ASSERT_EQ(rrt_run_wait(run), RRT_OK);
  std::uint32_t count = 0;
  EXPECT_EQ(rrt_run_profile(run, nullptr, 0, &count), RRT_ERR_INVALID_STATE);
  EXPECT_EQ(rrt_run_profile(run, nullptr, 0, nullptr), RRT_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(rrt_run_finalize(run), RRT_OK);
  EXPECT_EQ(stats_of(ctx).regions[RRT_GROWTH_DFX_COLLECTORS].capacity_bytes, 0u);
  ASSERT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(ProfilingTest, ProgramModeRebuildsTheCollectorsForALargerShape) {
  rrt_context_t ctx = make_profiling_context(true);
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  Chain small(ctx, 3);
  Chain large(ctx, 12);
  std::int32_t small_id = -1;
  std::int32_t large_id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, small.desc(), &small_id), RRT_OK);
  ASSERT_EQ(rrt_callable_prepare(ctx, large.desc(), &large_id), RRT_OK);
  HostBuffers buffers;
  const rrt_run_args_t args = buffers.args();
  ASSERT_EQ(rrt_run(ctx, small_id, &args), RRT_OK);
  const rrt_stats_t after_small = stats_of(ctx);
  ASSERT_EQ(rrt_run(ctx, small_id, &args), RRT_OK);
  EXPECT_EQ(stats_of(ctx).device_alloc_calls, after_small.device_alloc_calls);
  ASSERT_EQ(rrt_run(ctx, large_id, &args), RRT_OK);
  EXPECT_FLOAT_EQ(buffers.out[0], 12.0F);
  const rrt_stats_t after_large = stats_of(ctx);
  EXPECT_EQ(after_large.regions[RRT_GROWTH_DFX_COLLECTORS].base_changes, 1u);
  EXPECT_GT(after_large.regions[RRT_GROWTH_DFX_COLLECTORS].capacity_bytes,
            after_small.regions[RRT_GROWTH_DFX_COLLECTORS].capacity_bytes);
  // The smaller shape fits the rebuilt collectors.
  ASSERT_EQ(rrt_run(ctx, small_id, &args), RRT_OK);
  EXPECT_EQ(stats_of(ctx).regions[RRT_GROWTH_DFX_COLLECTORS].base_changes, 1u);
  ASSERT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(ProfilingTest, AnOverlappingPrepareThatWouldRebuildTheCollectorsIsIncompatible) {
  rrt_context_t ctx = make_profiling_context(true);
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  Chain small(ctx, 3);
  Chain large(ctx, 12);
  std::int32_t small_id = -1;
  std::int32_t large_id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, small.desc(), &small_id), RRT_OK);
  ASSERT_EQ(rrt_callable_prepare(ctx, large.desc(), &large_id), RRT_OK);
  HostBuffers first_buffers;
  HostBuffers second_buffers;
  const rrt_run_args_t first_args = first_buffers.args();
  const rrt_run_args_t second_args = second_buffers.args();
  rrt_run_t active = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx, small_id, &first_args, &active), RRT_OK);
  ASSERT_EQ(rrt_run_launch(active, nullptr), RRT_OK);
  const rrt_stats_t before = stats_of(ctx);

  rrt_run_t successor = nullptr;
  EXPECT_EQ(rrt_run_prepare(ctx, large_id, &second_args, &successor),
            RRT_ERR_PREPARED_INCOMPATIBLE);
  EXPECT_EQ(successor, nullptr);
  const rrt_stats_t after = stats_of(ctx);
  EXPECT_EQ(after.device_alloc_calls, before.device_alloc_calls);
  EXPECT_EQ(after.regions[RRT_GROWTH_DFX_COLLECTORS].base_changes, 0u);

  // A successor that fits the active shape shares it.
  ASSERT_EQ(rrt_run_prepare(ctx, small_id, &second_args, &successor), RRT_OK);
  ASSERT_EQ(rrt_run_finalize(successor), RRT_OK);
  // After the active run is finalized (depth one), the larger run prepares.
  ASSERT_EQ(rrt_run_finalize(active), RRT_OK);
  ASSERT_EQ(rrt_run_prepare(ctx, large_id, &second_args, &successor), RRT_OK);
  ASSERT_EQ(rrt_run_finalize(successor), RRT_OK);
  ASSERT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(ProfilingTest, KernelModeProfilesReplaysWithinTheFrozenShape) {
  rrt_context_t ctx = make_profiling_context(true);
  Chain chain(ctx, 5);
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = 0;  // the runtime picks a process-unique one
  config.profiling_task_capacity = 8;
  ASSERT_EQ(rrt_capacity_plan_fit(chain.desc(), &config.capacity), RRT_OK);
  ASSERT_EQ(rrt_kernel_init(ctx, &config), RRT_OK);
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, chain.desc(), &id), RRT_OK);
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
  HostBuffers buffers;
  const rrt_run_args_t args = buffers.args();
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx, id, &args, stream), RRT_OK);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  const rrt_stats_t before = stats_of(ctx);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_OK);
  }
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_FLOAT_EQ(buffers.out[7], 5.0F);
  std::vector<rrt_task_timing_t> timings(8);
  std::uint32_t count = 0;
  ASSERT_EQ(rrt_context_profile(ctx, timings.data(), 8, &count), RRT_OK);
  EXPECT_EQ(count, 5u);
  EXPECT_EQ(stats_of(ctx).device_alloc_calls, before.device_alloc_calls);

  // The shape is frozen: a callable with more tasks than it holds is refused.
  Chain longer(ctx, 9);
  std::int32_t refused = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, longer.desc(), &refused), RRT_ERR_INTERNAL);
  rrt_error_detail_t detail;
  ASSERT_EQ(rrt_last_error(&detail), RRT_ERR_INTERNAL);
  EXPECT_EQ(detail.growth_point, RRT_GROWTH_DFX_COLLECTORS);
  EXPECT_EQ(stats_of(ctx).regions[RRT_GROWTH_DFX_COLLECTORS].base_changes, 0u);

  ASSERT_EQ(rrt_graph_destroy(graph), RRT_OK);
  ASSERT_EQ(rrt_stream_destroy(stream), RRT_OK);
  ASSERT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

// A caller compiled against ABI 1.1: its options struct ends before wait_policy, its descs
// before num_views, and its profiling_task_capacity holds the largest callable's tasks.
TEST(ProfilingTest, AV11CaptureOfSeveralLaunchesProfilesItsLastLaunch) {
  rrt_context_options_t options{};
  options.struct_size = offsetof(rrt_context_options_t, wait_policy);
  options.platform = replayrt::testing::test_platform();
  options.profiling = 1;
  rrt_context_t ctx = nullptr;
  ASSERT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  const Chain two_chain(ctx, 2);
  const Chain three_chain(ctx, 3);
  rrt_callable_desc_t two = *two_chain.desc();
  rrt_callable_desc_t three = *three_chain.desc();
  two.struct_size = offsetof(rrt_callable_desc_t, num_views);
  three.struct_size = offsetof(rrt_callable_desc_t, num_views);
  const rrt_callable_desc_t *descs[2] = {&two, &three};
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  ASSERT_EQ(rrt_kernel_config_fit(descs, 2, &config), RRT_OK);
  ASSERT_EQ(config.profiling_task_capacity, 3u);
  ASSERT_EQ(rrt_kernel_init(ctx, &config), RRT_OK);
  std::int32_t two_id = -1;
  std::int32_t three_id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, &two, &two_id), RRT_OK);
  ASSERT_EQ(rrt_callable_prepare(ctx, &three, &three_id), RRT_OK);
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
  HostBuffers first;
  HostBuffers second;
  const rrt_run_args_t first_args = first.args();
  const rrt_run_args_t second_args = second.args();
  const auto profile = [ctx] {
    std::vector<rrt_task_timing_t> timings(8);
    std::uint32_t count = 0;
    EXPECT_EQ(rrt_context_profile(ctx, timings.data(), 8, &count), RRT_OK);
    timings.resize(count);
    return timings;
  };

  // Both launches are captured, and each writes its records from the first one on.
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx, two_id, &first_args, stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx, three_id, &second_args, stream), RRT_OK);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  const rrt_stats_t before = stats_of(ctx);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_OK);
  }
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_FLOAT_EQ(first.out[0], 2.0F);
  EXPECT_FLOAT_EQ(second.out[0], 3.0F);
  std::vector<rrt_task_timing_t> timings = profile();
  ASSERT_EQ(timings.size(), 3u);
  for (std::uint32_t t = 0; t < 3; ++t) {
    EXPECT_EQ(timings[t].task, t);
    EXPECT_GT(timings[t].start_ns, 0u) << t;
    EXPECT_LE(timings[t].start_ns, timings[t].end_ns) << t;
  }
  EXPECT_EQ(stats_of(ctx).device_alloc_calls, before.device_alloc_calls);
  ASSERT_EQ(rrt_graph_destroy(graph), RRT_OK);

  // The profile is the last launch's, also when an earlier one has more tasks.
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx, three_id, &second_args, stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx, two_id, &first_args, stream), RRT_OK);
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_OK);
  timings = profile();
  ASSERT_EQ(timings.size(), 2u);
  EXPECT_EQ(timings[0].task, 0u);
  EXPECT_EQ(timings[1].task, 1u);
  EXPECT_EQ(stats_of(ctx).regions[RRT_GROWTH_DFX_COLLECTORS].base_changes, 0u);

  ASSERT_EQ(rrt_graph_destroy(graph), RRT_OK);
  ASSERT_EQ(rrt_stream_destroy(stream), RRT_OK);
  ASSERT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

}  // namespace
