// White-box tests of the engine over a counted (and fault-injectable) simulated device.
#include "runtime/engine.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "platform/sim/sim_device.h"
#include "platform/sim/sim_execution_fixture.h"
#include "support/callable_builder.h"
#include "support/engine_inspector.h"
#include "support/fault_injecting_device.h"
#include "support/fault_injecting_stream.h"
#include "support/forwarding_device.h"

namespace replayrt {
namespace {

using testing::CallableBuilder;
using testing::f32;
using testing::imm_f32;
using testing::inter;
using testing::param;

// What kernel init receives, without profiling.
struct KernelConfig {
  CapacityPlan capacity;
  std::uint64_t context_generation = 0;
};

Status kernel_init(Engine &engine, const KernelConfig &config) {
  return engine.kernel_init(config.capacity, config.context_generation, 0);
}

// Prepares out = in * 2 + in over n floats, through one intermediate.
std::int32_t prepare_doubling(Engine &engine, std::uint64_t n) {
  CallableBuilder b;
  b.param(f32({n})).param(f32({n}, RRT_DIR_OUT)).intermediate(f32({n}));
  b.task(testing::kScale, {param(0), inter(0), imm_f32(2.0F)});
  b.task(testing::kAdd, {inter(0), param(0), param(1)});
  std::int32_t id = -1;
  EXPECT_TRUE(engine.prepare_callable(b.spec(), &id).is_ok());
  return id;
}

// Owns a SimDevice and hands the engine a fault-injecting view of it, so tests can read the
// backend's own counters and make allocations fail.
class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto faults = std::make_unique<FaultInjectingDevice>(sim_);
    faults_ = faults.get();
    ASSERT_TRUE(Engine::create(std::move(faults), 1, generations_, &engine_).is_ok());
  }

  void TearDown() override { engine_.reset(); }

  std::int32_t prepare_doubling(std::uint64_t n) { return replayrt::prepare_doubling(*engine_, n); }

  KernelConfig plan_for(std::uint64_t n, std::uint64_t staging) {
    KernelConfig config;
    config.capacity.gm_heap_bytes = n * 4;
    config.capacity.gm_sm_bytes = 1024;
    config.capacity.runtime_pool_bytes = 4096;
    config.capacity.retained_staging_bytes = staging;
    return config;
  }

  sim::SimDevice sim_;
  FaultInjectingDevice *faults_ = nullptr;
  GenerationRegistry generations_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineTest, KernelLaunchesAndReplaysMakeNoDeviceAllocationOrFree) {
  ASSERT_TRUE(kernel_init(*engine_, plan_for(256, 2048)).is_ok());
  const std::int32_t id = prepare_doubling(256);
  std::vector<float> in(256, 1.5F);
  std::vector<float> out(256, 0.0F);
  void *device_out = sim_.allocate(1024);
  const std::vector<TensorArg> tensors = {{in.data(), 1024, RRT_SPACE_HOST},
                                          {device_out, 1024, RRT_SPACE_DEVICE}};
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(sim_.create_stream(&stream).is_ok());
  const MemoryCounters before = sim_.memory_counters();
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(engine_->kernel_launch(id, RunArgsView{tensors, {}}, *stream).is_ok());
  }
  // The launches read `in` when their copies run; it is rewritten only once they are done.
  ASSERT_TRUE(stream->synchronize().is_ok());
  ASSERT_TRUE(stream->begin_capture().is_ok());
  ASSERT_TRUE(engine_->kernel_launch(id, RunArgsView{tensors, {}}, *stream).is_ok());
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(stream->end_capture(&graph).is_ok());
  for (int i = 0; i < 50; ++i) {
    in[0] = static_cast<float>(i);
    ASSERT_TRUE(engine_->replay(*graph, *stream).is_ok());
    ASSERT_TRUE(stream->synchronize().is_ok());
    ASSERT_TRUE(sim_.copy_device_to_host(out.data(), device_out, 1024).is_ok());
    ASSERT_FLOAT_EQ(out[0], 3.0F * static_cast<float>(i));
    ASSERT_FLOAT_EQ(out[1], 4.5F);
  }
  const MemoryCounters after = sim_.memory_counters();
  EXPECT_EQ(after.allocation_calls, before.allocation_calls);
  EXPECT_EQ(after.free_calls, before.free_calls);
  EXPECT_EQ(EngineInspector::context(*engine_).counters().launches.load(), 51u);
  EXPECT_EQ(EngineInspector::context(*engine_).counters().replays.load(), 50u);
  graph.reset();
  stream.reset();
  EXPECT_TRUE(sim_.free(device_out).is_ok());
}

