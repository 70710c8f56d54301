// The public-call failure sweep: for every engine call that changes state, in both modes and
// both binds, every point at which the call can fail is failed in turn, one point per run:
//   - each device allocation it makes (the device returns null: RRT_ERR_OUT_OF_MEMORY);
//   - each synchronous transfer, an upload, download or zeroing (RRT_ERR_INTERNAL);
//   - each stream enqueue, failed by a returned status (RRT_ERR_INTERNAL) and by a thrown
//     std::bad_alloc;
//   - each host allocation of the calling thread (this program links the replacement of the
//     global operator new), alone and with every one after it (a persistent host out of memory:
//     the call must return or throw std::bad_alloc, never terminate).
// The points are those the same call makes on a clean run. After each failure the stream's
// queued work still completes, and every published base, capacity, use and key, the live
// bytes and the held allocations are as they were; the call then succeeds, and the context
// still does everything its plan was fitted for (in kernel mode: the other callable prepares
// and launches, and a graph captured before the failure replays bit for bit).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "platform/sim/sim_device.h"
#include "runtime/engine.h"
#include "runtime/plan_fit.h"
#include "support/callable_builder.h"
#include "support/engine_inspector.h"
#include "support/fault_injecting_device.h"
#include "support/host_allocation_faults.h"
#include "support/published_state.h"

namespace replayrt {
namespace {

using testing::CallableBuilder;
using testing::f32;
using testing::HostAllocationCounter;
using testing::imm_f32;
using testing::inter;
using testing::NthHostAllocationFails;
using testing::param;
using testing::PublishedState;

constexpr std::uint64_t kN = 256;

// y = factor * x + x over n floats, through one intermediate.
CallableBuilder axpy(rrt_bind_strategy_t bind, std::uint64_t n, float factor) {
  CallableBuilder b(bind);
  b.param(f32({n})).param(f32({n}, RRT_DIR_OUT)).intermediate(f32({n}));
  b.task(testing::kScale, {param(0), inter(0), imm_f32(factor)});
  b.task(testing::kAdd, {inter(0), param(0), param(1)});
  return b;
}

// One engine with profiling on over a fault-injecting simulated device, a stream of the
// engine's (so its enqueues can fail), and the callables the calls use: `a` (device build,
// y = 3x) and `b` (host build, y = 4x) the kernel-mode plan is fitted for, and two larger ones
// for program mode.
struct Rig {
  Rig() {
    auto device = std::make_unique<FaultInjectingDevice>(sim);
    faults = device.get();
    EXPECT_TRUE(Engine::create(std::move(device), 1, generations, &engine).is_ok());
    engine->enable_profiling();
    EXPECT_TRUE(engine->create_stream(&stream).is_ok());
    device_in = sim.allocate(kN * 4);
    device_out = sim.allocate(kN * 4);
  }

  sim::SimDevice sim;
  FaultInjectingDevice *faults = nullptr;
  GenerationRegistry generations;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Stream> stream;
  CallableBuilder a = axpy(RRT_BIND_DEVICE_BUILD, kN, 2.0F);
  CallableBuilder b = axpy(RRT_BIND_HOST_BUILD, kN, 3.0F);
  CallableBuilder large_host = axpy(RRT_BIND_HOST_BUILD, 4 * kN, 4.0F);
  CallableBuilder large_device = axpy(RRT_BIND_DEVICE_BUILD, 4 * kN, 5.0F);
  std::vector<float> in = std::vector<float>(4 * kN, 1.0F);
  std::vector<float> out = std::vector<float>(4 * kN, 0.0F);
  std::unique_ptr<ProgramRun> run;
  // A graph captured before the swept call, and what its replay wrote then.
  std::unique_ptr<Graph> graph;
  std::vector<std::uint32_t> replayed;
  void *device_in = nullptr;
  void *device_out = nullptr;

