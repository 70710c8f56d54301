// The failure sweep over every engine call that allocates: each device allocation and each
// transfer (upload, zeroing) the call makes on a clean run is failed in turn. The failed call must
// leave the context's statistics, every region's capacity, use and base changes, and every bank
// base as they were; the same call then succeeds, and the context still does everything its plan
// was fitted for (in kernel mode: prepare and launch the other callable, and replay bit for bit
// a graph captured before the failure).
#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "platform/sim/sim_device.h"
#include "runtime/engine.h"
#include "runtime/plan_fit.h"
#include "support/callable_builder.h"
#include "support/fault_injecting_device.h"

namespace replayrt {
namespace {

using testing::CallableBuilder;
using testing::f32;
using testing::imm_f32;
using testing::inter;
using testing::param;

constexpr std::uint64_t kN = 256;

CallableBuilder axpy(rrt_bind_strategy_t bind, std::uint64_t n, float factor) {
  CallableBuilder b(bind);
  b.param(f32({n})).param(f32({n}, RRT_DIR_OUT)).intermediate(f32({n}));
  b.task(testing::kScale, {param(0), inter(0), imm_f32(factor)});
  b.task(testing::kAdd, {inter(0), param(0), param(1)});
  return b;
}

// One engine over a fault-injecting simulated device, with profiling on.
struct Rig {
  Rig() {
    auto device = std::make_unique<FaultInjectingDevice>(sim);
    faults = device.get();
    EXPECT_TRUE(Engine::create(std::move(device), 1, generations, &engine).is_ok());
    engine->context().enable_profiling();
  }

  sim::SimDevice sim;
  FaultInjectingDevice *faults = nullptr;
  GenerationRegistry generations;
  std::unique_ptr<Engine> engine;
  CallableBuilder a = axpy(RRT_BIND_DEVICE_BUILD, kN, 2.0F);
  CallableBuilder b = axpy(RRT_BIND_HOST_BUILD, kN, 3.0F);
  CallableBuilder large_host = axpy(RRT_BIND_HOST_BUILD, 4 * kN, 4.0F);
  CallableBuilder large_device = axpy(RRT_BIND_DEVICE_BUILD, 4 * kN, 5.0F);
  std::vector<float> in = std::vector<float>(4 * kN, 1.0F);
  std::vector<float> out = std::vector<float>(4 * kN, 0.0F);
  std::unique_ptr<ProgramRun> run;
  // A graph captured before the swept call (captured_graph), over two device buffers, and
  // what its replay wrote then.
  std::unique_ptr<Stream> stream;
  std::unique_ptr<Graph> graph;
  void *device_in = nullptr;
  void *device_out = nullptr;
  std::vector<float> replayed;