// A launch on another thread that arrives between the end of a stream's ordered work and the
// start of its capture (begin_capture's `prepare` runs there) waits for the capture to begin,
// so it is captured: it neither runs now nor makes the capturing stream the last ordered one.
TEST_F(EngineTest, ALaunchArrivingWhileACaptureBeginsIsCapturedNotRun) {
  ASSERT_TRUE(kernel_init(*engine_, plan_for(256, 2048)).is_ok());
  const std::int32_t id = prepare_doubling(256);
  void *device_in = sim_.allocate(1024);
  void *device_out = sim_.allocate(1024);
  const std::vector<float> ones(256, 1.0F);
  ASSERT_TRUE(sim_.copy_host_to_device(device_in, ones.data(), 1024).is_ok());
  const std::vector<float> zeros(256, 0.0F);
  ASSERT_TRUE(sim_.copy_host_to_device(device_out, zeros.data(), 1024).is_ok());
  const std::vector<TensorArg> tensors = {{device_in, 1024, RRT_SPACE_DEVICE},
                                          {device_out, 1024, RRT_SPACE_DEVICE}};
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(sim_.create_stream(&stream).is_ok());

  std::future<Status> launched;
  const auto launch_meanwhile = [&] {
    launched = std::async(std::launch::async, [&] {
      return engine_->kernel_launch(id, RunArgsView{tensors, {}}, *stream);
    });
    // Long enough for a launch that is not held back to have been enqueued.
    (void)launched.wait_for(std::chrono::milliseconds(200));
  };
  ASSERT_TRUE(engine_->begin_capture(*stream, launch_meanwhile).is_ok());
  ASSERT_TRUE(launched.get().is_ok());
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(stream->end_capture(&graph).is_ok());
  ASSERT_TRUE(stream->synchronize().is_ok());
  std::vector<float> out(256, -1.0F);
  ASSERT_TRUE(sim_.copy_device_to_host(out.data(), device_out, 1024).is_ok());
  EXPECT_FLOAT_EQ(out[0], 0.0F) << "the launch ran before the capture began";
  ASSERT_TRUE(engine_->replay(*graph, *stream).is_ok());
  ASSERT_TRUE(stream->synchronize().is_ok());
  ASSERT_TRUE(sim_.copy_device_to_host(out.data(), device_out, 1024).is_ok());
  EXPECT_FLOAT_EQ(out[0], 3.0F) << "the capture does not hold the launch";
  graph.reset();
  stream.reset();
  EXPECT_TRUE(sim_.free(device_in).is_ok());
  EXPECT_TRUE(sim_.free(device_out).is_ok());
}

// A replay decides whether its stream captures under the admission lock: a capture that
// begins on another thread just before the replay takes the lock would otherwise receive the
// replay's ordering wait, and the replay, refused there (graphs do not nest), would leave it in
// that capture.
TEST_F(EngineTest, AReplayRacingABeginCaptureLeavesNothingInTheCapture) {
  ASSERT_TRUE(kernel_init(*engine_, plan_for(256, 2048)).is_ok());
  const std::int32_t id = prepare_doubling(256);
  void *device_in = sim_.allocate(1024);
  void *device_out = sim_.allocate(1024);
  const std::vector<TensorArg> tensors = {{device_in, 1024, RRT_SPACE_DEVICE},
                                          {device_out, 1024, RRT_SPACE_DEVICE}};
  const RunArgsView args{tensors, {}};
  std::unique_ptr<Stream> other;
  ASSERT_TRUE(sim_.create_stream(&other).is_ok());
  std::unique_ptr<Stream> inner;
  ASSERT_TRUE(sim_.create_stream(&inner).is_ok());
  FaultInjectingStream target(std::move(inner), std::make_shared<EnqueueFaults>());
  ASSERT_TRUE(engine_->begin_capture(*other).is_ok());
  ASSERT_TRUE(engine_->kernel_launch(id, args, *other).is_ok());
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(other->end_capture(&graph).is_ok());
  ASSERT_TRUE(engine_->kernel_launch(id, args, *other).is_ok());  // `other` is the last stream

  std::future<Status> began;
  target.on_next_capture_check([&] {
    began = std::async(std::launch::async, [&] { return engine_->begin_capture(target); });
    // Long enough for a begin that is not held back to have begun the capture.
    (void)began.wait_for(std::chrono::milliseconds(200));
  });
  const Status replayed = engine_->replay(*graph, target);
  ASSERT_TRUE(began.valid());
  ASSERT_TRUE(began.get().is_ok());
  std::unique_ptr<Graph> captured;
  ASSERT_TRUE(target.end_capture(&captured).is_ok());
  EXPECT_EQ(captured->operation_count(), 0U)
      << "the replay (" << (replayed.is_ok() ? "OK" : replayed.message())
      << ") left its ordering wait in the capture";
  ASSERT_TRUE(target.synchronize().is_ok());
  ASSERT_TRUE(other->synchronize().is_ok());
  engine_->before_stream_destroy(target);
  engine_->before_stream_destroy(*other);
  EXPECT_TRUE(sim_.free(device_in).is_ok());
  EXPECT_TRUE(sim_.free(device_out).is_ok());
}