  Rig(const Rig &) = delete;
  Rig &operator=(const Rig &) = delete;
  Rig(Rig &&) = delete;
  Rig &operator=(Rig &&) = delete;
  ~Rig() {
    (void)stream->synchronize();
    graph.reset();
    run.reset();
    engine->before_stream_destroy(*stream);
    stream.reset();
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

RunArgsView host_args(Rig &rig, std::uint64_t n, std::vector<TensorArg> *tensors) {
  *tensors = {{rig.in.data(), n * 4, RRT_SPACE_HOST}, {rig.out.data(), n * 4, RRT_SPACE_HOST}};
  return RunArgsView{*tensors, {}};
}

std::vector<std::uint32_t> bits_of(const std::vector<float> &values, std::uint64_t n) {
  std::vector<std::uint32_t> bits(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    bits[i] = std::bit_cast<std::uint32_t>(values[i]);
  }
  return bits;
}

// Replays the rig's kernel-mode graph (over the device buffers) on fresh inputs and returns
// the bits it wrote.
std::vector<std::uint32_t> replay_captured(Rig &rig) {
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
  return bits_of(result, kN);
}

// Replays the rig's program-mode graph (over the rig's host buffers) and returns the bits it
// wrote.
std::vector<std::uint32_t> replay_captured_run(Rig &rig) {
  std::fill(rig.out.begin(), rig.out.end(), -1.0F);
  EXPECT_TRUE(rig.engine->replay(*rig.graph, *rig.stream).is_ok());
  EXPECT_TRUE(rig.stream->synchronize().is_ok());
  return bits_of(rig.out, kN);
}

void expect_replays_as_captured(Rig &rig) {
  EXPECT_EQ(replay_captured(rig), rig.replayed)
      << "a graph captured before the failure replays differently";
}

// Captures one kernel-mode launch of callable `id` over the rig's device buffers and replays
// it once, keeping what it wrote.
void capture_and_replay(Rig &rig, std::int32_t id) {
  std::vector<TensorArg> tensors;
  ASSERT_TRUE(rig.engine->begin_capture(*rig.stream).is_ok());
  ASSERT_TRUE(rig.engine->kernel_launch(id, device_args(rig, &tensors), *rig.stream).is_ok());
  ASSERT_TRUE(rig.stream->end_capture(&rig.graph).is_ok());
  rig.replayed = replay_captured(rig);
}

// Launches callable `id` (y = factor * x + x) with HOST tensors, waits, and checks the result.
void expect_launch_computes(Rig &rig, std::int32_t id, float factor) {
  std::vector<TensorArg> tensors;
  std::fill(rig.out.begin(), rig.out.end(), -1.0F);
  const Status launched = rig.engine->kernel_launch(id, host_args(rig, kN, &tensors), *rig.stream);
  ASSERT_TRUE(launched.is_ok()) << launched.message();
  ASSERT_TRUE(rig.stream->synchronize().is_ok());
  EXPECT_FLOAT_EQ(rig.out[0], factor + 1.0F);
  EXPECT_FLOAT_EQ(rig.out[kN - 1], factor + 1.0F);
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

// Kernel mode with `a` prepared as callable 0 and `b` as 1.
void kernel_mode_with_both(Rig &rig) {
  ASSERT_TRUE(kernel_init(rig, 0).is_ok());
  ASSERT_TRUE(prepare(rig, rig.a).is_ok());
  ASSERT_TRUE(prepare(rig, rig.b).is_ok());
}

// Program mode with a, b, large_host and large_device prepared as callables 0 to 3.
void program_mode_with_callables(Rig &rig) {
  ASSERT_TRUE(rig.engine->program_init().is_ok());
  for (CallableBuilder *builder : {&rig.a, &rig.b, &rig.large_host, &rig.large_device}) {
    ASSERT_TRUE(prepare(rig, *builder).is_ok());
  }
}

// Prepares a program-mode run of callable `id` over n floats of the rig's host buffers.
Status run_prepare(Rig &rig, std::int32_t id, std::uint64_t n) {
  std::vector<TensorArg> tensors;
  return rig.engine->run_prepare(id, host_args(rig, n, &tensors), &rig.run);
}

// Finalizes the rig's run, if any.
void finalize_run(Rig &rig) {
  if (rig.run) {
    ASSERT_TRUE(rig.engine->run_finalize(*rig.run).is_ok());
    rig.run.reset();
  }
}

// A run of callable `id` over n floats was prepared and finalized (its slot's blocks sized).
void ran_before(Rig &rig, std::int32_t id, std::uint64_t n) {
  ASSERT_TRUE(run_prepare(rig, id, n).is_ok());
  finalize_run(rig);
}

// With the rig's run prepared, a run of callable `id` prepares on every other pipeline slot at
// once: no failed call kept a slot.
void expect_every_slot_prepares(Rig &rig, std::int32_t id) {
  std::vector<TensorArg> tensors;
  std::vector<std::unique_ptr<ProgramRun>> others(DeviceContext::kPipelineDepth - 1);
  for (std::unique_ptr<ProgramRun> &other : others) {
    const Status prepared = rig.engine->run_prepare(id, host_args(rig, kN, &tensors), &other);
    EXPECT_TRUE(prepared.is_ok()) << "a failed call kept a pipeline slot: " << prepared.message();
  }
  for (std::unique_ptr<ProgramRun> &other : others) {
    if (other) {
      EXPECT_TRUE(rig.engine->run_finalize(*other).is_ok());
    }
  }
}

// Launches the rig's prepared run on the stream.
Status run_launch(Rig &rig) {
  return rig.engine->run_launch(*rig.run, rig.stream.get());
}

// Waits for the rig's launched run of a callable y = factor * x + x and checks it.
void expect_run_computed(Rig &rig, float factor) {
  ASSERT_TRUE(rig.engine->run_wait(*rig.run).is_ok());
  EXPECT_FLOAT_EQ(rig.out[0], factor + 1.0F);
  EXPECT_FLOAT_EQ(rig.out[kN - 1], factor + 1.0F);
  finalize_run(rig);
}

// Captures a program-mode run of callable `id` on the stream and replays it once, keeping
// what it wrote.
void capture_run_and_replay(Rig &rig, std::int32_t id) {
  ASSERT_TRUE(rig.engine->begin_capture(*rig.stream).is_ok());
  ASSERT_TRUE(run_prepare(rig, id, kN).is_ok());
  ASSERT_TRUE(run_launch(rig).is_ok());
  ASSERT_TRUE(rig.stream->end_capture(&rig.graph).is_ok());
  finalize_run(rig);
  rig.replayed = replay_captured_run(rig);
}

struct PublicCall {
  std::string name;
  std::function<void(Rig &)> setup;
  std::function<Status(Rig &)> call;
  // What the context must still do after the call succeeded (in kernel mode: what the plan was
  // also fitted for); none when empty.
  std::function<void(Rig &)> still_fits = {};
  // The call again after a failure, when that is more than the call itself (a failed run
  // launch fails its run: the retry prepares another).
  std::function<Status(Rig &)> retry = {};
  // The call's last enqueues whose failure it absorbs (a program-mode replay waits for the
  // device instead of marking its slots): they fail nothing.
  std::uint64_t absorbed_trailing_enqueues = 0;
};

// The kernel-mode and program-mode calls, each once per bind where the bind matters.
std::vector<PublicCall> public_calls() {
  std::vector<PublicCall> calls = {
      {.name = "KernelInit",
       .setup = [](Rig &) {},
       .call = [](Rig &rig) { return kernel_init(rig, 4); },
       .still_fits =
           [](Rig &rig) {
             EXPECT_TRUE(prepare(rig, rig.a).is_ok());
             EXPECT_TRUE(prepare(rig, rig.b).is_ok());
           }},
      {.name = "ProgramPrepare",
       .setup = [](Rig &rig) { ASSERT_TRUE(rig.engine->program_init().is_ok()); },
       .call = [](Rig &rig) { return prepare(rig, rig.b); },
       .still_fits =
           [](Rig &rig) {
             ASSERT_TRUE(run_prepare(rig, 0, kN).is_ok()) << "the failed prepare consumed an id";
             ASSERT_TRUE(run_launch(rig).is_ok());
             expect_run_computed(rig, 3.0F);
           }},
  };
  // The swept callable of a bind, the other bind's, the swept one's factor, and the ids they
  // get: in kernel mode a is prepared as 0 and b as 1; in program mode a, b, large_host and
  // large_device are 0 to 3.
  struct Bind {
    const char *name;
    CallableBuilder Rig::*swept;
    CallableBuilder Rig::*other;
    float factor;
    float other_factor;
    std::int32_t kernel_id;
    std::int32_t program_id;
    std::int32_t large_program_id;
  };
  for (const Bind bind : {Bind{"DeviceBuild", &Rig::a, &Rig::b, 2.0F, 3.0F, 0, 0, 3},
                          Bind{"HostBuild", &Rig::b, &Rig::a, 3.0F, 2.0F, 1, 1, 2}}) {
    const std::string suffix = bind.name;
    const std::int32_t id = bind.kernel_id;
    calls.push_back({.name = "KernelPrepare" + suffix,
                     .setup = [](Rig &rig) { ASSERT_TRUE(kernel_init(rig, 0).is_ok()); },
                     .call = [bind](Rig &rig) { return prepare(rig, rig.*bind.swept); },
                     .still_fits =
                         [bind](Rig &rig) {
                           const Status other = prepare(rig, rig.*bind.other);
                           EXPECT_TRUE(other.is_ok()) << other.message();
                         }});
    calls.push_back({.name = "KernelPrepare" + suffix + "AfterACapture",
                     .setup =
                         [bind](Rig &rig) {
                           ASSERT_TRUE(kernel_init(rig, 0).is_ok());
                           ASSERT_TRUE(prepare(rig, rig.*bind.other).is_ok());
                           capture_and_replay(rig, 0);
                         },
                     .call = [bind](Rig &rig) { return prepare(rig, rig.*bind.swept); },
                     .still_fits =
                         [bind](Rig &rig) {
                           expect_replays_as_captured(rig);
                           expect_launch_computes(rig, 1, bind.factor);
                         }});
    calls.push_back({.name = "KernelLaunch" + suffix,
                     .setup =
                         [id](Rig &rig) {
                           kernel_mode_with_both(rig);
                           capture_and_replay(rig, 1 - id);
                         },
                     .call =
                         [id](Rig &rig) {
                           std::vector<TensorArg> tensors;
                           return rig.engine->kernel_launch(id, host_args(rig, kN, &tensors),
                                                            *rig.stream);
                         },
                     .still_fits =
                         [id, bind](Rig &rig) {
                           ASSERT_TRUE(rig.stream->synchronize().is_ok());
                           EXPECT_FLOAT_EQ(rig.out[kN - 1], bind.factor + 1.0F);
                           expect_replays_as_captured(rig);
                           expect_launch_computes(rig, 1 - id, bind.other_factor);
                         }});
    calls.push_back({.name = "KernelReplay" + suffix,
                     .setup =
                         [id](Rig &rig) {
                           kernel_mode_with_both(rig);
                           capture_and_replay(rig, id);
                         },
                     .call = [](Rig &rig) { return rig.engine->replay(*rig.graph, *rig.stream); },
                     .still_fits =
                         [id, bind](Rig &rig) {
                           expect_replays_as_captured(rig);
                           expect_launch_computes(rig, 1 - id, bind.other_factor);
                         }});
    calls.push_back(
        {.name = "ProgramFirstRun" + suffix,
         .setup = program_mode_with_callables,
         .call = [bind](Rig &rig) { return run_prepare(rig, bind.program_id, kN); },
         .still_fits = [bind](Rig &rig) { expect_every_slot_prepares(rig, bind.program_id); }});
    calls.push_back(
        {.name = "Program" + suffix + "RunThatGrowsEveryBlock",
         .setup =
             [bind](Rig &rig) {
               program_mode_with_callables(rig);
               ran_before(rig, bind.program_id, kN);
             },
         .call = [bind](Rig &rig) { return run_prepare(rig, bind.large_program_id, 4 * kN); },
         .still_fits = [bind](Rig &rig) { expect_every_slot_prepares(rig, bind.program_id); }});
    calls.push_back({.name = "ProgramRunLaunch" + suffix,
                     .setup =
                         [bind](Rig &rig) {
                           program_mode_with_callables(rig);
                           ASSERT_TRUE(run_prepare(rig, bind.program_id, kN).is_ok());
                         },
                     .call = run_launch,
                     .still_fits = [bind](Rig &rig) { expect_run_computed(rig, bind.factor); },
                     .retry =
                         [bind](Rig &rig) {
                           finalize_run(rig);
                           RRT_RETURN_IF_ERROR(run_prepare(rig, bind.program_id, kN));
                           return run_launch(rig);
                         }});
    calls.push_back(
        {.name = "ProgramReplay" + suffix,
         .setup =
             [bind](Rig &rig) {
               program_mode_with_callables(rig);
               capture_run_and_replay(rig, bind.program_id);
             },
         .call = [](Rig &rig) { return rig.engine->replay(*rig.graph, *rig.stream); },
         .still_fits = [](Rig &rig) { EXPECT_EQ(replay_captured_run(rig), rig.replayed); },
         .absorbed_trailing_enqueues = DeviceContext::kPipelineDepth});
  }
  return calls;
}

// GoogleTest finds a value printer by this name.
// NOLINTNEXTLINE(readability-identifier-naming)
void PrintTo(const PublicCall &call, std::ostream *os) {
  *os << call.name;
}

enum class Fault {
  kDeviceAllocation,
  kTransfer,
  kEnqueueReturned,
  kEnqueueThrown,
  kHostAllocation,
  kPersistentHostAllocation,
};

const char *name_of(Fault fault) {
  switch (fault) {
    case Fault::kDeviceAllocation:
      return "device allocation";
    case Fault::kTransfer:
      return "transfer";
    case Fault::kEnqueueReturned:
      return "enqueue (returned)";
    case Fault::kEnqueueThrown:
      return "enqueue (thrown)";
    case Fault::kHostAllocation:
      return "host allocation";
    case Fault::kPersistentHostAllocation:
      return "host allocation (persistent)";
  }
  return "?";
}

// One failure point of a call: its nth attempt of one kind.
struct FailurePoint {
  Fault fault;
  std::uint64_t n;
};

// How a call ended: returned a status, or threw std::bad_alloc.
struct Outcome {
  Status status;
  bool threw = false;

  bool failed() const { return threw || !status.is_ok(); }
};

Outcome call_catching(const std::function<Status(Rig &)> &call, Rig &rig) {
  try {
    return Outcome{call(rig), false};
  } catch (const std::bad_alloc &) {
    return Outcome{Status::ok(), true};
  }
}

// Runs the call with `point` armed.
Outcome call_failing_at(const PublicCall &call, Rig &rig, const FailurePoint &point) {
  switch (point.fault) {
    case Fault::kDeviceAllocation:
      rig.faults->fail_nth_allocation(point.n);
      break;
    case Fault::kTransfer:
      rig.faults->fail_nth_transfer(point.n);
      break;
    case Fault::kEnqueueReturned:
      rig.faults->fail_nth_enqueue(point.n);
      break;
    case Fault::kEnqueueThrown:
      rig.faults->throw_on_nth_enqueue(point.n);
      break;
    case Fault::kHostAllocation:
    case Fault::kPersistentHostAllocation: {
      const NthHostAllocationFails failing(point.n,
                                           point.fault == Fault::kPersistentHostAllocation);
      return call_catching(call.call, rig);
    }
  }
  Outcome outcome = call_catching(call.call, rig);
  rig.faults->clear_faults();
  return outcome;
}

// The failure points of the call: every attempt of every kind it makes on a clean run.
std::vector<FailurePoint> failure_points_of(const PublicCall &call) {
  Rig rig;
  call.setup(rig);
  const std::uint64_t allocations = rig.faults->allocation_attempts();
  const std::uint64_t transfers = rig.faults->transfer_attempts();
  const std::uint64_t enqueues = rig.faults->enqueue_attempts();
  std::uint64_t host_allocations = 0;
  {
    const HostAllocationCounter counted;
    const Status status = call.call(rig);
    host_allocations = counted.count();
    EXPECT_TRUE(status.is_ok()) << status.message();
  }
  std::vector<FailurePoint> points;
  const auto add = [&points](Fault fault, std::uint64_t count) {
    for (std::uint64_t n = 1; n <= count; ++n) {
      points.push_back({fault, n});
    }
  };
  add(Fault::kDeviceAllocation, rig.faults->allocation_attempts() - allocations);
  add(Fault::kTransfer, rig.faults->transfer_attempts() - transfers);
  add(Fault::kEnqueueReturned, rig.faults->enqueue_attempts() - enqueues);
  add(Fault::kEnqueueThrown, rig.faults->enqueue_attempts() - enqueues);
  add(Fault::kHostAllocation, host_allocations);
  add(Fault::kPersistentHostAllocation, host_allocations);
  return points;
}

class PublicCallSweepTest : public ::testing::TestWithParam<PublicCall> {};

// Runs of a host-allocation failure point before its allocation is taken as one the call does
// not always make.
constexpr int kHostFaultAttempts = 8;

TEST_P(PublicCallSweepTest, AFailureAtAnyPointChangesNothingAndTheCallSucceedsAfter) {
  const PublicCall &call = GetParam();
  const std::vector<FailurePoint> points = failure_points_of(call);
  ASSERT_FALSE(points.empty()) << "the call has no failure point: nothing to sweep";
  std::uint64_t enqueues = 0;
  for (const FailurePoint &point : points) {
    if (point.fault == Fault::kEnqueueReturned) {
      enqueues = point.n;
    }
  }
  std::uint64_t host_failures = 0;
  for (const FailurePoint &point : points) {
    SCOPED_TRACE(::testing::Message() << "failing " << name_of(point.fault) << " " << point.n);
    const bool host_fault =
        point.fault == Fault::kHostAllocation || point.fault == Fault::kPersistentHostAllocation;
    // Whether an enqueue allocates depends on how much work the stream's executor had taken
    // (its queue's storage grows or is reused), so a host allocation of the counting run may not
    // come in another run. Such a point is tried again on a fresh rig until it fails.
    const int attempts = host_fault ? kHostFaultAttempts : 1;
    for (int attempt = 1; attempt <= attempts; ++attempt) {
      Rig rig;
      ASSERT_NO_FATAL_FAILURE(call.setup(rig));
      const PublishedState before = PublishedState::of(*rig.engine);
      const Outcome outcome = call_failing_at(call, rig, point);
      if (host_fault && !outcome.failed() && attempt < attempts) {
        continue;
      }
      switch (point.fault) {
        case Fault::kDeviceAllocation:
          EXPECT_FALSE(outcome.threw);
          EXPECT_EQ(outcome.status.code(), RRT_ERR_OUT_OF_MEMORY) << outcome.status.message();
          break;
        case Fault::kTransfer:
          EXPECT_FALSE(outcome.threw);
          EXPECT_EQ(outcome.status.code(), RRT_ERR_INTERNAL) << outcome.status.message();
          break;
        case Fault::kEnqueueReturned:
        case Fault::kEnqueueThrown:
          if (point.n + call.absorbed_trailing_enqueues > enqueues) {
            EXPECT_FALSE(outcome.failed()) << outcome.status.message();
          } else if (point.fault == Fault::kEnqueueThrown) {
            EXPECT_TRUE(outcome.threw) << outcome.status.message();
          } else {
            EXPECT_EQ(outcome.status.code(), RRT_ERR_INTERNAL) << outcome.status.message();
          }
          break;
        case Fault::kHostAllocation:
        case Fault::kPersistentHostAllocation:
          // A refused host allocation is thrown, or reported as host (or the simulator's device)
          // memory running out; an allocation whose failure the call absorbs fails nothing.
          if (outcome.failed()) {
            ++host_failures;
            EXPECT_TRUE(outcome.threw || outcome.status.code() == RRT_ERR_INTERNAL ||
                        outcome.status.code() == RRT_ERR_OUT_OF_MEMORY)
                << outcome.status.message();
          }
          break;
      }
      const Status drained = rig.stream->synchronize();
      EXPECT_TRUE(drained.is_ok())
          << "the work queued before the failure failed: " << drained.message();
      if (!outcome.failed()) {
        break;
      }
      EXPECT_TRUE(PublishedState::of(*rig.engine).unchanged_by_a_failure_since(before))
          << "the failed call changed state";
      const Outcome again = call_catching(call.retry ? call.retry : call.call, rig);
      ASSERT_FALSE(again.failed()) << "the call after the failure: " << again.status.message();
      if (call.still_fits) {
        ASSERT_NO_FATAL_FAILURE(call.still_fits(rig));
      }
      break;
    }
  }
  bool allocates_on_the_host = false;
  for (const FailurePoint &point : points) {
    allocates_on_the_host = allocates_on_the_host || point.fault == Fault::kHostAllocation;
  }
  if (allocates_on_the_host) {
    EXPECT_GE(host_failures, 1u) << "no host allocation of the call could fail";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCallThatChangesState, PublicCallSweepTest,
                         ::testing::ValuesIn(public_calls()),
                         [](const ::testing::TestParamInfo<PublicCall> &info) {
                           return info.param.name;
                         });

// The probe from the structural review: a kernel-mode prepare that fails after the image was
// placed gave the frozen capacity away, so a callable the plan was fitted for was refused.
TEST(KernelPrepareFailureTest, AFailedPrepareKeepsRoomForEveryCallableThePlanWasFittedFor) {
  Rig rig;
  ASSERT_TRUE(kernel_init(rig, 0).is_ok());
  const RegionStats pool =
      EngineInspector::context(*rig.engine).region_stats(GrowthPoint::kArenaRuntimePool);
  // With a profiling shape of 0 the first prepare makes the collectors' first allocation.
  rig.faults->fail_nth_allocation(1);
  EXPECT_EQ(prepare(rig, rig.a).code(), RRT_ERR_OUT_OF_MEMORY);
  rig.faults->clear_faults();
  EXPECT_EQ(EngineInspector::context(*rig.engine).region_stats(GrowthPoint::kArenaRuntimePool).used,
            pool.used);
  ASSERT_TRUE(prepare(rig, rig.a).is_ok());
  const Status second = prepare(rig, rig.b);
  EXPECT_TRUE(second.is_ok()) << second.message();
}

}  // namespace
}  // namespace replayrt
