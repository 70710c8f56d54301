// The timeline writer (replayrt/trace.hpp) over a real profiled replay on the simulator. The
// file's structure (tracks, nesting) is checked by parsing it in tests/trace/check_trace.py,
// which ctest runs on the demo's and the llama example's traces.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <replayrt/replayrt.hpp>
#include <replayrt/trace.hpp>

#include <gtest/gtest.h>

namespace {

constexpr std::uint64_t kTraceFloats = 256;

rrt::CallableBuilder scale_then_add() {
  rrt::CallableBuilder b;
  const rrt::Operand x = b.param("x", RRT_DTYPE_F32, {kTraceFloats}, RRT_DIR_IN);
  const rrt::Operand y = b.param("y", RRT_DTYPE_F32, {kTraceFloats}, RRT_DIR_OUT);
  const rrt::Operand scaled = b.intermediate("scaled", RRT_DTYPE_F32, {kTraceFloats});
  b.task("scale", {x, scaled, rrt::Operand::immediate_f32(2.0F)});
  b.task("add", {scaled, x, y});
  return b;
}

rrt::CallableBuilder silu_only() {
  rrt::CallableBuilder b;
  const rrt::Operand x = b.param("x", RRT_DTYPE_F32, {kTraceFloats}, RRT_DIR_IN);
  const rrt::Operand y = b.param("y", RRT_DTYPE_F32, {kTraceFloats}, RRT_DIR_OUT);
  b.task("silu", {x, y});
  return b;
}

std::size_t occurrences(const std::string &text, const std::string &what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

rrt::ContextOptions profiled_on_two_workers() {
  rrt::ContextOptions options;
  options.profiling = true;
  options.device_workers = 2;
  return options;
}

// A profiled kernel-mode context with two callables, captured as two launches in one graph.
struct TwoLaunchReplay {
  TwoLaunchReplay() {
    ctx.kernel_init(ctx.fit_kernel_config(
        {&first, &second}, static_cast<std::uint32_t>(first.task_count() + second.task_count())));
    first_id = ctx.prepare(first);
    second_id = ctx.prepare(second);
    args.device(x).device(y);
    x.upload(std::vector<float>(kTraceFloats, 1.0F));
    graph = stream.capture([&] {
      ctx.launch(first_id, args, stream);
      ctx.launch(second_id, args, stream);
    });
  }

  rrt::Context ctx{profiled_on_two_workers()};
  rrt::CallableBuilder first = scale_then_add();
  rrt::CallableBuilder second = silu_only();
  rrt::CallableId first_id;
  rrt::CallableId second_id;
  rrt::DeviceBuffer x = ctx.allocate(kTraceFloats * sizeof(float));
  rrt::DeviceBuffer y = ctx.allocate(kTraceFloats * sizeof(float));
  rrt::Stream stream = ctx.stream();
  rrt::Args args;
  rrt::Graph graph;
};

TEST(TraceTest, AReplayBecomesItsTasksInsideItsLaunchesInsideTheReplay) {
  TwoLaunchReplay work;
  rrt::Trace trace;
  trace.name_callable(work.first_id, "scale_then_add", work.first);
  trace.name_callable(work.second_id, "silu_only", work.second);
  trace.host("replay", [&] { work.graph.replay(work.stream); });
  trace.host("synchronize", [&] { work.stream.synchronize(); });
  const std::vector<rrt_task_timing_t> timings = work.ctx.profile();
  ASSERT_EQ(timings.size(), 3U);
  trace.add_device_work("replay 0", {work.first_id, work.second_id}, timings);

  std::vector<std::uint32_t> workers;
  for (const rrt_task_timing_t &timing : timings) {
    if (std::find(workers.begin(), workers.end(), timing.worker) == workers.end()) {
      workers.push_back(timing.worker);
    }
  }
  const std::string json = trace.json();
  EXPECT_EQ(occurrences(json, "\"cat\":\"task\""), 3U) << json;
  EXPECT_EQ(occurrences(json, "\"cat\":\"host\""), 2U) << json;
  EXPECT_EQ(occurrences(json, "\"cat\":\"work\""), workers.size()) << json;
  EXPECT_GE(occurrences(json, "\"cat\":\"launch\""), 2U) << json;
  EXPECT_EQ(occurrences(json, "\"name\":\"scale_then_add/0 scale\""), 1U) << json;
  EXPECT_EQ(occurrences(json, "\"name\":\"scale_then_add/1 add\""), 1U) << json;
  EXPECT_EQ(occurrences(json, "\"name\":\"silu_only/0 silu\""), 1U) << json;
  EXPECT_EQ(occurrences(json, "\"name\":\"host thread 0\""), 1U) << json;
  for (const std::uint32_t worker : workers) {
    EXPECT_EQ(occurrences(json, "\"name\":\"worker " + std::to_string(worker) + "\""), 1U);
  }
}

TEST(TraceTest, RecordsThatDoNotSplitIntoTheNamedLaunchesAreRefused) {
  TwoLaunchReplay work;
  work.graph.replay(work.stream);
  work.stream.synchronize();
  rrt::Trace trace;
  EXPECT_THROW(trace.add_device_work(work.ctx, "replay", {work.first_id}), std::invalid_argument);
  EXPECT_EQ(trace.slice_count(), 0U);
  trace.add_device_work(work.ctx, "replay", {work.first_id, work.second_id});
  EXPECT_GT(trace.slice_count(), 0U);
}

TEST(TraceTest, AnUnnamedCallableAndAnOddNameStillMakeValidStrings) {
  TwoLaunchReplay work;
  work.graph.replay(work.stream);
  work.stream.synchronize();
  rrt::Trace trace;
  trace.name_callable(work.first_id, "quote\" back\\slash\nnewline", work.first);
  trace.add_device_work(work.ctx, "", {work.first_id, work.second_id});
  const std::string json = trace.json();
  EXPECT_NE(json.find("quote\\\" back\\\\slash\\u000anewline/0 scale"), std::string::npos) << json;
  EXPECT_NE(json.find("\"name\":\"callable " + std::to_string(work.second_id.value) + "/0\""),
            std::string::npos)
      << json;
  EXPECT_EQ(occurrences(json, "\"cat\":\"work\""), 0U);
}

TEST(TraceTest, AHostSliceIsRecordedWhenTheCallThrows) {
  rrt::Trace trace;
  EXPECT_THROW(trace.host("failing call", [] { throw std::runtime_error("no"); }),
               std::runtime_error);
  EXPECT_EQ(trace.slice_count(), 1U);
  EXPECT_EQ(trace.host("value", [] { return 7; }), 7);
  EXPECT_EQ(trace.slice_count(), 2U);
}

TEST(TraceTest, WritingToAnUnwritablePathThrows) {
  const rrt::Trace trace;
  EXPECT_THROW(trace.write("/nonexistent-directory/trace.json"), std::runtime_error);
}

}  // namespace