// A launch that finds its stream capturing, under the admission lock, must land wholly in the
// capture: a capture ending on another thread in between would otherwise receive part of it or
// none, the rest running live and unordered with the other streams' launches.
TEST_F(EngineTest, ALaunchRacingAnEndCaptureIsCapturedWhole) {
  ASSERT_TRUE(kernel_init(*engine_, plan_for(256, 2048)).is_ok());
  const std::int32_t id = prepare_doubling(256);
  void *device_in = sim_.allocate(1024);
  void *device_out = sim_.allocate(1024);
  const std::vector<float> ones(256, 1.0F);
  ASSERT_TRUE(sim_.copy_host_to_device(device_in, ones.data(), 1024).is_ok());
  const std::vector<float> zeros(256, 0.0F);
  ASSERT_TRUE(sim_.copy_host_to_device(device_out, zeros.data(), 1024).is_ok());
  const std::vector<TensorArg> tensors = {{device_in, 1024, RRT_SPACE_DEVICE},
                                          {device_out, 1024, RRT_SPACE_DEVICE}};
  std::unique_ptr<Stream> inner;
  ASSERT_TRUE(sim_.create_stream(&inner).is_ok());
  FaultInjectingStream target(std::move(inner), std::make_shared<EnqueueFaults>());
  ASSERT_TRUE(engine_->begin_capture(target).is_ok());

  std::unique_ptr<Graph> graph;
  std::uint32_t profile_tasks = 0;
  std::future<Status> ended;
  target.on_next_capture_check([&] {
    ended = std::async(std::launch::async,
                       [&] { return engine_->end_capture(target, &graph, &profile_tasks); });
    // Long enough for an end that is not held back to have ended the capture.
    (void)ended.wait_for(std::chrono::milliseconds(200));
  });
  ASSERT_TRUE(engine_->kernel_launch(id, RunArgsView{tensors, {}}, target).is_ok());
  ASSERT_TRUE(ended.valid());
  ASSERT_TRUE(ended.get().is_ok());
  ASSERT_TRUE(target.synchronize().is_ok());
  std::vector<float> out(256, -1.0F);
  ASSERT_TRUE(sim_.copy_device_to_host(out.data(), device_out, 1024).is_ok());
  EXPECT_FLOAT_EQ(out[0], 0.0F) << "the launch ran outside the capture";
  ASSERT_TRUE(engine_->replay(*graph, target).is_ok());
  ASSERT_TRUE(target.synchronize().is_ok());
  ASSERT_TRUE(sim_.copy_device_to_host(out.data(), device_out, 1024).is_ok());
  EXPECT_FLOAT_EQ(out[0], 3.0F) << "the graph does not hold the launch";
  graph.reset();
  engine_->before_stream_destroy(target);
  EXPECT_TRUE(sim_.free(device_in).is_ok());
  EXPECT_TRUE(sim_.free(device_out).is_ok());
}

TEST_F(EngineTest, LaunchNeedingMoreStagingThanPlannedIsRefusedAndChangesNothing) {
  ASSERT_TRUE(kernel_init(*engine_, plan_for(256, 1024)).is_ok());
  const std::int32_t id = prepare_doubling(256);
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(sim_.create_stream(&stream).is_ok());
  std::vector<float> in(256, 1.0F);
  std::vector<float> out(256, 0.0F);
  void *device_in = sim_.allocate(1024);
  ASSERT_TRUE(sim_.copy_host_to_device(device_in, in.data(), 1024).is_ok());
  // One HOST tensor fits the plan; capture that.
  const std::vector<TensorArg> fits = {{device_in, 1024, RRT_SPACE_DEVICE},
                                       {out.data(), 1024, RRT_SPACE_HOST}};
  ASSERT_TRUE(stream->begin_capture().is_ok());
  ASSERT_TRUE(engine_->kernel_launch(id, RunArgsView{fits, {}}, *stream).is_ok());
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(stream->end_capture(&graph).is_ok());

  // Two HOST tensors need 2 KiB of staging: refused before anything moves.
  const std::vector<TensorArg> too_much = {{in.data(), 1024, RRT_SPACE_HOST},
                                           {out.data(), 1024, RRT_SPACE_HOST}};
  const MemoryCounters before = sim_.memory_counters();
  const RegionStats staging =
      EngineInspector::context(*engine_).region_stats(GrowthPoint::kRetainedStaging);
  const Status refused = engine_->kernel_launch(id, RunArgsView{too_much, {}}, *stream);
  EXPECT_EQ(refused.code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kRetainedStaging);
  EXPECT_EQ(sim_.memory_counters().allocation_calls, before.allocation_calls);
  EXPECT_EQ(sim_.memory_counters().free_calls, before.free_calls);
  EXPECT_EQ(EngineInspector::context(*engine_).region_stats(GrowthPoint::kRetainedStaging).capacity,
            staging.capacity);

  // The held graph and in-capacity launches keep working from the same addresses.
  ASSERT_TRUE(engine_->replay(*graph, *stream).is_ok());
  ASSERT_TRUE(stream->synchronize().is_ok());
  EXPECT_FLOAT_EQ(out[7], 3.0F);
  std::fill(out.begin(), out.end(), 0.0F);
  ASSERT_TRUE(engine_->kernel_launch(id, RunArgsView{fits, {}}, *stream).is_ok());
  ASSERT_TRUE(stream->synchronize().is_ok());
  EXPECT_FLOAT_EQ(out[7], 3.0F);
  graph.reset();
  stream.reset();
  EXPECT_TRUE(sim_.free(device_in).is_ok());
}

