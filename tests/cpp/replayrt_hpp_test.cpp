// The C++ API (replayrt/replayrt.hpp) over the shared library, as a user links it: owners,
// errors, the callable builder, runs, launches and the capture scope.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <replayrt/replayrt.hpp>

#include <gtest/gtest.h>

namespace {

constexpr std::uint64_t kN = 64;
constexpr std::size_t kBytes = kN * sizeof(float);

// y = factor * x + x through one intermediate, over kN floats.
rrt::CallableBuilder axpy(float factor, rrt_bind_strategy_t bind = RRT_BIND_DEVICE_BUILD,
                          std::uint64_t n = kN) {
  rrt::CallableBuilder b(bind);
  const rrt::Operand x = b.param("x", RRT_DTYPE_F32, {n}, RRT_DIR_IN);
  const rrt::Operand y = b.param("y", RRT_DTYPE_F32, {n}, RRT_DIR_OUT);
  const rrt::Operand scaled = b.intermediate("scaled", RRT_DTYPE_F32, {n});
  b.task("scale", {x, scaled, rrt::Operand::immediate_f32(factor)});
  b.task("add", {scaled, x, y});
  return b;
}

std::vector<float> ramp(std::size_t n, float start) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = start + static_cast<float>(i);
  }
  return values;
}

void expect_axpy(const std::vector<float> &x, const std::vector<float> &y, float factor) {
  ASSERT_EQ(x.size(), y.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(y[i], factor * x[i] + x[i]) << "element " << i;
  }
}

TEST(CppApiTest, AProgramModeRunOfABuiltCallableComputes) {
  rrt::Context ctx;
  ctx.program_init();
  rrt::CallableBuilder callable = axpy(2.0F);
  const rrt::CallableId id = ctx.prepare(callable);
  std::vector<float> x = ramp(kN, 1.0F);
  std::vector<float> y(kN, 0.0F);
  rrt::Args args;
  args.host(x).host(y);
  ctx.run(id, args);
  expect_axpy(x, y, 2.0F);
}

TEST(CppApiTest, APreparedRunLaunchesWaitsAndReportsItsProfile) {
  rrt::ContextOptions options;
  options.profiling = true;
  rrt::Context ctx(options);
  ctx.program_init();
  rrt::CallableBuilder callable = axpy(3.0F);
  const rrt::CallableId id = ctx.prepare(callable);
  std::vector<float> x = ramp(kN, -8.0F);
  std::vector<float> y(kN, 0.0F);
  rrt::Args args;
  args.host(x).host(y);
  rrt::Stream stream = ctx.stream();
  rrt::Run run = ctx.prepare_run(id, args);
  run.launch(stream);
  run.wait();
  EXPECT_EQ(run.profile().size(), callable.task_count());
  run.finalize();
  EXPECT_FALSE(run);
  expect_axpy(x, y, 3.0F);
}

// A context's profile answers for its most recent launch, so the count may change between
// the read that sizes the vector and the read that fills it.
TEST(CppApiTest, ProfileTimingsReadWhileALargerLaunchCompletesAreAllWrittenRecords) {
  std::vector<std::uint32_t> counts = {2, 3, 3};
  std::size_t reads = 0;
  const auto read = [&](rrt_task_timing_t *out, std::uint32_t capacity, std::uint32_t *count) {
    const std::uint32_t tasks = counts.at(reads++);
    for (std::uint32_t task = 0; task < std::min(capacity, tasks); ++task) {
      out[task] = rrt_task_timing_t{100 + task, 200 + task, task, 0};
    }
    *count = tasks;
    return RRT_OK;
  };
  const std::vector<rrt_task_timing_t> timings = rrt::detail::read_task_timings(read);
  ASSERT_EQ(timings.size(), 3U);
  for (std::uint32_t task = 0; task < 3; ++task) {
    EXPECT_EQ(timings[task].task, task);
    EXPECT_EQ(timings[task].end_ns, 200U + task);
  }

  counts = {3, 1};
  reads = 0;
  EXPECT_EQ(rrt::detail::read_task_timings(read).size(), 1U);
}

