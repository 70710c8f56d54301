// LaunchOrder over a SimDevice: a gate launch holds the previous stream's work back, so what
// the ordered stream's work observes (and whether it has run) is deterministic.
#include "runtime/launch_order.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "platform/sim/sim_device.h"
#include "platform/sim/sim_execution_fixture.h"

namespace replayrt {
namespace {

using sim::testing::Gate;
using sim::testing::set_flag_entry;

constexpr auto kLaunchOrderBlockedFor = std::chrono::milliseconds(200);

// Records whether `source` was set when the launch ran: 1 set, 0 not, -1 never ran.
struct Observation {
  const std::atomic<bool> *source = nullptr;
  std::atomic<int> seen{-1};
};

Status observe_entry(void *context, const std::byte * /*invocation*/, std::size_t /*bytes*/) {
  auto *const observation = static_cast<Observation *>(context);
  observation->seen.store(observation->source->load(std::memory_order_acquire) ? 1 : 0,
                          std::memory_order_release);
  return Status::ok();
}

Status failing_entry(void * /*context*/, const std::byte * /*invocation*/, std::size_t /*bytes*/) {
  return Status::error(RRT_ERR_KERNEL_FAILED, "failing_entry failed");
}

Status launch(Stream &stream, DeviceEntry entry, void *context) {
  LaunchRequest request;
  request.entry = entry;
  request.entry_context = context;
  return stream.enqueue_launch(request);
}

// An event no simulator stream can record or wait on: every record_event with it fails.
class UnrecordableEvent final : public Event {
 public:
  Status synchronize() override { return Status::ok(); }
  void wait() override {}
  bool query() const override { return true; }
};

// Owns the device, a LaunchOrder over one of its events (kept in view as tail_), streams, gates
// and the flag and observation that queued work writes. The gates open before the streams are
// destroyed, and the streams go before the order, the device, the flag and the observation, so
// a failed assertion cannot leave queued work blocked or dangling.
class LaunchOrderTest : public ::testing::Test {
 public:
  LaunchOrderTest(const LaunchOrderTest &) = delete;
  LaunchOrderTest &operator=(const LaunchOrderTest &) = delete;
  LaunchOrderTest(LaunchOrderTest &&) = delete;
  LaunchOrderTest &operator=(LaunchOrderTest &&) = delete;

 protected:
  LaunchOrderTest() = default;
  ~LaunchOrderTest() override {
    for (Gate &gate : gates_) {
      gate.open();
    }
  }

  void SetUp() override {
    std::unique_ptr<Event> tail;
    ASSERT_TRUE(device_.create_event(&tail).is_ok());
    tail_ = tail.get();
    order_ = std::make_unique<LaunchOrder>(std::move(tail));
  }

  Stream &new_stream() {
    std::unique_ptr<Stream> stream;
    const Status status = device_.create_stream(&stream);
    EXPECT_TRUE(status.is_ok()) << status.message();
    return *streams_.emplace_back(std::move(stream));
  }
  Gate &new_gate() { return gates_.emplace_back(); }
  // Replaces the order by one whose tail no stream can record.
  void order_over_an_unrecordable_tail() {
    order_ = std::make_unique<LaunchOrder>(std::make_unique<UnrecordableEvent>());
    tail_ = nullptr;
  }

  // Holds `a` back behind `gate`, queues work on it that sets a_done_ behind the gate, and
  // marks `a` the last ordered stream; observation_ observes a_done_.
  void order_held_back_work(Stream &a, Gate &gate) {
    observation_.source = &a_done_;
    ASSERT_TRUE(gate.block(a).is_ok());
    ASSERT_TRUE(launch(a, &set_flag_entry, &a_done_).is_ok());
    order_->mark_last(a);
  }