TEST_F(EngineTest, StagingThatWasNeverPlannedIsALaunchAllocationRefusal) {
  ASSERT_TRUE(kernel_init(*engine_, plan_for(256, 0)).is_ok());
  const std::int32_t id = prepare_doubling(256);
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(sim_.create_stream(&stream).is_ok());
  std::vector<float> in(256, 1.0F);
  std::vector<float> out(256, 0.0F);
  const std::vector<TensorArg> tensors = {{in.data(), 1024, RRT_SPACE_HOST},
                                          {out.data(), 1024, RRT_SPACE_HOST}};
  const std::uint64_t allocations = sim_.memory_counters().allocation_calls;
  const Status refused = engine_->kernel_launch(id, RunArgsView{tensors, {}}, *stream);
  EXPECT_EQ(refused.growth_point(), GrowthPoint::kLaunchAllocation);
  EXPECT_EQ(sim_.memory_counters().allocation_calls, allocations);
  EXPECT_EQ(
      EngineInspector::context(*engine_).counters().refusals[RRT_GROWTH_LAUNCH_ALLOCATION].load(),
      1u);
}

TEST_F(EngineTest, AFailedKernelInitLeavesNothingAllocatedAndTheEngineReusable) {
  const KernelConfig config = plan_for(256, 1024);
  for (std::uint64_t n = 1; n <= 5; ++n) {
    SCOPED_TRACE(n);
    faults_->fail_nth_allocation(n);
    const Status failed = kernel_init(*engine_, config);
    faults_->clear_faults();
    if (failed.is_ok()) {
      EXPECT_EQ(n, 5u) << "the plan commits four regions";
      break;
    }
    EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY);
    EXPECT_FALSE(EngineInspector::context(*engine_).latch().is_latched());
    EXPECT_EQ(EngineInspector::context(*engine_).counters().live_bytes.load(), 0u);
    EXPECT_EQ(sim_.memory_counters().live_bytes, 0u);
    EXPECT_FALSE(engine_->is_ready());
  }
  EXPECT_TRUE(EngineInspector::context(*engine_).latch().is_kernel());
  EXPECT_TRUE(engine_->is_ready());
  EXPECT_GE(prepare_doubling(256), 0);
}