// A kernel-mode context planned for axpy(factor), prepared, with device buffers x and y.
struct KernelModeAxpy {
  explicit KernelModeAxpy(float factor) : factor(factor), callable(axpy(factor)) {
    ctx.kernel_init(ctx.fit_kernel_config({&callable}));
    id = ctx.prepare(callable);
    args.device(x).device(y);
  }
  void launch() { ctx.launch(id, args, stream); }
  // Replays `graph` on a new ramp in x and checks y.
  void expect_replay_computes(const rrt::Graph &graph, float start) {
    const std::vector<float> in = ramp(kN, start);
    x.upload(in);
    graph.replay(stream);
    stream.synchronize();
    std::vector<float> out(kN, 0.0F);
    y.download(out);
    expect_axpy(in, out, factor);
  }

  float factor;
  rrt::Context ctx;
  rrt::CallableBuilder callable;
  rrt::CallableId id;
  rrt::DeviceBuffer x = ctx.allocate(kBytes);
  rrt::DeviceBuffer y = ctx.allocate(kBytes);
  rrt::Stream stream = ctx.stream();
  rrt::Args args;
};

TEST(CppApiTest, AKernelModeCaptureReplaysNewInputsFromTheSameBuffers) {
  KernelModeAxpy k(4.0F);
  rrt::Graph graph = k.stream.capture([&] { k.launch(); });
  ASSERT_TRUE(graph);
  for (int round = 0; round < 3; ++round) {
    ASSERT_NO_FATAL_FAILURE(k.expect_replay_computes(graph, static_cast<float>(10 * round)));
  }
  EXPECT_EQ(k.ctx.stats().replays, 3U);
}

TEST(CppApiTest, ACapacityRefusalThrowsAnErrorWithItsGrowthPointAndBytes) {
  rrt::Context ctx;
  rrt::CallableBuilder small = axpy(2.0F);
  ctx.kernel_init(ctx.fit_kernel_config({&small}));
  rrt::CallableBuilder large = axpy(2.0F, RRT_BIND_DEVICE_BUILD, 64 * kN);
  try {
    (void)ctx.prepare(large);
    FAIL() << "a callable larger than the plan was prepared";
  } catch (const rrt::Error &error) {
    EXPECT_EQ(error.code(), RRT_ERR_INTERNAL);
    EXPECT_STREQ(error.status_name(), "RRT_ERR_INTERNAL");
    EXPECT_EQ(error.growth_point(), RRT_GROWTH_ARENA_GM_HEAP);
    EXPECT_STREQ(error.growth_point_name(), "RRT_GROWTH_ARENA_GM_HEAP");
    EXPECT_GT(error.requested_bytes(), error.frozen_bytes());
    EXPECT_NE(std::string(error.what()).find("frozen"), std::string::npos) << error.what();
  }
  // The refusal changed nothing: the planned callable still prepares.
  EXPECT_GE(ctx.prepare(small).value, 0);
}

