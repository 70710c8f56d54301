// Every growth point in the registry has a kernel-mode scenario that drives a context into
// that growth and proves the refusal changed nothing: device counters, published bases,
// remembered sizes, and graphs captured before it still replay correctly. A growth point
// added to the registry without a scenario here fails this test.
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "common/growth_point.h"
#include "platform/sim/sim_device.h"
#include "runtime/engine.h"
#include "runtime/plan_fit.h"
#include "support/callable_builder.h"
#include "support/engine_inspector.h"

namespace replayrt {
namespace {

using testing::CallableBuilder;
using testing::f32;
using testing::imm_f32;
using testing::inter;
using testing::param;

constexpr std::uint64_t kN = 256;
constexpr std::uint32_t kProfileShape = 64;

// y = (factor + 1) * x through one intermediate of `n` floats.
CallableBuilder axpy(rrt_bind_strategy_t bind, std::uint64_t n, float factor) {
  CallableBuilder b(bind);
  b.param(f32({n})).param(f32({n}, RRT_DIR_OUT)).intermediate(f32({n}));
  b.task(testing::kScale, {param(0), inter(0), imm_f32(factor)});
  b.task(testing::kAdd, {inter(0), param(0), param(1)});
  return b;
}

// y = tasks * x as a chain of `tasks` tasks with no intermediates.
CallableBuilder chain(std::uint32_t tasks) {
  CallableBuilder b;
  b.param(f32({kN})).param(f32({kN}, RRT_DIR_OUT));
  b.task(testing::kCopy, {param(0), param(1)});
  for (std::uint32_t i = 1; i < tasks; ++i) {
    b.task(testing::kAdd, {param(1), param(0), param(1)});
  }
  return b;
}

// A kernel-mode context (profiling on) with a device-build callable A (y = 3x) and a
// host-build callable B (y = 4x) prepared and captured, and a plan that holds exactly them.
class Fixture {
 public:
  explicit Fixture(const std::function<void(CapacityPlan *)> &adjust_plan) {
    auto device = std::make_unique<sim::SimDevice>();
    device_ = device.get();
    EXPECT_TRUE(Engine::create(std::move(device), 1, generations_, &engine_).is_ok());
    EngineInspector::context(*engine_).enable_profiling();
    CallableBuilder a = axpy(RRT_BIND_DEVICE_BUILD, kN, 2.0F);
    CallableBuilder b = axpy(RRT_BIND_HOST_BUILD, kN, 3.0F);
    const CallableSpec descs[] = {a.spec(), b.spec()};
    CapacityPlan plan{};
    EXPECT_TRUE(fit_capacity_plan(descs, PlanFit::kSideBySide, &plan).is_ok());
    adjust_plan(&plan);
    EXPECT_TRUE(engine_->kernel_init(plan, 0, kProfileShape).is_ok());
    EXPECT_TRUE(engine_->prepare_callable(a.spec(), &a_).is_ok());
    EXPECT_TRUE(engine_->prepare_callable(b.spec(), &b_).is_ok());
    EXPECT_TRUE(device_->create_stream(&stream_).is_ok());
    for (void *&buffer : buffers_) {
      buffer = device_->allocate(kN * 4);
    }
    graph_a_ = capture(a_, buffers_[0], buffers_[1]);
    graph_b_ = capture(b_, buffers_[2], buffers_[3]);
  }

  ~Fixture() {
    graph_a_.reset();
    graph_b_.reset();
    stream_.reset();
    for (void *buffer : buffers_) {
      (void)device_->free(buffer);
    }
  }
  Fixture(const Fixture &) = delete;
  Fixture &operator=(const Fixture &) = delete;
  Fixture(Fixture &&) = delete;
  Fixture &operator=(Fixture &&) = delete;

  Engine &engine() { return *engine_; }
  Stream &stream() { return *stream_; }
  std::int32_t a() const { return a_; }
  std::int32_t b() const { return b_; }

  // Both graphs replay with fresh inputs and give the reference.
  void expect_graphs_replay_correctly(float base) {
    replay_and_check(*graph_a_, buffers_[0], buffers_[1], base, 3.0F);
    replay_and_check(*graph_b_, buffers_[2], buffers_[3], base + 1.0F, 4.0F);
  }

