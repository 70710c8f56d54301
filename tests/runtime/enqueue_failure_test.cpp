// Stream enqueues that fail part-way through a launch, a run launch or a replay, by a returned
// status or by a thrown std::bad_alloc (a host allocation failing), and what must hold beyond the
// public-call sweep's checks (tests/runtime/public_call_sweep_test.cpp, which fails every enqueue
// of these calls outside a capture): what a failed call enqueued before the failure stays queued,
// and later work is still ordered after that work (another stream's next launch, the slot's next
// program-mode prepare); inside a capture, the failure spoils the capture and nothing else.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "platform/sim/sim_device.h"
#include "platform/sim/sim_execution_fixture.h"
#include "runtime/engine.h"
#include "runtime/plan_fit.h"
#include "support/callable_builder.h"
#include "support/fault_injecting_device.h"
#include "support/published_state.h"

namespace replayrt {
namespace {

using sim::testing::Gate;
using testing::CallableBuilder;
using testing::f32;
using testing::imm_f32;
using testing::inter;
using testing::param;
using testing::PublishedState;

constexpr std::uint64_t kEnqueueFailureFloats = 256;
constexpr auto kEnqueueFailureBlockedFor = std::chrono::milliseconds(200);

// y = factor * x + x over kEnqueueFailureFloats floats, through one intermediate.
CallableBuilder enqueue_failure_axpy(rrt_bind_strategy_t bind, float factor) {
  CallableBuilder b(bind);
  b.param(f32({kEnqueueFailureFloats}))
      .param(f32({kEnqueueFailureFloats}, RRT_DIR_OUT))
      .intermediate(f32({kEnqueueFailureFloats}));
  b.task(testing::kScale, {param(0), inter(0), imm_f32(factor)});
  b.task(testing::kAdd, {inter(0), param(0), param(1)});
  return b;
}

enum class Failure { kStatus, kException };

// One engine over a fault-injecting simulated device, whose streams (a and b) fail the
// enqueue the test arms, and host buffers for HOST arguments.
class EnqueueFailureTest
    : public ::testing::TestWithParam<std::tuple<rrt_bind_strategy_t, Failure>> {
 public:
  EnqueueFailureTest(const EnqueueFailureTest &) = delete;
  EnqueueFailureTest &operator=(const EnqueueFailureTest &) = delete;
  EnqueueFailureTest(EnqueueFailureTest &&) = delete;
  EnqueueFailureTest &operator=(EnqueueFailureTest &&) = delete;

 protected:
  EnqueueFailureTest() = default;
  ~EnqueueFailureTest() override {
    for (Gate &gate : gates_) {
      gate.open();
    }
    for (Stream *stream : {a_.get(), b_.get()}) {
      if (stream != nullptr) {
        (void)stream->synchronize();
      }
    }
    graph_.reset();
    run_.reset();
    for (std::unique_ptr<Stream> *stream : {&a_, &b_}) {
      if (engine_ && *stream) {
        engine_->before_stream_destroy(**stream);
      }
      stream->reset();
    }
    engine_.reset();
  }

  void SetUp() override {
    auto device = std::make_unique<FaultInjectingDevice>(sim_);
    faults_ = device.get();
    ASSERT_TRUE(Engine::create(std::move(device), 1, generations_, &engine_).is_ok());
    ASSERT_TRUE(engine_->create_stream(&a_).is_ok());
    ASSERT_TRUE(engine_->create_stream(&b_).is_ok());
  }

  // Kernel init fitted for the swept callable (as 0) and the other bind's (as 1), both
  // prepared.
  void kernel_mode() {
    const CallableSpec descs[] = {swept_.spec(), other_.spec()};
    CapacityPlan plan;
    ASSERT_TRUE(fit_capacity_plan(descs, PlanFit::kSideBySide, &plan).is_ok());
    ASSERT_TRUE(engine_->kernel_init(plan, 0, 0).is_ok());
    std::int32_t id = -1;
    ASSERT_TRUE(engine_->prepare_callable(swept_.spec(), &id).is_ok());
    ASSERT_EQ(id, 0);
    ASSERT_TRUE(engine_->prepare_callable(other_.spec(), &id).is_ok());
    ASSERT_EQ(id, 1);
  }

  RunArgsView host_args(float value) {
    in_.assign(kEnqueueFailureFloats, value);
    out_.assign(kEnqueueFailureFloats, -1.0F);
    host_tensors_ = {{in_.data(), kEnqueueFailureFloats * 4, RRT_SPACE_HOST},
                     {out_.data(), kEnqueueFailureFloats * 4, RRT_SPACE_HOST}};
    return RunArgsView{host_tensors_, {}};
  }

  // Launches callable 0 on `stream` with HOST tensors and checks y = 2x + x.
  void expect_swept_launch_works(Stream &stream) {
    const Status launched = engine_->kernel_launch(0, host_args(3.0F), stream);
    ASSERT_TRUE(launched.is_ok()) << launched.message();
    ASSERT_TRUE(stream.synchronize().is_ok());
    EXPECT_FLOAT_EQ(out_[0], 9.0F);
    EXPECT_FLOAT_EQ(out_[kEnqueueFailureFloats - 1], 9.0F);
  }

  // The enqueues `call` makes, counted on a clean run.
  template <typename Call>
  std::uint64_t enqueues_of(Call &&call) {
    const std::uint64_t before = faults_->enqueue_attempts();
    call();
    return faults_->enqueue_attempts() - before;
  }

  Gate &new_gate() { return gates_.emplace_back(); }

  // Runs `call` with the nth enqueue from now failing as the test's parameter says, and
  // checks that the call failed so: RRT_ERR_INTERNAL, or std::bad_alloc.
  template <typename Call>
  void expect_fails_at_enqueue(std::uint64_t n, Call &&call) {
    if (std::get<1>(GetParam()) == Failure::kStatus) {
      faults_->fail_nth_enqueue(n);
      const Status failed = call();
      EXPECT_EQ(failed.code(), RRT_ERR_INTERNAL) << failed.message();
    } else {
      faults_->throw_on_nth_enqueue(n);
      EXPECT_THROW((void)call(), std::bad_alloc);
    }
    faults_->clear_faults();
  }

  sim::SimDevice sim_;
  FaultInjectingDevice *faults_ = nullptr;
  GenerationRegistry generations_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Stream> a_;
  std::unique_ptr<Stream> b_;
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<ProgramRun> run_;
  std::deque<Gate> gates_;
  CallableBuilder swept_ = enqueue_failure_axpy(std::get<0>(GetParam()), 2.0F);
  CallableBuilder other_ =
      enqueue_failure_axpy(std::get<0>(GetParam()) == RRT_BIND_DEVICE_BUILD ? RRT_BIND_HOST_BUILD
                                                                            : RRT_BIND_DEVICE_BUILD,
                           3.0F);
  std::vector<float> in_;
  std::vector<float> out_;
  std::vector<TensorArg> host_tensors_;
};

// A launch that fails at any enqueue inside a capture spoils the capture and nothing else:
// the stream launches correctly afterwards.
TEST_P(EnqueueFailureTest, AKernelLaunchFailingAtAnEnqueueInsideACaptureSpoilsOnlyTheCapture) {
  ASSERT_NO_FATAL_FAILURE(kernel_mode());
  const std::uint64_t enqueues = enqueues_of([&] {
    ASSERT_TRUE(engine_->begin_capture(*a_).is_ok());
    ASSERT_TRUE(engine_->kernel_launch(0, host_args(1.0F), *a_).is_ok());
    std::unique_ptr<Graph> graph;
    ASSERT_TRUE(a_->end_capture(&graph).is_ok());
  });
  ASSERT_GE(enqueues, 3u);
  for (std::uint64_t n = 1; n <= enqueues; ++n) {
    SCOPED_TRACE(n);
    const PublishedState before = PublishedState::of(*engine_);
    ASSERT_TRUE(engine_->begin_capture(*a_).is_ok());
    expect_fails_at_enqueue(n, [&] { return engine_->kernel_launch(0, host_args(1.0F), *a_); });
    std::unique_ptr<Graph> graph;
    std::uint32_t profile_tasks = 1;
    EXPECT_EQ(engine_->end_capture(*a_, &graph, &profile_tasks).code(), RRT_ERR_INVALID_STATE)
        << "the capture kept a launch that failed part-way";
    EXPECT_EQ(graph, nullptr);
    EXPECT_EQ(profile_tasks, 0u);
    EXPECT_TRUE(PublishedState::of(*engine_).unchanged_by_a_failure_since(before))
        << "a failed launch changed published state";
    ASSERT_NO_FATAL_FAILURE(expect_swept_launch_works(*a_));
  }
}

// A kernel-mode launch on a that fails at its last enqueue leaves its copies in and its launch
// queued (behind a gate here): the next launch on b is still ordered after them, since they
// use the same staging and gm_heap.
TEST_P(EnqueueFailureTest, AKernelLaunchFailingAfterEnqueuingWorkStillOrdersTheNextStream) {
  ASSERT_NO_FATAL_FAILURE(kernel_mode());
  ASSERT_NO_FATAL_FAILURE(expect_swept_launch_works(*b_));
  const std::uint64_t enqueues = enqueues_of([&] { expect_swept_launch_works(*a_); });
  ASSERT_NO_FATAL_FAILURE(expect_swept_launch_works(*b_));
  Gate &gate = new_gate();
  ASSERT_TRUE(gate.block(*a_).is_ok());
  expect_fails_at_enqueue(enqueues,
                          [&] { return engine_->kernel_launch(0, host_args(1.0F), *a_); });
  ASSERT_TRUE(engine_->kernel_launch(0, host_args(3.0F), *b_).is_ok());
  std::future<Status> b_idle = std::async(std::launch::async, [this] { return b_->wait_idle(); });
  EXPECT_EQ(b_idle.wait_for(kEnqueueFailureBlockedFor), std::future_status::timeout)
      << "the next launch on another stream ran beside the work the failed launch enqueued";
  gate.open();
  EXPECT_TRUE(b_idle.get().is_ok());
  EXPECT_TRUE(b_->synchronize().is_ok());
  EXPECT_FLOAT_EQ(out_[0], 9.0F);
  EXPECT_TRUE(a_->synchronize().is_ok());
}

// A program-mode run launch failing at any enqueue: the run is failed and finalizes, and the
// slot's next prepare (which may resize the slot's buffers) waits for whatever the failed
// launch left queued (behind a gate here) before it touches the slot.
TEST_P(EnqueueFailureTest, ARunLaunchFailingAtAnyEnqueueKeepsTheSlotsNextPrepareWaiting) {
  ASSERT_TRUE(engine_->program_init().is_ok());
  std::int32_t id = -1;
  ASSERT_TRUE(engine_->prepare_callable(swept_.spec(), &id).is_ok());
  const auto run_on_a = [&](float value) {
    ASSERT_TRUE(engine_->run_prepare(id, host_args(value), &run_).is_ok());
    ASSERT_TRUE(engine_->run_launch(*run_, a_.get()).is_ok());
    ASSERT_TRUE(engine_->run_wait(*run_).is_ok());
    ASSERT_TRUE(engine_->run_finalize(*run_).is_ok());
    EXPECT_FLOAT_EQ(out_[0], value * 3.0F);
  };
  ASSERT_NO_FATAL_FAILURE(run_on_a(1.0F));
  std::uint64_t enqueues = 0;
  ASSERT_TRUE(engine_->run_prepare(id, host_args(2.0F), &run_).is_ok());
  enqueues = enqueues_of([&] { ASSERT_TRUE(engine_->run_launch(*run_, a_.get()).is_ok()); });
  ASSERT_TRUE(engine_->run_wait(*run_).is_ok());
  ASSERT_TRUE(engine_->run_finalize(*run_).is_ok());
  ASSERT_GE(enqueues, 3u);
  for (std::uint64_t n = 1; n <= enqueues; ++n) {
    SCOPED_TRACE(n);
    Gate &gate = new_gate();
    ASSERT_TRUE(gate.block(*a_).is_ok());
    ASSERT_TRUE(engine_->run_prepare(id, host_args(1.0F), &run_).is_ok());
    expect_fails_at_enqueue(n, [&] { return engine_->run_launch(*run_, a_.get()); });
    EXPECT_TRUE(engine_->run_finalize(*run_).is_ok());
    // The next run has host buffers of its own: the failed launch's queued copies still use
    // in_ and out_ once the gate opens.
    std::vector<float> next_in(kEnqueueFailureFloats, 4.0F);
    std::vector<float> next_out(kEnqueueFailureFloats, -1.0F);
    const std::vector<TensorArg> next_tensors = {
        {next_in.data(), kEnqueueFailureFloats * 4, RRT_SPACE_HOST},
        {next_out.data(), kEnqueueFailureFloats * 4, RRT_SPACE_HOST}};
    std::unique_ptr<ProgramRun> next;
    std::future<Status> prepared = std::async(std::launch::async, [&] {
      return engine_->run_prepare(id, RunArgsView{next_tensors, {}}, &next);
    });
    EXPECT_EQ(prepared.wait_for(kEnqueueFailureBlockedFor), std::future_status::timeout)
        << "the slot's next prepare did not wait for the failed launch's queued work";
    gate.open();
    ASSERT_TRUE(prepared.get().is_ok());
    ASSERT_TRUE(a_->synchronize().is_ok());
    ASSERT_TRUE(engine_->run_launch(*next, a_.get()).is_ok());
    ASSERT_TRUE(engine_->run_wait(*next).is_ok());
    ASSERT_TRUE(engine_->run_finalize(*next).is_ok());
    EXPECT_FLOAT_EQ(next_out[0], 12.0F);
    EXPECT_FLOAT_EQ(next_out[kEnqueueFailureFloats - 1], 12.0F);
  }
}

// A program-mode replay on b whose marking of the pipeline slots fails (the enqueues after the
// graph's: one event record per slot), by a returned status or a thrown std::bad_alloc. The
// graph is queued (behind a gate here, opened from another thread), so the replay returns OK,
// and a prepare on either slot that follows it does not return before the replay's work has
// run: that work reads the slot's buffers, which the prepare may resize.
TEST_P(EnqueueFailureTest, AProgramModeReplayWhoseSlotMarkFailsStillOrdersTheNextPrepare) {
  ASSERT_TRUE(engine_->program_init().is_ok());
  std::int32_t id = -1;
  ASSERT_TRUE(engine_->prepare_callable(swept_.spec(), &id).is_ok());
  ASSERT_TRUE(engine_->begin_capture(*a_).is_ok());
  ASSERT_TRUE(engine_->run_prepare(id, host_args(1.0F), &run_).is_ok());
  ASSERT_TRUE(engine_->run_launch(*run_, a_.get()).is_ok());
  ASSERT_TRUE(a_->end_capture(&graph_).is_ok());
  ASSERT_TRUE(engine_->run_finalize(*run_).is_ok());
  const std::uint64_t enqueues = enqueues_of([&] {
    ASSERT_TRUE(engine_->replay(*graph_, *b_).is_ok());
    ASSERT_TRUE(b_->synchronize().is_ok());
  });
  ASSERT_GE(enqueues, static_cast<std::uint64_t>(DeviceContext::kPipelineDepth) + 1);
  std::vector<float> next_in(kEnqueueFailureFloats, 4.0F);
  std::vector<float> next_out(kEnqueueFailureFloats, -1.0F);
  const std::vector<TensorArg> next_tensors = {
      {next_in.data(), kEnqueueFailureFloats * 4, RRT_SPACE_HOST},
      {next_out.data(), kEnqueueFailureFloats * 4, RRT_SPACE_HOST}};
  const RunArgsView next_args{next_tensors, {}};
  for (int held_slots = 0; held_slots < DeviceContext::kPipelineDepth; ++held_slots) {
    for (int mark = 0; mark < DeviceContext::kPipelineDepth; ++mark) {
      const std::uint64_t n = enqueues - DeviceContext::kPipelineDepth + 1 + mark;
      SCOPED_TRACE(::testing::Message() << "slots held " << held_slots << ", failing enqueue " << n
                                        << " of " << enqueues);
      // Slots below held_slots are taken first, so the prepare after the replay gets the next.
      std::vector<std::unique_ptr<ProgramRun>> held(static_cast<std::size_t>(held_slots));
      for (auto &run : held) {
        ASSERT_TRUE(engine_->run_prepare(id, next_args, &run).is_ok());
      }
      std::fill(out_.begin(), out_.end(), -1.0F);
      Gate &gate = new_gate();
      ASSERT_TRUE(gate.block(*b_).is_ok());
      std::future<void> opener = std::async(std::launch::async, [&gate] {
        std::this_thread::sleep_for(kEnqueueFailureBlockedFor);
        gate.open();
      });
      if (std::get<1>(GetParam()) == Failure::kStatus) {
        faults_->fail_nth_enqueue(n);
      } else {
        faults_->throw_on_nth_enqueue(n);
      }
      const Status replayed = engine_->replay(*graph_, *b_);
      faults_->clear_faults();
      EXPECT_TRUE(replayed.is_ok()) << replayed.message();
      std::unique_ptr<ProgramRun> next;
      ASSERT_TRUE(engine_->run_prepare(id, next_args, &next).is_ok());
      EXPECT_FLOAT_EQ(out_[0], 3.0F) << "the prepare returned before the replay's work ran";
      EXPECT_FLOAT_EQ(out_[kEnqueueFailureFloats - 1], 3.0F);
      opener.get();
      ASSERT_TRUE(b_->synchronize().is_ok());
      EXPECT_TRUE(engine_->run_finalize(*next).is_ok());
      for (auto &run : held) {
        EXPECT_TRUE(engine_->run_finalize(*run).is_ok());
      }
    }
  }
}

// A program-mode run launch failing at any enqueue inside a capture spoils the capture and
// nothing else: the run is failed and finalizes, and the next run on the stream computes.
TEST_P(EnqueueFailureTest, ARunLaunchFailingAtAnEnqueueInsideACaptureSpoilsOnlyTheCapture) {
  ASSERT_TRUE(engine_->program_init().is_ok());
  std::int32_t id = -1;
  ASSERT_TRUE(engine_->prepare_callable(swept_.spec(), &id).is_ok());
  const auto begin_capture = [&] {
    ASSERT_TRUE(engine_->begin_capture(*a_).is_ok());
    ASSERT_TRUE(engine_->run_prepare(id, host_args(1.0F), &run_).is_ok());
  };
  const std::uint64_t enqueues = enqueues_of([&] {
    begin_capture();
    ASSERT_TRUE(engine_->run_launch(*run_, a_.get()).is_ok());
    std::unique_ptr<Graph> graph;
    ASSERT_TRUE(a_->end_capture(&graph).is_ok());
    ASSERT_NE(graph, nullptr);
    ASSERT_TRUE(engine_->run_finalize(*run_).is_ok());
  });
  ASSERT_GE(enqueues, 3u);
  for (std::uint64_t n = 1; n <= enqueues; ++n) {
    SCOPED_TRACE(n);
    ASSERT_NO_FATAL_FAILURE(begin_capture());
    expect_fails_at_enqueue(n, [&] { return engine_->run_launch(*run_, a_.get()); });
    std::unique_ptr<Graph> graph;
    EXPECT_EQ(a_->end_capture(&graph).code(), RRT_ERR_INVALID_STATE)
        << "the capture kept a run launch that failed part-way";
    EXPECT_EQ(graph, nullptr);
    EXPECT_TRUE(engine_->run_finalize(*run_).is_ok());
    ASSERT_TRUE(engine_->run_prepare(id, host_args(2.0F), &run_).is_ok());
    ASSERT_TRUE(engine_->run_launch(*run_, a_.get()).is_ok());
    ASSERT_TRUE(engine_->run_wait(*run_).is_ok());
    ASSERT_TRUE(engine_->run_finalize(*run_).is_ok());
    EXPECT_FLOAT_EQ(out_[0], 6.0F);
    EXPECT_FLOAT_EQ(out_[kEnqueueFailureFloats - 1], 6.0F);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Binds, EnqueueFailureTest,
    ::testing::Combine(::testing::Values(RRT_BIND_DEVICE_BUILD, RRT_BIND_HOST_BUILD),
                       ::testing::Values(Failure::kStatus, Failure::kException)),
    [](const ::testing::TestParamInfo<std::tuple<rrt_bind_strategy_t, Failure>> &info) {
      const std::string bind =
          std::get<0>(info.param) == RRT_BIND_DEVICE_BUILD ? "DeviceBuild" : "HostBuild";
      return bind + (std::get<1>(info.param) == Failure::kStatus ? "Returned" : "Thrown");
    });

}  // namespace
}  // namespace replayrt