TEST(CppApiTest, AFailingCallThrowsItsCodeAndDetail) {
  rrt::Context ctx;
  try {
    (void)ctx.kernel("no_such_kernel");
    FAIL() << "an unknown kernel name was found";
  } catch (const rrt::Error &error) {
    EXPECT_EQ(error.code(), RRT_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(error.growth_point(), RRT_GROWTH_NONE);
    EXPECT_STREQ(error.growth_point_name(), "RRT_GROWTH_NONE");
    EXPECT_NE(std::string(error.what()).find("no_such_kernel"), std::string::npos) << error.what();
  }
  // A launch in a context that has no mode yet.
  rrt::Stream stream = ctx.stream();
  rrt::Args args;
  EXPECT_THROW(ctx.launch(rrt::CallableId{0}, args, stream), rrt::Error);
}

TEST(CppApiTest, AnErrorCarriesTheWholeMessagePastTheDetailsFixedField) {
  rrt::Context ctx;
  const std::string name(400, 'k');
  try {
    (void)ctx.kernel(name);
    FAIL() << "an unknown kernel name was found";
  } catch (const rrt::Error &error) {
    const std::string expected = "rrt_kernel_lookup: no kernel named '" + name + "'";
    EXPECT_EQ(std::string(error.what()), expected);
    EXPECT_EQ(std::string(error.detail().message),
              expected.substr(0, sizeof error.detail().message - 1));
  }
}

TEST(CppApiTest, ACaptureWhoseBodyThrowsIsEndedAndTheStreamCapturesAgain) {
  KernelModeAxpy k(2.0F);
  EXPECT_THROW(k.stream.capture([&] {
    k.launch();
    throw std::runtime_error("the body gave up");
  }),
               std::runtime_error);
  // The capture is over: the stream synchronizes (refused while capturing) and captures anew.
  k.stream.synchronize();
  rrt::Graph graph = k.stream.capture([&] { k.launch(); });
  k.expect_replay_computes(graph, 5.0F);
}

TEST(CppApiTest, BeginAndEndCaptureMakeAGraphOfWhatWasEnqueuedBetweenThem) {
  KernelModeAxpy k(3.0F);
  rrt::Event done = k.ctx.event();
  EXPECT_FALSE(k.stream.capturing());
  k.stream.begin_capture();
  EXPECT_TRUE(k.stream.capturing());
  k.launch();
  k.stream.record(done);
  rrt::Graph graph = k.stream.end_capture();
  EXPECT_FALSE(k.stream.capturing());
  ASSERT_TRUE(graph);
  done = rrt::Event();  // the graph holds the event its capture recorded
  ASSERT_NO_FATAL_FAILURE(k.expect_replay_computes(graph, 2.0F));
  ASSERT_NO_FATAL_FAILURE(k.expect_replay_computes(graph, -6.0F));
  EXPECT_EQ(k.ctx.stats().replays, 2U);
}

TEST(CppApiTest, DiscardCaptureEndsTheOwnersCaptureAndOtherwiseDoesNothing) {
  KernelModeAxpy k(2.0F);
  k.stream.discard_capture();
  k.stream.synchronize();
  k.stream.begin_capture();
  k.launch();
  k.stream.discard_capture();
  // The capture is over (synchronize is refused while capturing), and nothing is left to end.
  k.stream.synchronize();
  try {
    (void)k.stream.end_capture();
    FAIL() << "a capture that was discarded ended with a graph";
  } catch (const rrt::Error &error) {
    EXPECT_EQ(error.code(), RRT_ERR_INVALID_STATE) << error.what();
  }
  rrt::Graph graph = k.stream.capture([&] { k.launch(); });
  ASSERT_NO_FATAL_FAILURE(k.expect_replay_computes(graph, 1.0F));
}

TEST(CppApiTest, AnErrorInsideTheBodyPropagatesWithItsCodeAndEndsTheCapture) {
  rrt::Context ctx;
  rrt::Stream stream = ctx.stream();
  try {
    (void)stream.capture([&] { (void)stream.capture([] {}); });
    FAIL() << "a capture began inside a capture";
  } catch (const rrt::Error &error) {
    EXPECT_EQ(error.code(), RRT_ERR_INVALID_STATE) << error.what();
  }
  stream.synchronize();
}

TEST(CppApiTest, OwnersMayBeDestroyedInAnyOrder) {
  rrt::Stream stream;
  rrt::Event event;
  rrt::Graph graph;
  rrt::DeviceBuffer buffer;
  {
    rrt::Context ctx;
    ctx.program_init();
    stream = ctx.stream();
    event = ctx.event();
    buffer = ctx.allocate(kBytes);
    graph = stream.capture([&] { stream.record(event); });
  }
  // The context owner is gone; its handles still work, and the context goes with the last.
  graph.replay(stream);
  stream.synchronize();
  EXPECT_TRUE(event.query());
  event = rrt::Event();  // the graph still holds the event it records
  graph.replay(stream);
  stream.synchronize();
  graph = rrt::Graph();
  buffer.free();
  EXPECT_FALSE(buffer);
  stream.destroy();
  EXPECT_FALSE(stream);
}

TEST(CppApiTest, ShapesAndOperandsHeldInVectorsBuildTheSameCallableAsBracedLists) {
  rrt::CallableBuilder b;
  const rrt::CallableBuilder::Shape shape{kN};
  const rrt::Operand x = b.param("x", RRT_DTYPE_F32, shape, RRT_DIR_IN);
  const rrt::Operand y = b.param("y", RRT_DTYPE_F32, shape, RRT_DIR_OUT);
  const rrt::Operand scaled = b.intermediate("scaled", RRT_DTYPE_F32, shape);
  std::vector<rrt::Operand> operands{x, scaled};
  operands.push_back(rrt::Operand::immediate_f32(5.0F));
  b.task("scale", operands);
  b.task("add", std::vector<rrt::Operand>{scaled, x, y});
  rrt::Context ctx;
  ctx.program_init();
  rrt::CallableBuilder braced = axpy(5.0F);
  const rrt_callable_desc_t &from_vectors = b.desc(ctx);
  const rrt_callable_desc_t &from_lists = braced.desc(ctx);
  ASSERT_EQ(from_vectors.num_params, from_lists.num_params);
  ASSERT_EQ(from_vectors.num_tasks, from_lists.num_tasks);
  for (std::uint32_t p = 0; p < from_lists.num_params; ++p) {
    EXPECT_EQ(from_vectors.params[p].ndim, from_lists.params[p].ndim);
    EXPECT_EQ(from_vectors.params[p].shape[0], from_lists.params[p].shape[0]);
    EXPECT_EQ(from_vectors.params[p].direction, from_lists.params[p].direction);
  }
  for (std::uint32_t t = 0; t < from_lists.num_tasks; ++t) {
    const rrt_task_desc_t &got = from_vectors.tasks[t];
    const rrt_task_desc_t &want = from_lists.tasks[t];
    EXPECT_EQ(got.kernel_id, want.kernel_id);
    ASSERT_EQ(got.num_operands, want.num_operands);
    for (std::uint32_t o = 0; o < want.num_operands; ++o) {
      EXPECT_EQ(got.operands[o].kind, want.operands[o].kind) << "task " << t << " operand " << o;
      EXPECT_EQ(got.operands[o].index, want.operands[o].index) << "task " << t << " operand " << o;
    }
  }
  const rrt::CallableId id = ctx.prepare(b);
  std::vector<float> in = ramp(kN, 3.0F);
  std::vector<float> out(kN, 0.0F);
  rrt::Args args;
  args.host(in).host(out);
  ctx.run(id, args);
  expect_axpy(in, out, 5.0F);
}

TEST(CppApiTest, TheBuilderFindsOperandsByNameAndRefusesMistakes) {
  rrt::CallableBuilder b;
  const rrt::Operand x = b.param("x", RRT_DTYPE_F32, {4, 8}, RRT_DIR_IN);
  EXPECT_EQ(b["x"].raw().kind, x.raw().kind);
  EXPECT_EQ(b["x"].raw().index, x.raw().index);
  const rrt::Operand row = b.view("row", x, {8}, 8);
  EXPECT_EQ(b["row"].raw().kind, RRT_OPERAND_VIEW);
  const auto expect_refused = [](const auto &mistake, const char *what) {
    try {
      mistake();
      ADD_FAILURE() << "the builder took " << what;
    } catch (const rrt::Error &error) {
      EXPECT_EQ(error.code(), RRT_ERR_INVALID_ARGUMENT) << what;
      EXPECT_EQ(error.growth_point(), RRT_GROWTH_NONE) << what;
      EXPECT_NE(std::string(error.what()).find("rrt::CallableBuilder"), std::string::npos);
      EXPECT_STREQ(error.detail().message, error.what());
    }
  };
  expect_refused([&] { (void)b["missing"]; }, "an undeclared name");
  expect_refused([&] { b.param("x", RRT_DTYPE_F32, {4}, RRT_DIR_IN); }, "a duplicate name");
  expect_refused([&] { b.intermediate("empty", RRT_DTYPE_F32, {}); }, "an empty shape");
  expect_refused([&] { b.view("bad", row, {2}, 0); }, "a view over a view");
  expect_refused([&] { b.view("bad", x, {2}, 0, x, 1, 1); }, "a tensor as an offset value");
}

// A refused declaration adds nothing: the operands declared after it keep their indices.
TEST(CppApiTest, ARefusedDeclarationLeavesTheBuilderAsItWas) {
  rrt::CallableBuilder b;
  const rrt::Operand x = b.param("x", RRT_DTYPE_F32, {4}, RRT_DIR_IN);
  const rrt::Operand s = b.scalar("s");
  (void)b.intermediate("t", RRT_DTYPE_F32, {4});
  (void)b.device_value("v", x, 0);
  (void)b.view("w", x, {2}, 0);
  EXPECT_THROW(b.param("x", RRT_DTYPE_F32, {4}, RRT_DIR_IN), rrt::Error);
  EXPECT_THROW(b.scalar("s"), rrt::Error);
  EXPECT_THROW(b.scalar("s", RRT_DTYPE_F32), rrt::Error);
  EXPECT_THROW(b.scalar("half", RRT_DTYPE_F16), rrt::Error);
  EXPECT_THROW(b.intermediate("x", RRT_DTYPE_F32, {4}), rrt::Error);
  EXPECT_THROW(b.device_value("s", x, 1), rrt::Error);
  EXPECT_THROW(b.view("t", x, {2}, 2), rrt::Error);
  EXPECT_EQ(b.param("y", RRT_DTYPE_F32, {4}, RRT_DIR_OUT).raw().index, x.raw().index + 1);
  EXPECT_EQ(b.scalar("s2", RRT_DTYPE_I64).raw().index, s.raw().index + 1);
  EXPECT_EQ(b.scalar_dtypes(),
            (std::vector<std::optional<rrt_dtype_t>>{std::nullopt, RRT_DTYPE_I64}));
  EXPECT_EQ(b.intermediate("t2", RRT_DTYPE_F32, {4}).raw().index, 1u);
  EXPECT_EQ(b.device_value("v2", x, 1).raw().index, 1u);
  EXPECT_EQ(b.view("w2", x, {2}, 2).raw().index, 1u);
  EXPECT_EQ(b.param_dtypes().size(), 2u);
}

// An empty, freed or moved-from owner refuses a call with rrt::Error (the C ABI's
// RRT_ERR_INVALID_ARGUMENT for a null handle), never a crash.
TEST(CppApiTest, AnEmptyOwnerRefusesCallsWithAnError) {
  const auto expect_refused = [](const auto &call, const char *what) {
    try {
      call();
      ADD_FAILURE() << what << " went through";
    } catch (const rrt::Error &error) {
      EXPECT_EQ(error.code(), RRT_ERR_INVALID_ARGUMENT) << what;
    }
  };
  std::vector<float> host(4, 1.0F);
  rrt::Context ctx;
  ctx.program_init();
  rrt::DeviceBuffer empty;
  expect_refused([&] { empty.upload(host); }, "an upload into an empty buffer");
  expect_refused([&] { empty.download(host); }, "a download from an empty buffer");
  rrt::DeviceBuffer freed = ctx.allocate(16);
  freed.free();
  expect_refused([&] { freed.upload(host); }, "an upload into a freed buffer");
  rrt::Stream stream = ctx.stream();
  rrt::Stream taken = std::move(stream);
  rrt::DeviceBuffer buffer = ctx.allocate(16);
  // NOLINTBEGIN(bugprone-use-after-move): the moved-from owners are what the test calls
  expect_refused([&] { stream.upload(buffer, host.data(), 16); },
                 "an upload on a moved-from stream");
  expect_refused([&] { stream.download(host.data(), buffer, 16); },
                 "a download on a moved-from stream");
  rrt::Context moved_to = std::move(ctx);
  expect_refused([&] { (void)ctx.stats(); }, "stats of a moved-from context");
  // NOLINTEND(bugprone-use-after-move)
  taken.synchronize();
}

TEST(CppApiTest, FittingANullCallableThrowsInsteadOfDereferencingIt) {
  rrt::Context ctx;
  rrt::CallableBuilder callable = axpy(2.0F);
  try {
    (void)ctx.fit_kernel_config({&callable, nullptr});
    ADD_FAILURE() << "a null callable was fitted";
  } catch (const rrt::Error &error) {
    EXPECT_EQ(error.code(), RRT_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(error.what(), "Context::fit_kernel_config: callables[1] is null");
  }
  ctx.kernel_init(ctx.fit_kernel_config({&callable}));
}

// Callable ids are per context: the same id names another callable, or none, in another one.
TEST(CppApiTest, ACallableAnotherContextPreparedIsRefusedAndNothingRuns) {
  rrt::Context first;
  rrt::Context second;
  first.program_init();
  second.program_init();
  rrt::CallableBuilder times_three = axpy(2.0F);
  rrt::CallableBuilder times_four = axpy(3.0F);
  (void)first.prepare(times_three);
  const rrt::CallableId foreign = second.prepare(times_four);  // the same id, in `second`
  std::vector<float> x = ramp(kN, 1.0F);
  std::vector<float> y(kN, 0.0F);
  rrt::Args args;
  args.host(x).host(y);
  rrt::Stream stream = first.stream();
  const std::vector<std::pair<const char *, std::function<void()>>> calls = {
      {"Context::run", [&] { first.run(foreign, args); }},
      {"Context::launch", [&] { first.launch(foreign, args, stream); }},
      {"Context::prepare_run", [&] { (void)first.prepare_run(foreign, args); }},
  };
  for (const auto &[name, call] : calls) {
    try {
      call();
      ADD_FAILURE() << name << " took another context's callable";
    } catch (const rrt::Error &error) {
      EXPECT_EQ(error.code(), RRT_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(std::string(error.what()), std::string(name) +
                                               ": the callable was prepared by another context "
                                               "(callable ids are per context)");
    }
  }
  stream.synchronize();
  EXPECT_EQ(y, std::vector<float>(kN, 0.0F));
  second.run(foreign, args);
  expect_axpy(x, y, 3.0F);
}

TEST(CppApiTest, AFinalizedRunRefusesEveryCallSayingItWasFinalized) {
  rrt::Context ctx;
  ctx.program_init();
  rrt::CallableBuilder callable = axpy(2.0F);
  const rrt::CallableId id = ctx.prepare(callable);
  std::vector<float> x = ramp(kN, 0.0F);
  std::vector<float> y(kN, 0.0F);
  rrt::Args args;
  args.host(x).host(y);
  rrt::Run run = ctx.prepare_run(id, args);
  run.launch();
  run.finalize();
  const rrt::Stream stream = ctx.stream();
  const auto expect_refused = [](const auto &call, const char *name) {
    try {
      call();
      ADD_FAILURE() << name << " of a finalized run went through";
    } catch (const rrt::Error &error) {
      EXPECT_EQ(error.code(), RRT_ERR_INVALID_ARGUMENT) << name;
      EXPECT_EQ(
          std::string(error.what()),
          std::string("Run::") + name + ": the run was finalized or moved from (or is empty)");
      EXPECT_EQ(std::string(error.detail().message), error.what()) << name;
    }
  };
  expect_refused([&] { run.launch(); }, "launch");
  expect_refused([&] { run.launch(stream); }, "launch");
  expect_refused([&] { run.wait(); }, "wait");
  expect_refused([&] { (void)run.profile(); }, "profile");
  run.finalize();
  expect_axpy(x, y, 2.0F);
}

TEST(CppApiTest, AViewWithADeviceValueOffsetReadsTheRowTheValueNames) {
  constexpr std::uint64_t kRows = 4;
  constexpr std::uint64_t kCols = 16;
  rrt::Context ctx;
  ctx.program_init();
  rrt::CallableBuilder b;
  const rrt::Operand table = b.param("table", RRT_DTYPE_F32, {kRows, kCols}, RRT_DIR_IN);
  const rrt::Operand which = b.param("which", RRT_DTYPE_I32, {1}, RRT_DIR_IN);
  const rrt::Operand out = b.param("out", RRT_DTYPE_F32, {kCols}, RRT_DIR_OUT);
  const rrt::Operand row_index = b.device_value("row_index", which, 0);
  const rrt::Operand row = b.view("row", table, {kCols}, 0, row_index, kCols, kRows - 1);
  b.task("copy", {row, out});
  const rrt::CallableId id = ctx.prepare(b);
  std::vector<float> values = ramp(kRows * kCols, 0.0F);
  for (std::int32_t r = 0; r < static_cast<std::int32_t>(kRows); ++r) {
    std::vector<std::int32_t> index{r};
    std::vector<float> result(kCols, -1.0F);
    rrt::Args args;
    args.host(values).host(index).host(result);
    ctx.run(id, args);
    for (std::uint64_t c = 0; c < kCols; ++c) {
      ASSERT_EQ(result[c], values[static_cast<std::size_t>(r) * kCols + c]) << "row " << r;
    }
  }
}

}  // namespace