  // Everything a refusal must leave alone.
  struct Snapshot {
    MemoryCounters device;
    BankBases bases;
    std::vector<std::uint64_t> regions;
    std::uint64_t launches = 0;
    std::uint64_t runtime_alloc_calls = 0;
    std::uint64_t runtime_free_calls = 0;
    bool operator==(const Snapshot &other) const {
      return device.allocation_calls == other.device.allocation_calls &&
             device.free_calls == other.device.free_calls &&
             device.live_bytes == other.device.live_bytes && bases == other.bases &&
             regions == other.regions && launches == other.launches &&
             runtime_alloc_calls == other.runtime_alloc_calls &&
             runtime_free_calls == other.runtime_free_calls;
    }
  };

  Snapshot snapshot() {
    Snapshot s;
    s.device = device_->memory_counters();
    s.bases = EngineInspector::context(*engine_).slot(0).bank_bases();
    for (const GrowthPointInfo &info : growth_point_registry()) {
      const RegionStats stats = EngineInspector::context(*engine_).region_stats(info.point);
      s.regions.insert(s.regions.end(), {stats.capacity, stats.used, stats.base_changes});
    }
    const ContextCounters &counters = EngineInspector::context(*engine_).counters();
    s.launches = counters.launches.load();
    s.runtime_alloc_calls = counters.device_alloc_calls.load();
    s.runtime_free_calls = counters.device_free_calls.load();
    return s;
  }

  std::vector<float> host_in = std::vector<float>(kN, 1.0F);
  std::vector<float> host_out = std::vector<float>(kN, 0.0F);

 private:
  std::unique_ptr<Graph> capture(std::int32_t id, void *in, void *out) {
    const std::vector<TensorArg> tensors = {{in, kN * 4, RRT_SPACE_DEVICE},
                                            {out, kN * 4, RRT_SPACE_DEVICE}};
    EXPECT_TRUE(stream_->begin_capture().is_ok());
    EXPECT_TRUE(engine_->kernel_launch(id, RunArgsView{tensors, {}}, *stream_).is_ok());
    std::unique_ptr<Graph> graph;
    EXPECT_TRUE(stream_->end_capture(&graph).is_ok());
    return graph;
  }

  void replay_and_check(const Graph &graph, void *in, void *out, float base, float factor) {
    std::vector<float> values(kN);
    for (std::uint64_t i = 0; i < kN; ++i) {
      values[i] = base + static_cast<float>(i);
    }
    ASSERT_TRUE(device_->copy_host_to_device(in, values.data(), kN * 4).is_ok());
    ASSERT_TRUE(engine_->replay(graph, *stream_).is_ok());
    ASSERT_TRUE(stream_->synchronize().is_ok());
    std::vector<float> result(kN);
    ASSERT_TRUE(device_->copy_device_to_host(result.data(), out, kN * 4).is_ok());
    for (std::uint64_t i = 0; i < kN; i += 37) {
      ASSERT_FLOAT_EQ(result[i], values[i] * factor);
    }
  }

