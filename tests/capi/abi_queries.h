// C ABI calls the public-interface tests make over and over: a context's statistics, the
// argument block of a run, this thread's last error detail and a kernel's id.
#pragma once

#include <cstdint>
#include <span>
#include <string>

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

// This thread's last error detail (rrt_last_error's status is not checked).
inline rrt_error_detail_t last_error() {
  rrt_error_detail_t detail{};
  (void)rrt_last_error(&detail);
  return detail;
}

// The message of this thread's last error detail.
inline std::string last_message() {
  return last_error().message;
}

// The id rrt_kernel_lookup finds for `name` in `ctx`; a failing lookup fails the test.
inline std::int32_t lookup_kernel(rrt_context_t ctx, const char *name) {
  std::int32_t id = -1;
  EXPECT_EQ(rrt_kernel_lookup(ctx, name, &id), RRT_OK);
  return id;
}

}  // namespace replayrt::testing