TEST_F(EngineTest, ARejectedKernelInitLeavesAReusableContext) {
  KernelConfig config = plan_for(256, 1024);
  config.context_generation = 1000;
  ASSERT_TRUE(kernel_init(*engine_, config).is_ok());
  // The same generation again, on a fresh engine of the same registry: rejected before
  // latching.
  std::unique_ptr<Engine> other;
  ASSERT_TRUE(Engine::create(std::make_unique<sim::SimDevice>(), 1, generations_, &other).is_ok());
  EXPECT_EQ(kernel_init(*other, config).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_FALSE(other->is_latched());
  EXPECT_TRUE(other->program_init().is_ok());
}

TEST_F(EngineTest, ProgramRunsGrowBuffersAndHitTheImageCache) {
  ASSERT_TRUE(engine_->program_init().is_ok());
  const std::int32_t small = prepare_doubling(256);
  const std::int32_t large = prepare_doubling(4096);
  std::vector<float> in(4096, 2.0F);
  std::vector<float> out(4096, 0.0F);
  auto run = [&](std::int32_t id, std::uint64_t n) {
    const std::vector<TensorArg> tensors = {{in.data(), n * 4, RRT_SPACE_HOST},
                                            {out.data(), n * 4, RRT_SPACE_HOST}};
    std::unique_ptr<ProgramRun> program_run;
    Status status = engine_->run_prepare(id, RunArgsView{tensors, {}}, &program_run);
    if (status.is_ok()) {
      status = engine_->run_launch(*program_run, nullptr);
    }
    if (status.is_ok()) {
      status = engine_->run_wait(*program_run);
    }
    if (program_run) {
      (void)engine_->run_finalize(*program_run);
    }
    return status;
  };
  ASSERT_TRUE(run(small, 256).is_ok());
  EXPECT_FLOAT_EQ(out[255], 6.0F);
  const std::uint64_t after_first = sim_.memory_counters().allocation_calls;
  ASSERT_TRUE(run(small, 256).is_ok());
  EXPECT_EQ(sim_.memory_counters().allocation_calls, after_first);
  ASSERT_TRUE(run(large, 4096).is_ok());
  EXPECT_FLOAT_EQ(out[4095], 6.0F);
  EXPECT_GT(sim_.memory_counters().allocation_calls, after_first);
  EXPECT_GT(EngineInspector::context(*engine_).region_stats(GrowthPoint::kArenaGmHeap).base_changes,
            0u);
}

TEST_F(EngineTest, TwoPipelineSlotsHoldRunsAtOnceAndAThirdPrepareIsRefused) {
  ASSERT_TRUE(engine_->program_init().is_ok());
  const std::int32_t id = prepare_doubling(64);
  std::vector<float> in_a(64, 1.0F);
  std::vector<float> in_b(64, 5.0F);
  std::vector<float> out_a(64, 0.0F);
  std::vector<float> out_b(64, 0.0F);
  const std::vector<TensorArg> a = {{in_a.data(), 256, RRT_SPACE_HOST},
                                    {out_a.data(), 256, RRT_SPACE_HOST}};
  const std::vector<TensorArg> b = {{in_b.data(), 256, RRT_SPACE_HOST},
                                    {out_b.data(), 256, RRT_SPACE_HOST}};
  std::unique_ptr<ProgramRun> first;
  std::unique_ptr<ProgramRun> second;
  std::unique_ptr<ProgramRun> third;
  ASSERT_TRUE(engine_->run_prepare(id, RunArgsView{a, {}}, &first).is_ok());
  ASSERT_TRUE(engine_->run_launch(*first, nullptr).is_ok());
  ASSERT_TRUE(engine_->run_prepare(id, RunArgsView{b, {}}, &second).is_ok());
  EXPECT_NE(first->slot(), second->slot());
  EXPECT_EQ(engine_->run_prepare(id, RunArgsView{a, {}}, &third).code(), RRT_ERR_INVALID_STATE);
  ASSERT_TRUE(engine_->run_launch(*second, nullptr).is_ok());
  ASSERT_TRUE(engine_->run_finalize(*first).is_ok());
  ASSERT_TRUE(engine_->run_finalize(*second).is_ok());
  EXPECT_FLOAT_EQ(out_a[0], 3.0F);
  EXPECT_FLOAT_EQ(out_b[0], 15.0F);
  ASSERT_TRUE(engine_->run_prepare(id, RunArgsView{a, {}}, &third).is_ok());
  ASSERT_TRUE(engine_->run_finalize(*third).is_ok());
}

// Two callables of each bind alternating in program mode with DEVICE tensors: once every
// block holds both, a run allocates and moves nothing.
TEST_F(EngineTest, AlternatingCallablesSettleWithoutAllocationsInBothBinds) {
  ASSERT_TRUE(engine_->program_init().is_ok());
  std::vector<std::int32_t> ids;
  for (const rrt_bind_strategy_t bind : {RRT_BIND_DEVICE_BUILD, RRT_BIND_HOST_BUILD}) {
    for (const std::uint64_t n : {std::uint64_t{64}, std::uint64_t{512}}) {
      CallableBuilder b(bind);
      b.param(f32({n})).param(f32({n}, RRT_DIR_OUT)).intermediate(f32({n}));
      b.task(testing::kScale, {param(0), inter(0), imm_f32(2.0F)});
      b.task(testing::kAdd, {inter(0), param(0), param(1)});
      std::int32_t id = -1;
      ASSERT_TRUE(engine_->prepare_callable(b.spec(), &id).is_ok());
      ids.push_back(id);
    }
  }
  void *in = sim_.allocate(std::size_t{512} * 4);
  void *out = sim_.allocate(std::size_t{512} * 4);
  auto run = [&](std::int32_t id, std::uint64_t n) {
    const std::vector<TensorArg> tensors = {{in, n * 4, RRT_SPACE_DEVICE},
                                            {out, n * 4, RRT_SPACE_DEVICE}};
    std::unique_ptr<ProgramRun> program_run;
    ASSERT_TRUE(engine_->run_prepare(id, RunArgsView{tensors, {}}, &program_run).is_ok());
    ASSERT_TRUE(engine_->run_launch(*program_run, nullptr).is_ok());
    ASSERT_TRUE(engine_->run_finalize(*program_run).is_ok());
  };
  auto alternate = [&](int rounds) {
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t i = 0; i < ids.size(); ++i) {
        run(ids[i], i % 2 == 0 ? 64 : 512);
      }
    }
  };
  alternate(3);
  const std::uint64_t allocations =
      EngineInspector::context(*engine_).counters().device_alloc_calls.load();
  const std::uint64_t moves =
      EngineInspector::context(*engine_).region_stats(GrowthPoint::kGraphDefinition).base_changes;
  alternate(25);
  EXPECT_EQ(EngineInspector::context(*engine_).counters().device_alloc_calls.load(), allocations);
  EXPECT_EQ(
      EngineInspector::context(*engine_).region_stats(GrowthPoint::kGraphDefinition).base_changes,
      moves);
  ASSERT_TRUE(sim_.free(in).is_ok());
  ASSERT_TRUE(sim_.free(out).is_ok());
}