  sim::SimDevice *device_ = nullptr;
  GenerationRegistry generations_;
  std::unique_ptr<Engine> engine_;
  std::int32_t a_ = -1;
  std::int32_t b_ = -1;
  std::unique_ptr<Stream> stream_;
  void *buffers_[4] = {};
  std::unique_ptr<Graph> graph_a_;
  std::unique_ptr<Graph> graph_b_;
};

struct Scenario {
  const char *growth;  // what the scenario asks for
  std::function<void(CapacityPlan *)> adjust_plan;
  std::function<Status(Fixture &)> provoke;
};

void keep_plan(CapacityPlan *) {}

Status prepare(Fixture &f, CallableBuilder builder) {
  std::int32_t id = -1;
  return f.engine().prepare_callable(builder.spec(), &id);
}

Status launch_host(Fixture &f, std::int32_t id) {
  const std::vector<TensorArg> tensors = {{f.host_in.data(), kN * 4, RRT_SPACE_HOST},
                                          {f.host_out.data(), kN * 4, RRT_SPACE_HOST}};
  return f.engine().kernel_launch(id, RunArgsView{tensors, {}}, f.stream());
}

const std::map<GrowthPoint, Scenario> &scenarios() {
  static const std::map<GrowthPoint, Scenario> kScenarios = {
      {GrowthPoint::kArenaGmHeap,
       {"a callable with 16x the intermediates", keep_plan,
        [](Fixture &f) { return prepare(f, axpy(RRT_BIND_DEVICE_BUILD, 16 * kN, 2.0F)); }}},
      {GrowthPoint::kArenaGmSm,
       {"a callable with more tasks than the scheduler state holds", keep_plan,
        [](Fixture &f) { return prepare(f, chain(32)); }}},
      {GrowthPoint::kArenaRuntimePool,
       {"a third resident image in a pool planned for two callables", keep_plan,
        [](Fixture &f) { return prepare(f, axpy(RRT_BIND_DEVICE_BUILD, kN, 5.0F)); }}},
      {GrowthPoint::kRetainedStaging,
       {"a device-build launch staging more HOST bytes than planned",
        [](CapacityPlan *plan) { plan->retained_staging_bytes = kN * 4; },
        [](Fixture &f) { return launch_host(f, f.a()); }}},
      {GrowthPoint::kGraphDefinition,
       {"a second host-build definition in a store planned for one", keep_plan,
        [](Fixture &f) { return prepare(f, axpy(RRT_BIND_HOST_BUILD, kN, 6.0F)); }}},
      {GrowthPoint::kHostStaging,
       {"a host-build launch staging more HOST bytes than planned",
        [](CapacityPlan *plan) { plan->host_staging_bytes = kN * 4; },
        [](Fixture &f) { return launch_host(f, f.b()); }}},
      {GrowthPoint::kDfxCollectors,
       {"a callable with more tasks than the frozen profiling shape", keep_plan,
        [](Fixture &f) { return prepare(f, chain(kProfileShape + 1)); }}},
      {GrowthPoint::kLaunchAllocation,
       {"a launch whose HOST tensors need staging that was never planned",
        [](CapacityPlan *plan) { plan->retained_staging_bytes = 0; },
        [](Fixture &f) { return launch_host(f, f.a()); }}},
  };
  return kScenarios;
}

TEST(GrowthPointRegistryTest, EveryGrowthPointRefusesInKernelModeWithoutSideEffects) {
  for (const GrowthPointInfo &info : growth_point_registry()) {
    SCOPED_TRACE(::testing::Message()
                 << "growth point " << info.name << " (" << info.upstream << ")");
    const auto scenario = scenarios().find(info.point);
    ASSERT_NE(scenario, scenarios().end())
        << "growth point " << info.name << " has no kernel-mode refusal scenario here";
    Fixture fixture(scenario->second.adjust_plan);
    fixture.expect_graphs_replay_correctly(1.0F);
    const Fixture::Snapshot before = fixture.snapshot();
    const std::uint64_t refusals_before = EngineInspector::context(fixture.engine())
                                              .counters()
                                              .refusals[growth_point_index(info.point)]
                                              .load();

    const Status refused = scenario->second.provoke(fixture);

    EXPECT_EQ(refused.code(), RRT_ERR_INTERNAL)
        << scenario->second.growth << ": " << refused.message();
    EXPECT_EQ(refused.growth_point(), info.point) << refused.message();
    EXPECT_GT(refused.requested_bytes(), refused.capacity_bytes());
    EXPECT_TRUE(fixture.snapshot() == before) << scenario->second.growth << " changed state";
    EXPECT_EQ(EngineInspector::context(fixture.engine())
                  .counters()
                  .refusals[growth_point_index(info.point)]
                  .load(),
              refusals_before + 1);
    fixture.expect_graphs_replay_correctly(100.0F);
  }
}

// The blocks of a real kernel-mode context, not a list of names: every block the context
// created has a refusal scenario above, and every growth point but launch_allocation (the
// allocator's backstop, which guards every block) is the growth point of at least one block.
TEST(GrowthPointRegistryTest, EveryLiveBlockHasAScenarioAndEveryGrowthPointABlock) {
  Fixture fixture(keep_plan);
  std::map<GrowthPoint, int> blocks;
  EngineInspector::context(fixture.engine()).for_each_block([&](const GuardedBlock &block) {
    ++blocks[block.point()];
  });
  ASSERT_FALSE(blocks.empty());
  for (const auto &[point, count] : blocks) {
    EXPECT_NE(scenarios().find(point), scenarios().end())
        << count << " block(s) of growth point " << growth_point_name(point)
        << " have no kernel-mode refusal scenario";
  }
  for (const GrowthPointInfo &info : growth_point_registry()) {
    if (info.point == GrowthPoint::kNone || info.point == GrowthPoint::kLaunchAllocation) {
      continue;
    }
    EXPECT_NE(blocks.find(info.point), blocks.end())
        << "growth point " << info.name << " has no block in a live context";
  }
}

TEST(GrowthPointRegistryTest, EveryScenarioNamesARegisteredGrowthPoint) {
  for (const auto &[point, scenario] : scenarios()) {
    const int index = growth_point_index(point);
    ASSERT_GE(index, 0);
    ASSERT_LT(index, kGrowthPointCount);
    EXPECT_EQ(growth_point_registry()[static_cast<std::size_t>(index)].point, point);
  }
}

}  // namespace
}  // namespace replayrt
