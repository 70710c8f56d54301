// rrt_event_record and rrt_stream_wait_event failing at their enqueue, as the header promises:
// a record or wait that fails holds nothing and leaves nothing of itself in the capture, or
// spoils the capture. The context is built here over a FaultInjectingDevice (capi/handles.h),
// which fails the one enqueue the call makes by a returned status or a thrown std::bad_alloc;
// every call after that goes through the C ABI.
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <tuple>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "capi/handles.h"
#include "platform/sim/sim_device.h"
#include "support/fault_injecting_device.h"
#include "support/fault_injecting_stream.h"

namespace replayrt {
namespace {

enum class Failure { kStatus, kException };
enum class Operation { kRecord, kWait };

class EventEnqueueFailureTest : public ::testing::TestWithParam<std::tuple<Operation, Failure>> {
 public:
  EventEnqueueFailureTest(const EventEnqueueFailureTest &) = delete;
  EventEnqueueFailureTest &operator=(const EventEnqueueFailureTest &) = delete;
  EventEnqueueFailureTest(EventEnqueueFailureTest &&) = delete;
  EventEnqueueFailureTest &operator=(EventEnqueueFailureTest &&) = delete;

 protected:
  EventEnqueueFailureTest() = default;
  ~EventEnqueueFailureTest() override = default;

  void SetUp() override {
    auto device = std::make_unique<FaultInjectingDevice>(sim_);
    faults_ = device.get();
    auto context = std::make_unique<rrt_context_s>();
    ASSERT_TRUE(Engine::create(std::move(device), 1, generations_, &context->engine).is_ok());
    ctx_ = context.release();
    ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
    ASSERT_EQ(rrt_stream_create(ctx_, &stream_), RRT_OK);
    ASSERT_EQ(rrt_event_create(ctx_, &event_), RRT_OK);
  }

  void TearDown() override {
    faults_->clear_faults();
    if (event_ != nullptr) {
      EXPECT_EQ(rrt_event_destroy(event_), RRT_OK);
    }
    if (stream_ != nullptr) {
      EXPECT_EQ(rrt_stream_destroy(stream_), RRT_OK);
    }
    if (ctx_ != nullptr) {
      EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK);
    }
  }

  rrt_status_t operate() {
    return std::get<0>(GetParam()) == Operation::kRecord ? rrt_event_record(event_, stream_)
                                                         : rrt_stream_wait_event(stream_, event_);
  }

  // The operation with its enqueue failing as the parameter says: RRT_ERR_INTERNAL either way
  // (the C ABI reports a thrown std::bad_alloc as host out of memory).
  void expect_operation_fails() {
    if (std::get<1>(GetParam()) == Failure::kStatus) {
      faults_->fail_nth_enqueue(1);
    } else {
      faults_->throw_on_nth_enqueue(1);
    }
    EXPECT_EQ(operate(), RRT_ERR_INTERNAL);
    EXPECT_EQ(faults_->injected_failures(), 1u);
    faults_->clear_faults();
  }

  sim::SimDevice sim_;
  FaultInjectingDevice *faults_ = nullptr;
  GenerationRegistry generations_;
  rrt_context_t ctx_ = nullptr;
  rrt_stream_t stream_ = nullptr;
  rrt_event_t event_ = nullptr;
};

TEST_P(EventEnqueueFailureTest, AFailedOperationOutsideACaptureLeavesTheStreamAndEventWorking) {
  ASSERT_NO_FATAL_FAILURE(expect_operation_fails());
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK)
      << "an enqueue that never reached the stream became its sticky failure";
  EXPECT_EQ(operate(), RRT_OK);
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  int done = 0;
  EXPECT_EQ(rrt_event_query(event_, &done), RRT_OK);
  EXPECT_EQ(done, 1);
}

// Inside a capture: the event is not held (it can be destroyed at once), and the capture is
// spoiled when the failure reached the stream, or goes on without the operation when the call
// threw before reaching it; either way the stream captures and replays afterwards.
TEST_P(EventEnqueueFailureTest, AFailedOperationInsideACaptureHoldsNothing) {
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_NO_FATAL_FAILURE(expect_operation_fails());
  EXPECT_EQ(event_->graph_references.load(), 0)
      << "the capture holds an event whose record or wait failed";
  EXPECT_EQ(rrt_event_destroy(event_), RRT_OK);
  event_ = nullptr;
  rrt_graph_t graph = nullptr;
  const rrt_status_t ended = rrt_stream_end_capture(stream_, &graph);
  if (std::get<1>(GetParam()) == Failure::kStatus) {
    EXPECT_EQ(ended, RRT_ERR_INVALID_STATE) << "the capture kept going past a refused enqueue";
    EXPECT_EQ(graph, nullptr);
  } else {
    ASSERT_EQ(ended, RRT_OK) << "a call that failed before reaching the stream spoiled it";
    ASSERT_NE(graph, nullptr);
    EXPECT_EQ(rrt_graph_replay(graph, stream_), RRT_OK);
    EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
    EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  }
  ASSERT_EQ(rrt_event_create(ctx_, &event_), RRT_OK);
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  EXPECT_EQ(operate(), RRT_OK);
  graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK);
  EXPECT_EQ(event_->graph_references.load(), 1);
  EXPECT_EQ(rrt_graph_replay(graph, stream_), RRT_OK);
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
}

// A record or wait that races a capture beginning on another thread is either held by the
// capture (it landed there: the event cannot be destroyed while the graph holds it) or not in
// it at all. The capture begins right after the call looked whether the stream captures.
TEST_P(EventEnqueueFailureTest, AnOperationRacingABeginCaptureIsHeldIfAndOnlyIfItWasCaptured) {
  auto *stream = dynamic_cast<FaultInjectingStream *>(stream_->stream.get());
  ASSERT_NE(stream, nullptr);
  std::future<rrt_status_t> began;
  stream->on_next_capture_check([&] {
    began = std::async(std::launch::async, [&] { return rrt_stream_begin_capture(stream_); });
    // Long enough for a begin that is not held back to have begun the capture.
    (void)began.wait_for(std::chrono::milliseconds(200));
  });
  EXPECT_EQ(operate(), RRT_OK);
  ASSERT_TRUE(began.valid());
  ASSERT_EQ(began.get(), RRT_OK);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK);
  const bool captured = graph->graph->operation_count() != 0;
  EXPECT_EQ(event_->graph_references.load(), captured ? 1 : 0)
      << (captured ? "the graph holds the operation but not the event"
                   : "the graph holds the event but not the operation");
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
}

INSTANTIATE_TEST_SUITE_P(
    RecordAndWait, EventEnqueueFailureTest,
    ::testing::Combine(::testing::Values(Operation::kRecord, Operation::kWait),
                       ::testing::Values(Failure::kStatus, Failure::kException)),
    [](const ::testing::TestParamInfo<std::tuple<Operation, Failure>> &info) {
      const std::string operation =
          std::get<0>(info.param) == Operation::kRecord ? "Record" : "Wait";
      return operation + (std::get<1>(info.param) == Failure::kStatus ? "Returned" : "Thrown");
    });

}  // namespace
}  // namespace replayrt