// The profiling collectors serve both pipeline slots. A run whose launch failed part-way is
// finalized without waiting, and the work it enqueued before the failure may still be queued,
// writing its slot's timings: a prepare in the other slot that rebuilds the collectors (its
// callable has more tasks) must wait for that work before the old collectors are freed.
TEST_F(EngineTest, CollectorsARebuildFreesAreNoLongerWrittenByAFailedRunsQueuedWork) {
  constexpr std::uint64_t kN = 64;
  engine_->enable_profiling();
  ASSERT_TRUE(engine_->program_init().is_ok());
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(engine_->create_stream(&stream).is_ok());
  CallableBuilder small;
  small.param(f32({kN})).param(f32({kN}, RRT_DIR_OUT));
  small.task(testing::kScale, {param(0), param(1), imm_f32(2.0F)});
  CallableBuilder large;
  large.param(f32({kN})).param(f32({kN}, RRT_DIR_OUT));
  for (int task = 0; task < 8; ++task) {
    large.task(testing::kScale, {param(0), param(1), imm_f32(2.0F)});
  }
  std::int32_t small_id = -1;
  std::int32_t large_id = -1;
  ASSERT_TRUE(engine_->prepare_callable(small.spec(), &small_id).is_ok());
  ASSERT_TRUE(engine_->prepare_callable(large.spec(), &large_id).is_ok());
  std::vector<float> in(kN, 1.0F);
  std::vector<float> out(kN, 0.0F);
  const std::vector<TensorArg> tensors = {{in.data(), kN * 4, RRT_SPACE_HOST},
                                          {out.data(), kN * 4, RRT_SPACE_HOST}};
  const RunArgsView args{tensors, {}};
  std::unique_ptr<ProgramRun> run;
  ASSERT_TRUE(engine_->run_prepare(small_id, args, &run).is_ok());
  const std::uint64_t before = faults_->enqueue_attempts();
  ASSERT_TRUE(engine_->run_launch(*run, stream.get()).is_ok());
  const std::uint64_t enqueues = faults_->enqueue_attempts() - before;
  ASSERT_TRUE(engine_->run_finalize(*run).is_ok());
  const void *old_timings = nullptr;
  EngineInspector::context(*engine_).for_each_block([&](const GuardedBlock &block) {
    if (block.point() == GrowthPoint::kDfxCollectors && old_timings == nullptr) {
      old_timings = block.base();
    }
  });
  ASSERT_NE(old_timings, nullptr);

  // Slot 0 held, the failing run in slot 1, its stream blocked: its launch fails at the
  // slot's done record, after the executor launch that writes the timings.
  std::unique_ptr<ProgramRun> holder;
  ASSERT_TRUE(engine_->run_prepare(small_id, args, &holder).is_ok());
  ASSERT_TRUE(engine_->run_prepare(small_id, args, &run).is_ok());
  ASSERT_EQ(run->slot(), 1);
  sim::testing::Gate gate;
  ASSERT_TRUE(gate.block(*stream).is_ok());
  faults_->fail_nth_enqueue(enqueues - 1);
  const Status launched = engine_->run_launch(*run, stream.get());
  faults_->clear_faults();
  ASSERT_FALSE(launched.is_ok());
  ASSERT_TRUE(engine_->run_finalize(*run).is_ok());
  ASSERT_TRUE(engine_->run_finalize(*holder).is_ok());

  std::future<Status> prepared = std::async(std::launch::async, [&] {
    std::unique_ptr<ProgramRun> next;
    Status status = engine_->run_prepare(large_id, args, &next);
    if (next) {
      (void)engine_->run_finalize(*next);
    }
    return status;
  });
  if (prepared.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready) {
    EXPECT_TRUE(stream->query()) << "the failed run's work was still queued";
  }
  EXPECT_TRUE(EngineInspector::device(*engine_).find_allocation(old_timings).has_value() ||
              stream->query())
      << "the collectors the failed run's queued work writes were freed under it";
  gate.open();
  EXPECT_TRUE(prepared.get().is_ok());
  (void)stream->synchronize();
  engine_->before_stream_destroy(*stream);
}

// A Device that forwards to a SimDevice, except that an armed find_allocation blocks until the
// test releases it: a public call can be held in progress at a known point (where it checks a
// DEVICE tensor). It counts the frees that reach the device.
class GatedDevice final : public testing::ForwardingDevice {
 public:
  explicit GatedDevice(Device &inner) : ForwardingDevice(inner) {}

  void arm() {
    const std::lock_guard<std::mutex> lock(mutex_);
    armed_ = true;
  }
  void wait_until_blocked() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return blocked_; });
  }
  void release() {
    const std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
    changed_.notify_all();
  }
  std::uint64_t frees() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return frees_;
  }

  Status free(void *ptr) override {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      ++frees_;
    }
    return inner().free(ptr);
  }
  std::optional<AllocationInfo> find_allocation(const void *address) const override {
    hold_if_armed();
    return inner().find_allocation(address);
  }

 private:
  void hold_if_armed() const {
    std::unique_lock<std::mutex> lock(mutex_);
    if (armed_) {
      blocked_ = true;
      changed_.notify_all();
      changed_.wait(lock, [&] { return !armed_; });
    }
  }

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool armed_ = false;
  mutable bool blocked_ = false;
  std::uint64_t frees_ = 0;
};

// How long a call must stay blocked to count as waiting; a call that is not waiting returns
// long before.
constexpr auto kBlockedFor = std::chrono::milliseconds(200);

// An engine over a GatedDevice, in program mode, with a 64-float copy prepared.
struct GatedEngine {
  GatedEngine() {
    auto owned = std::make_unique<GatedDevice>(sim);
    device = owned.get();
    EXPECT_TRUE(Engine::create(std::move(owned), 1, generations, &engine).is_ok());
    EXPECT_TRUE(engine->program_init().is_ok());
    CallableBuilder b;
    b.param(f32({64})).param(f32({64}, RRT_DIR_OUT));
    b.task(testing::kCopy, {param(0), param(1)});
    EXPECT_TRUE(engine->prepare_callable(b.spec(), &copy).is_ok());
  }

  sim::SimDevice sim;
  GatedDevice *device = nullptr;
  GenerationRegistry generations;
  std::unique_ptr<Engine> engine;
  std::int32_t copy = -1;
};