  Rig(const Rig &) = delete;
  Rig &operator=(const Rig &) = delete;
  Rig(Rig &&) = delete;
  Rig &operator=(Rig &&) = delete;
  ~Rig() {
    graph.reset();
    if (stream) {
      (void)stream->synchronize();
    }
    stream.reset();
    run.reset();
    engine.reset();
    (void)sim.free(device_in);
    (void)sim.free(device_out);
  }
};

RunArgsView device_args(Rig &rig, std::vector<TensorArg> *tensors) {
  *tensors = {{rig.device_in, kN * 4, RRT_SPACE_DEVICE},
              {rig.device_out, kN * 4, RRT_SPACE_DEVICE}};
  return RunArgsView{*tensors, {}};
}

// Replays the captured graph on fresh inputs and returns what it wrote.
std::vector<float> replay_captured(Rig &rig) {
  std::vector<float> values(kN);
  for (std::uint64_t i = 0; i < kN; ++i) {
    values[i] = 0.25F + static_cast<float>(i) / 7.0F;
  }
  std::vector<float> result(kN, -1.0F);
  EXPECT_TRUE(rig.sim.memset(rig.device_out, 0, kN * 4).is_ok());
  EXPECT_TRUE(rig.sim.copy_host_to_device(rig.device_in, values.data(), kN * 4).is_ok());
  EXPECT_TRUE(rig.engine->replay(*rig.graph, *rig.stream).is_ok());
  EXPECT_TRUE(rig.stream->synchronize().is_ok());
  EXPECT_TRUE(rig.sim.copy_device_to_host(result.data(), rig.device_out, kN * 4).is_ok());
  return result;
}

// Captures one kernel-mode launch of callable `id` over the rig's device buffers and
// replays it once, keeping what it wrote.
void capture_and_replay(Rig &rig, std::int32_t id) {
  rig.device_in = rig.sim.allocate(kN * 4);
  rig.device_out = rig.sim.allocate(kN * 4);
  ASSERT_TRUE(rig.sim.create_stream(&rig.stream).is_ok());
  std::vector<TensorArg> tensors;
  ASSERT_TRUE(rig.stream->begin_capture().is_ok());
  ASSERT_TRUE(rig.engine->kernel_launch(id, device_args(rig, &tensors), *rig.stream).is_ok());
  ASSERT_TRUE(rig.stream->end_capture(&rig.graph).is_ok());
  rig.replayed = replay_captured(rig);
}

// After a failure: the graph captured before replays bit for bit, and the callable
// prepared as `id` launches and computes y = factor * x + x.
void expect_capture_and_launch_work(Rig &rig, std::int32_t id, float factor) {
  const std::vector<float> again = replay_captured(rig);
  for (std::uint64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(again[i]), std::bit_cast<std::uint32_t>(rig.replayed[i]))
        << "a graph captured before the failure replays differently at " << i;
  }
  std::vector<TensorArg> tensors;
  std::vector<float> values(kN, 2.0F);
  ASSERT_TRUE(rig.sim.copy_host_to_device(rig.device_in, values.data(), kN * 4).is_ok());
  const Status launched = rig.engine->kernel_launch(id, device_args(rig, &tensors), *rig.stream);
  ASSERT_TRUE(launched.is_ok()) << launched.message();
  ASSERT_TRUE(rig.stream->synchronize().is_ok());
  std::vector<float> result(kN);
  ASSERT_TRUE(rig.sim.copy_device_to_host(result.data(), rig.device_out, kN * 4).is_ok());
  EXPECT_FLOAT_EQ(result[0], 2.0F * factor + 2.0F);
  EXPECT_FLOAT_EQ(result[kN - 1], 2.0F * factor + 2.0F);
}

Status kernel_init(Rig &rig, std::uint32_t profile_tasks) {
  const CallableSpec descs[] = {rig.a.spec(), rig.b.spec()};
  CapacityPlan plan{};
  EXPECT_TRUE(fit_capacity_plan(descs, PlanFit::kSideBySide, &plan).is_ok());
  return rig.engine->kernel_init(plan, 0, profile_tasks);
}

Status prepare(Rig &rig, CallableBuilder &builder) {
  std::int32_t id = -1;
  return rig.engine->prepare_callable(builder.spec(), &id);
}

Status run_prepare(Rig &rig, std::int32_t id, std::uint64_t n) {
  const std::vector<TensorArg> tensors = {{rig.in.data(), n * 4, RRT_SPACE_HOST},
                                          {rig.out.data(), n * 4, RRT_SPACE_HOST}};
  if (rig.run) {
    EXPECT_TRUE(rig.engine->run_finalize(*rig.run).is_ok());
    rig.run.reset();
  }
  return rig.engine->run_prepare(id, RunArgsView{tensors, {}}, &rig.run);
}

// Set-up of a kernel-mode prepare after a capture: kernel init, `first` prepared as callable 0,
// and one launch of it captured and replayed.
void kernel_mode_after_a_capture(Rig &rig, CallableBuilder &first) {
  ASSERT_TRUE(kernel_init(rig, 0).is_ok());
  ASSERT_TRUE(prepare(rig, first).is_ok());
  capture_and_replay(rig, 0);
}

struct Snapshot {
  std::uint64_t live_bytes = 0;
  std::int64_t unfreed = 0;
  std::vector<std::uint64_t> regions;
  BankBases banks[DeviceContext::kPipelineDepth];
  DeviceContext::PublishedKeys keys;