  std::atomic<bool> a_done_{false};
  Observation observation_;
  std::deque<Gate> gates_;
  sim::SimDevice device_;
  std::unique_ptr<LaunchOrder> order_;
  Event *tail_ = nullptr;
  std::vector<std::unique_ptr<Stream>> streams_;
};

// The last stream's next work is ordered already: the tail is not recorded (it stays
// complete while the stream is held back) and nothing is waited on.
TEST_F(LaunchOrderTest, WaitForPreviousOnTheLastStreamEnqueuesNothing) {
  const std::lock_guard<std::mutex> lock(order_->mutex());
  Stream &a = new_stream();
  Gate &gate = new_gate();
  ASSERT_TRUE(gate.block(a).is_ok());
  order_->mark_last(a);
  EXPECT_TRUE(order_->is_last(a));
  ASSERT_TRUE(order_->wait_for_previous(a).is_ok());
  EXPECT_TRUE(tail_->query()) << "the tail was recorded behind the held-back stream";

  // The same stream's record_tail does record it, behind the gate.
  ASSERT_TRUE(order_->record_tail().is_ok());
  EXPECT_FALSE(tail_->query());
  gate.open();
  order_->wait_for_tail();
  EXPECT_TRUE(tail_->query());
  EXPECT_TRUE(a.synchronize().is_ok());
}

// Another stream's next work runs only after the previous stream's last ordered work.
TEST_F(LaunchOrderTest, WaitForPreviousOnAnotherStreamWaitsForThePreviousStreamsWork) {
  const std::lock_guard<std::mutex> lock(order_->mutex());
  Stream &a = new_stream();
  Stream &b = new_stream();
  Gate &gate = new_gate();
  ASSERT_NO_FATAL_FAILURE(order_held_back_work(a, gate));

  EXPECT_FALSE(order_->is_last(b));
  ASSERT_TRUE(order_->wait_for_previous(b).is_ok());
  ASSERT_TRUE(launch(b, &observe_entry, &observation_).is_ok());
  order_->mark_last(b);
  EXPECT_TRUE(order_->is_last(b));
  EXPECT_FALSE(order_->is_last(a));

  std::future<Status> b_idle = std::async(std::launch::async, [&b] { return b.wait_idle(); });
  EXPECT_EQ(b_idle.wait_for(kLaunchOrderBlockedFor), std::future_status::timeout)
      << "the ordered stream's work ran while the previous stream's was held back";
  EXPECT_EQ(observation_.seen.load(), -1);
  gate.open();
  EXPECT_TRUE(b_idle.get().is_ok());
  EXPECT_TRUE(b.synchronize().is_ok());
  EXPECT_EQ(observation_.seen.load(), 1) << "the ordered work ran before the previous work";
  EXPECT_TRUE(a.synchronize().is_ok());
}

// With no previous ordered stream the tail was never recorded: the wait waits for nothing.
TEST_F(LaunchOrderTest, TheFirstOrderedStreamWaitsForNothing) {
  const std::lock_guard<std::mutex> lock(order_->mutex());
  Stream &a = new_stream();
  Stream &other = new_stream();
  // Work on a stream the order never saw does not hold the first ordered stream back.
  Gate &gate = new_gate();
  ASSERT_TRUE(gate.block(other).is_ok());
  std::atomic<bool> ran{false};
  ASSERT_TRUE(order_->wait_for_previous(a).is_ok());
  ASSERT_TRUE(launch(a, &set_flag_entry, &ran).is_ok());
  order_->mark_last(a);
  EXPECT_TRUE(a.synchronize().is_ok());
  EXPECT_TRUE(ran.load());
  EXPECT_TRUE(tail_->query());
  gate.open();
}

// The wait carries completion only: the previous stream's failure stays on that stream.
TEST_F(LaunchOrderTest, TheWaitCarriesThePreviousStreamsCompletionNotItsFailure) {
  const std::lock_guard<std::mutex> lock(order_->mutex());
  Stream &a = new_stream();
  Stream &b = new_stream();
  ASSERT_TRUE(launch(a, &failing_entry, nullptr).is_ok());
  order_->mark_last(a);
  ASSERT_TRUE(order_->wait_for_previous(b).is_ok());
  std::atomic<bool> ran{false};
  ASSERT_TRUE(launch(b, &set_flag_entry, &ran).is_ok());
  order_->mark_last(b);
  ASSERT_TRUE(order_->record_tail().is_ok());
  order_->wait_for_tail();
  EXPECT_TRUE(b.synchronize().is_ok());
  EXPECT_TRUE(ran.load());
  EXPECT_EQ(a.synchronize().code(), RRT_ERR_KERNEL_FAILED);
}

// forget() ends the last stream's ordered work at the tail: the next ordered stream waits for
// that work, and the forgotten stream is no longer the last.
TEST_F(LaunchOrderTest, ForgetEndsTheLastStreamsOrderedWorkAtTheTail) {
  const std::lock_guard<std::mutex> lock(order_->mutex());
  Stream &a = new_stream();
  Stream &b = new_stream();
  Gate &gate = new_gate();
  ASSERT_NO_FATAL_FAILURE(order_held_back_work(a, gate));
  ASSERT_TRUE(order_->forget(a).is_ok());
  EXPECT_FALSE(order_->is_last(a));
  EXPECT_FALSE(tail_->query()) << "forget did not record the tail after the stream's work";

  ASSERT_TRUE(order_->wait_for_previous(b).is_ok());
  ASSERT_TRUE(launch(b, &observe_entry, &observation_).is_ok());
  order_->mark_last(b);
  std::future<Status> b_idle = std::async(std::launch::async, [&b] { return b.wait_idle(); });
  EXPECT_EQ(b_idle.wait_for(kLaunchOrderBlockedFor), std::future_status::timeout)
      << "the next ordered stream's work ran before the forgotten stream's";
  gate.open();
  EXPECT_TRUE(b_idle.get().is_ok());
  EXPECT_TRUE(b.synchronize().is_ok());
  EXPECT_EQ(observation_.seen.load(), 1);
  EXPECT_TRUE(a.synchronize().is_ok());
}

// The last stream began capturing behind the order's back (an owner's capture of a wrapped
// stream): a tail recorded there would be captured, not queued. The next stream's wait waits on
// the host for the work queued before the capture instead, and forgets the stream.
TEST_F(LaunchOrderTest, TheWaitForAPreviousStreamThatBeganCapturingWaitsForItsWorkBeforeIt) {
  Stream &a = new_stream();
  Stream &b = new_stream();
  Gate &gate = new_gate();
  {
    const std::lock_guard<std::mutex> lock(order_->mutex());
    ASSERT_NO_FATAL_FAILURE(order_held_back_work(a, gate));
  }
  ASSERT_TRUE(a.begin_capture().is_ok());

  std::future<Status> ordered = std::async(std::launch::async, [&] {
    const std::lock_guard<std::mutex> lock(order_->mutex());
    RRT_RETURN_IF_ERROR(order_->wait_for_previous(b));
    RRT_RETURN_IF_ERROR(launch(b, &observe_entry, &observation_));
    order_->mark_last(b);
    return Status::ok();
  });
  EXPECT_EQ(ordered.wait_for(kLaunchOrderBlockedFor), std::future_status::timeout)
      << "the wait went on while the capturing stream's earlier work was held back";
  gate.open();
  const Status status = ordered.get();
  EXPECT_TRUE(status.is_ok()) << status.message();
  EXPECT_TRUE(b.synchronize().is_ok());
  EXPECT_EQ(observation_.seen.load(), 1) << "the ordered work ran before the previous work";
  EXPECT_FALSE(order_->is_last(a));
  std::unique_ptr<Graph> graph;
  EXPECT_TRUE(a.end_capture(&graph).is_ok());
  EXPECT_TRUE(a.synchronize().is_ok());
}

// forget() of a stream that is not the last changes nothing and records nothing.
TEST_F(LaunchOrderTest, ForgetOfAStreamThatIsNotTheLastDoesNothing) {
  const std::lock_guard<std::mutex> lock(order_->mutex());
  Stream &a = new_stream();
  Stream &b = new_stream();
  Gate &gate = new_gate();
  order_->mark_last(a);
  ASSERT_TRUE(gate.block(b).is_ok());
  ASSERT_TRUE(order_->forget(b).is_ok());
  EXPECT_TRUE(order_->is_last(a));
  EXPECT_TRUE(tail_->query()) << "forget recorded the tail on a stream that was not the last";
  gate.open();
  EXPECT_TRUE(b.synchronize().is_ok());
}

// With nothing ordered (never, or since reset()) record_tail records nothing and
// wait_for_tail returns at once.
TEST_F(LaunchOrderTest, RecordTailWithNothingOrderedRecordsNothing) {
  const std::lock_guard<std::mutex> lock(order_->mutex());
  ASSERT_TRUE(order_->record_tail().is_ok());
  order_->wait_for_tail();
  EXPECT_TRUE(tail_->query());

  Stream &a = new_stream();
  Gate &gate = new_gate();
  ASSERT_TRUE(gate.block(a).is_ok());
  order_->mark_last(a);
  order_->reset();
  EXPECT_FALSE(order_->is_last(a));
  ASSERT_TRUE(order_->record_tail().is_ok());
  EXPECT_TRUE(tail_->query()) << "record_tail recorded on a stream reset() forgot";
  order_->wait_for_tail();
  gate.open();
  EXPECT_TRUE(a.synchronize().is_ok());
}

// A forget() whose tail record fails returns the failure and changes nothing: the stream is
// still the last one, so the next stream still waits for it.
TEST_F(LaunchOrderTest, AForgetThatCannotRecordTheTailChangesNothing) {
  order_over_an_unrecordable_tail();
  const std::lock_guard<std::mutex> lock(order_->mutex());
  Stream &a = new_stream();
  order_->mark_last(a);
  EXPECT_EQ(order_->forget(a).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(order_->is_last(a));
  EXPECT_TRUE(a.synchronize().is_ok());
}

// forget_before_destroy() of a stream whose tail cannot be recorded waits until the stream's
// queued work has completed, then forgets the stream.
TEST_F(LaunchOrderTest, ForgetBeforeDestroyWaitsForTheStreamWhenTheTailCannotBeRecorded) {
  order_over_an_unrecordable_tail();
  const std::lock_guard<std::mutex> lock(order_->mutex());
  Stream &a = new_stream();
  Gate &gate = new_gate();
  ASSERT_NO_FATAL_FAILURE(order_held_back_work(a, gate));
  std::future<void> forgotten =
      std::async(std::launch::async, [this, &a] { order_->forget_before_destroy(a); });
  EXPECT_EQ(forgotten.wait_for(kLaunchOrderBlockedFor), std::future_status::timeout)
      << "the stream was forgotten while its work was still queued";
  gate.open();
  forgotten.get();
  EXPECT_TRUE(a_done_.load());
  EXPECT_FALSE(order_->is_last(a));
  EXPECT_TRUE(a.synchronize().is_ok());
}

}  // namespace
}  // namespace replayrt