// A call admitted before finalize begins completes first: finalize waits for it, then
// releases. The prepare is held while it checks its DEVICE tensor, before it takes any lock
// finalize also takes, so only the lifecycle gate holds finalize back. Admitted, the prepare
// succeeds; its run is then abandoned.
TEST(EngineFinalizeTest, FinalizeWaitsForACallInProgressAndRefusesTheNext) {
  GatedEngine e;
  void *in = e.sim.allocate(256);
  std::vector<float> out(64, 0.0F);
  const std::vector<TensorArg> tensors = {{in, 256, RRT_SPACE_DEVICE},
                                          {out.data(), 256, RRT_SPACE_HOST}};
  e.device->arm();
  Status prepared;
  std::unique_ptr<ProgramRun> run;
  std::thread preparer([&] {
    prepared = e.engine->run_prepare(e.copy, RunArgsView{tensors, {}}, &run);
  });
  e.device->wait_until_blocked();
  std::future<Status> finalized =
      std::async(std::launch::async, [&] { return e.engine->finalize({}); });
  EXPECT_EQ(finalized.wait_for(kBlockedFor), std::future_status::timeout)
      << "finalize returned while a prepare it releases was in progress";
  e.device->release();
  preparer.join();
  EXPECT_TRUE(finalized.get().is_ok());
  ASSERT_TRUE(prepared.is_ok()) << prepared.message();
  EXPECT_FALSE(e.engine->is_ready());
  EXPECT_EQ(e.engine->run_launch(*run, nullptr).code(), RRT_ERR_INVALID_STATE);
  EXPECT_TRUE(e.engine->run_finalize(*run).is_ok());
  std::int32_t id = -1;
  CallableBuilder b;
  b.param(f32({64})).param(f32({64}, RRT_DIR_OUT));
  b.task(testing::kCopy, {param(0), param(1)});
  EXPECT_EQ(e.engine->prepare_callable(b.spec(), &id).code(), RRT_ERR_INVALID_STATE);
  EXPECT_TRUE(e.engine->program_init().is_ok());
  EXPECT_TRUE(e.engine->is_ready());
  ASSERT_TRUE(e.sim.free(in).is_ok());
}

// A prepare whose callable needs larger profiling collectors while the other slot holds a run
// is refused at once. It must not first wait for that run's work, least of all holding the
// admission lock: a thread that has to make a call needing the lock before that work can
// finish (here: the gate opens only after this test's checks) would deadlock with it.
TEST_F(EngineTest, ARefusedCollectorsRebuildDoesNotWaitForTheOtherSlotsRun) {
  constexpr std::uint64_t kN = 64;
  engine_->enable_profiling();
  ASSERT_TRUE(engine_->program_init().is_ok());
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(engine_->create_stream(&stream).is_ok());
  CallableBuilder small;
  small.param(f32({kN})).param(f32({kN}, RRT_DIR_OUT));
  small.task(testing::kScale, {param(0), param(1), imm_f32(2.0F)});
  CallableBuilder large;
  large.param(f32({kN})).param(f32({kN}, RRT_DIR_OUT));
  for (int task = 0; task < 8; ++task) {
    large.task(testing::kScale, {param(0), param(1), imm_f32(2.0F)});
  }
  std::int32_t small_id = -1;
  std::int32_t large_id = -1;
  ASSERT_TRUE(engine_->prepare_callable(small.spec(), &small_id).is_ok());
  ASSERT_TRUE(engine_->prepare_callable(large.spec(), &large_id).is_ok());
  std::vector<float> in(kN, 1.0F);
  std::vector<float> out(kN, 0.0F);
  const std::vector<TensorArg> tensors = {{in.data(), kN * 4, RRT_SPACE_HOST},
                                          {out.data(), kN * 4, RRT_SPACE_HOST}};
  const RunArgsView args{tensors, {}};
  sim::testing::Gate gate;
  ASSERT_TRUE(gate.block(*stream).is_ok());
  std::unique_ptr<ProgramRun> queued;
  ASSERT_TRUE(engine_->run_prepare(small_id, args, &queued).is_ok());
  ASSERT_TRUE(engine_->run_launch(*queued, stream.get()).is_ok());

  std::future<Status> prepared = std::async(std::launch::async, [&] {
    std::unique_ptr<ProgramRun> next;
    return engine_->run_prepare(large_id, args, &next);
  });
  const std::future_status waited = prepared.wait_for(kBlockedFor);
  gate.open();
  EXPECT_EQ(waited, std::future_status::ready) << "the prepare waited for the other slot's run";
  EXPECT_EQ(prepared.get().code(), RRT_ERR_PREPARED_INCOMPATIBLE);
  EXPECT_TRUE(engine_->run_wait(*queued).is_ok());
  EXPECT_TRUE(engine_->run_finalize(*queued).is_ok());
  engine_->before_stream_destroy(*stream);
}

// A Device that forwards to a SimDevice and runs a hook, once armed, on the next allocation.
class AllocationHookDevice final : public testing::ForwardingDevice {
 public:
  explicit AllocationHookDevice(Device &inner) : ForwardingDevice(inner) {}

  void on_next_allocation(std::function<void()> hook) { hook_ = std::move(hook); }
  void *allocate(std::size_t bytes) override {
    if (hook_) {
      std::exchange(hook_, nullptr)();
    }
    return inner().allocate(bytes);
  }

 private:
  std::function<void()> hook_;
};