  static Snapshot of(Engine &engine) {
    Snapshot s;
    s.keys = engine.context().published_keys();
    const ContextCounters &counters = engine.context().counters();
    s.live_bytes = counters.live_bytes.load();
    s.unfreed = static_cast<std::int64_t>(counters.device_alloc_calls.load()) -
                static_cast<std::int64_t>(counters.device_free_calls.load());
    for (int point = 0; point < kGrowthPointCount; ++point) {
      const RegionStats stats = engine.context().region_stats(static_cast<GrowthPoint>(point));
      s.regions.insert(s.regions.end(), {stats.capacity, stats.used, stats.base_changes});
    }
    for (int slot = 0; slot < DeviceContext::kPipelineDepth; ++slot) {
      s.banks[slot] = engine.context().slot(slot).bank_bases();
    }
    return s;
  }
  bool operator==(const Snapshot &other) const {
    for (int slot = 0; slot < DeviceContext::kPipelineDepth; ++slot) {
      if (!(banks[slot] == other.banks[slot])) {
        return false;
      }
    }
    return live_bytes == other.live_bytes && unfreed == other.unfreed && regions == other.regions &&
           keys == other.keys;
  }
};

struct PublicCall {
  std::string name;
  std::function<void(Rig &)> setup;
  std::function<Status(Rig &)> call;
  // Whether the call transfers (uploads, zeroing), so its transfers are failed too, and in
  // kernel mode what the plan was also fitted for (checked after the call succeeded).
  bool sweeps_transfers = false;
  std::function<void(Rig &)> still_fits;
};

std::vector<PublicCall> public_calls() {
  auto kernel_mode = [](Rig &rig) { ASSERT_TRUE(kernel_init(rig, 0).is_ok()); };
  auto program_with_callables = [](Rig &rig) {
    ASSERT_TRUE(rig.engine->program_init().is_ok());
    ASSERT_TRUE(prepare(rig, rig.a).is_ok());
    ASSERT_TRUE(prepare(rig, rig.b).is_ok());
    ASSERT_TRUE(prepare(rig, rig.large_host).is_ok());
    ASSERT_TRUE(prepare(rig, rig.large_device).is_ok());
  };
  return {
      {"KernelInit", [](Rig &) {}, [](Rig &rig) { return kernel_init(rig, 4); }, true,
       [](Rig &rig) {
         EXPECT_TRUE(prepare(rig, rig.a).is_ok());
         EXPECT_TRUE(prepare(rig, rig.b).is_ok());
       }},
      {"KernelPrepareDeviceBuild", kernel_mode, [](Rig &rig) { return prepare(rig, rig.a); }, true,
       [](Rig &rig) {
         const Status other = prepare(rig, rig.b);
         EXPECT_TRUE(other.is_ok()) << other.message();
       }},
      {"KernelPrepareHostBuild", kernel_mode, [](Rig &rig) { return prepare(rig, rig.b); }, true,
       [](Rig &rig) {
         const Status other = prepare(rig, rig.a);
         EXPECT_TRUE(other.is_ok()) << other.message();
       }},
      {"KernelPrepareDeviceBuildAfterACapture",
       [](Rig &rig) { kernel_mode_after_a_capture(rig, rig.b); },
       [](Rig &rig) { return prepare(rig, rig.a); }, true,
       [](Rig &rig) { expect_capture_and_launch_work(rig, 1, 2.0F); }},
      {"KernelPrepareHostBuildAfterACapture",
       [](Rig &rig) { kernel_mode_after_a_capture(rig, rig.a); },
       [](Rig &rig) { return prepare(rig, rig.b); }, true,
       [](Rig &rig) { expect_capture_and_launch_work(rig, 1, 3.0F); }},
      {"ProgramFirstRunDeviceBuild",
       program_with_callables,
       [](Rig &rig) { return run_prepare(rig, 0, kN); },
       true,
       {}},
      {"ProgramFirstRunHostBuild",
       program_with_callables,
       [](Rig &rig) { return run_prepare(rig, 1, kN); },
       true,
       {}},
      {"ProgramHostBuildRunThatGrowsEveryBlock",
       [program_with_callables](Rig &rig) {
         program_with_callables(rig);
         ASSERT_TRUE(run_prepare(rig, 1, kN).is_ok());
       },
       [](Rig &rig) { return run_prepare(rig, 2, 4 * kN); },
       true,
       {}},
      {"ProgramDeviceBuildRunThatGrowsEveryBlock",
       [program_with_callables](Rig &rig) {
         program_with_callables(rig);
         ASSERT_TRUE(run_prepare(rig, 0, kN).is_ok());
       },
       [](Rig &rig) { return run_prepare(rig, 3, 4 * kN); },
       true,
       {}},
  };
}

// GoogleTest finds a value printer by this name.
// NOLINTNEXTLINE(readability-identifier-naming)
void PrintTo(const PublicCall &call, std::ostream *os) {
  *os << call.name;
}

class PublicCallFailureSweepTest : public ::testing::TestWithParam<PublicCall> {};

// One failure point of a call: its nth device allocation or its nth transfer.
struct FailurePoint {
  bool transfer = false;
  std::uint64_t n = 0;
};

TEST_P(PublicCallFailureSweepTest, AFailureAtAnyPointChangesNothingAndTheCallSucceedsAfter) {
  const PublicCall &call = GetParam();
  std::vector<FailurePoint> points;
  {
    Rig rig;
    call.setup(rig);
    const std::uint64_t allocations = rig.faults->allocation_attempts();
    const std::uint64_t transfers = rig.faults->transfer_attempts();
    ASSERT_TRUE(call.call(rig).is_ok());
    for (std::uint64_t n = 1; n <= rig.faults->allocation_attempts() - allocations; ++n) {
      points.push_back({false, n});
    }
    if (call.sweeps_transfers) {
      const std::uint64_t made = rig.faults->transfer_attempts() - transfers;
      ASSERT_GE(made, 1u) << "the call must transfer for the sweep to mean anything";
      for (std::uint64_t n = 1; n <= made; ++n) {
        points.push_back({true, n});
      }
    }
    ASSERT_FALSE(points.empty()) << "the call must allocate or transfer for the sweep to mean "
                                    "anything";
  }
  for (const FailurePoint &point : points) {
    SCOPED_TRACE(::testing::Message()
                 << "failing " << (point.transfer ? "transfer " : "allocation ") << point.n);
    Rig rig;
    call.setup(rig);
    const Snapshot before = Snapshot::of(*rig.engine);
    if (point.transfer) {
      rig.faults->fail_nth_transfer(point.n);
    } else {
      rig.faults->fail_nth_allocation(point.n);
    }
    const Status failed = call.call(rig);
    rig.faults->clear_faults();
    EXPECT_EQ(failed.code(), point.transfer ? RRT_ERR_INTERNAL : RRT_ERR_OUT_OF_MEMORY)
        << failed.message();
    EXPECT_TRUE(Snapshot::of(*rig.engine) == before) << "the failed call changed state";
    EXPECT_TRUE(call.call(rig).is_ok()) << "the call after the device recovered";
    if (call.still_fits) {
      call.still_fits(rig);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCallThatAllocates, PublicCallFailureSweepTest,
                         ::testing::ValuesIn(public_calls()),
                         [](const ::testing::TestParamInfo<PublicCall> &info) {
                           return info.param.name;
                         });

// The probe from the structural review: a kernel-mode prepare that fails after the image was
// placed gave the frozen capacity away, so a callable the plan was fitted for was refused.
TEST(KernelPrepareFailureTest, AFailedPrepareKeepsRoomForEveryCallableThePlanWasFittedFor) {
  Rig rig;
  ASSERT_TRUE(kernel_init(rig, 0).is_ok());
  const RegionStats pool = rig.engine->context().region_stats(GrowthPoint::kArenaRuntimePool);
  // With a profiling shape of 0 the first prepare makes the collectors' first allocation.
  rig.faults->fail_nth_allocation(1);
  EXPECT_EQ(prepare(rig, rig.a).code(), RRT_ERR_OUT_OF_MEMORY);
  rig.faults->clear_faults();
  EXPECT_EQ(rig.engine->context().region_stats(GrowthPoint::kArenaRuntimePool).used, pool.used);
  ASSERT_TRUE(prepare(rig, rig.a).is_ok());
  const Status second = prepare(rig, rig.b);
  EXPECT_TRUE(second.is_ok()) << second.message();
}

}  // namespace
}  // namespace replayrt
