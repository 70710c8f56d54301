// C ABI calls the public-interface tests make over and over: a context's statistics and the
// argument block of a run.
#pragma once

#include <cstdint>
#include <span>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

namespace replayrt::testing {

// The context's statistics at the current struct size; a failing query fails the test.
inline rrt_stats_t stats_of(rrt_context_t ctx) {
  rrt_stats_t stats{};
  stats.struct_size = sizeof stats;
  EXPECT_EQ(rrt_context_stats(ctx, &stats), RRT_OK);
  return stats;
}

// Run arguments over `tensors`, which must outlive every call the arguments are passed to.
inline rrt_run_args_t run_args(std::span<const rrt_tensor_arg_t> tensors) {
  rrt_run_args_t args{};
  args.struct_size = sizeof args;
  args.num_tensors = static_cast<std::uint32_t>(tensors.size());
  args.tensors = tensors.data();
  return args;
}

}  // namespace replayrt::testing