// A program-mode prepare waits for its slot's last replay, then may move the slot's buffers
// (a larger callable). A replay of a graph captured from that slot, admitted on another thread
// after the wait, must either see the buffers moved (STALE_ADDRESS) or be waited for before
// they go; it must never run on the freed ones. The replay arrives as the prepare allocates.
TEST(EngineReplayTest, AReplayArrivingWhileAPrepareMovesItsSlotsBuffersNeverRunsOnFreedOnes) {
  sim::SimDevice sim;
  auto owned = std::make_unique<AllocationHookDevice>(sim);
  AllocationHookDevice *device = owned.get();
  GenerationRegistry generations;
  std::unique_ptr<Engine> engine;
  ASSERT_TRUE(Engine::create(std::move(owned), 1, generations, &engine).is_ok());
  ASSERT_TRUE(engine->program_init().is_ok());
  const std::int32_t small = prepare_doubling(*engine, 64);
  const std::int32_t large = prepare_doubling(*engine, 1 << 16);
  std::vector<float> in(1 << 16, 1.0F);
  std::vector<float> out(1 << 16, 0.0F);
  const std::vector<TensorArg> small_args = {{in.data(), 256, RRT_SPACE_HOST},
                                             {out.data(), 256, RRT_SPACE_HOST}};
  const std::vector<TensorArg> large_args = {{in.data(), in.size() * 4, RRT_SPACE_HOST},
                                             {out.data(), out.size() * 4, RRT_SPACE_HOST}};
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(sim.create_stream(&stream).is_ok());
  // Slot 0 held; a run of `small` captured from slot 1.
  std::unique_ptr<ProgramRun> holder;
  ASSERT_TRUE(engine->run_prepare(small, RunArgsView{small_args, {}}, &holder).is_ok());
  ASSERT_TRUE(engine->begin_capture(*stream).is_ok());
  std::unique_ptr<ProgramRun> captured;
  ASSERT_TRUE(engine->run_prepare(small, RunArgsView{small_args, {}}, &captured).is_ok());
  ASSERT_EQ(captured->slot(), 1);
  ASSERT_TRUE(engine->run_launch(*captured, stream.get()).is_ok());
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(stream->end_capture(&graph).is_ok());
  ASSERT_TRUE(engine->run_finalize(*captured).is_ok());

  sim::testing::Gate gate;
  ASSERT_TRUE(gate.block(*stream).is_ok());
  std::future<Status> replayed;
  device->on_next_allocation([&] {
    replayed = std::async(std::launch::async, [&] { return engine->replay(*graph, *stream); });
    // Long enough for a replay that is not held back to have been admitted.
    (void)replayed.wait_for(kBlockedFor);
  });
  std::unique_ptr<ProgramRun> next;
  ASSERT_TRUE(engine->run_prepare(large, RunArgsView{large_args, {}}, &next).is_ok());
  ASSERT_EQ(next->slot(), 1);
  ASSERT_TRUE(replayed.valid()) << "the prepare allocated nothing";
  const Status replay = replayed.get();
  gate.open();
  const Status ran = stream->synchronize();
  EXPECT_TRUE(replay.code() == RRT_ERR_STALE_ADDRESS || ran.is_ok())
      << "the replay was admitted (" << replay.message()
      << ") and ran on freed buffers: " << ran.message();
  EXPECT_TRUE(engine->run_finalize(*next).is_ok());
  EXPECT_TRUE(engine->run_finalize(*holder).is_ok());
  graph.reset();
  engine->before_stream_destroy(*stream);
}

// A run launch admitted before finalize begins lands on a slot that is still held: finalize
// waits for it to enqueue (through the gate, and the launch order's lock the launch holds),
// drains the slot's stream and only then releases (no free reaches the device while the launch
// is in progress), so the run computes on live memory.
TEST(EngineFinalizeTest, ARunLaunchInProgressWhenFinalizeBeginsCompletesBeforeTheSlotIsReleased) {
  GatedEngine e;
  void *in = e.sim.allocate(256);
  std::vector<float> values(64, 3.0F);
  ASSERT_TRUE(e.sim.copy_host_to_device(in, values.data(), 256).is_ok());
  std::vector<float> out(64, 0.0F);
  const std::vector<TensorArg> tensors = {{in, 256, RRT_SPACE_DEVICE},
                                          {out.data(), 256, RRT_SPACE_HOST}};
  std::unique_ptr<ProgramRun> run;
  ASSERT_TRUE(e.engine->run_prepare(e.copy, RunArgsView{tensors, {}}, &run).is_ok());
  // The launch checks its DEVICE tensor's allocation under its ticket; hold it there.
  e.device->arm();
  Status launched;
  std::thread launcher([&] { launched = e.engine->run_launch(*run, nullptr); });
  e.device->wait_until_blocked();
  const std::uint64_t frees_before = e.device->frees();
  std::future<Status> finalized =
      std::async(std::launch::async, [&] { return e.engine->finalize({}); });
  EXPECT_EQ(finalized.wait_for(kBlockedFor), std::future_status::timeout)
      << "finalize returned while a run launch was in progress";
  EXPECT_EQ(e.device->frees(), frees_before)
      << "finalize released memory while a run launch was in progress";
  e.device->release();
  launcher.join();
  ASSERT_TRUE(launched.is_ok()) << launched.message();
  EXPECT_TRUE(finalized.get().is_ok());
  EXPECT_TRUE(e.engine->run_finalize(*run).is_ok());
  EXPECT_FLOAT_EQ(out[0], 3.0F);
  EXPECT_FLOAT_EQ(out[63], 3.0F);
  ASSERT_TRUE(e.sim.free(in).is_ok());
}

}  // namespace
}  // namespace replayrt
