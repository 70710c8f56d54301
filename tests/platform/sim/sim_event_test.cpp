#include "platform/sim/sim_event.h"

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "platform/sim/sim_execution_fixture.h"

namespace replayrt::sim {
namespace {

using testing::Gate;
using testing::launch_append;
using testing::launch_failing;
using testing::SimExecutionTest;
using testing::Transfer;
using testing::transfer_entry;

using SimEventTest = SimExecutionTest;

// Stores the int in its invocation into the int its context points to.
Status store_entry(void *context, const std::byte *invocation, std::size_t bytes) {
  EXPECT_EQ(bytes, sizeof(int));
  std::memcpy(context, invocation, sizeof(int));
  return Status::ok();
}

Status launch_store(Stream &stream, int *target, int value) {
  LaunchRequest request;
  request.entry = &store_entry;
  request.entry_context = target;
  request.invocation = std::as_bytes(std::span<const int>(&value, 1));
  return stream.enqueue_launch(request);
}

Status launch_transfer(Stream &stream, Transfer &transfer) {
  LaunchRequest request;
  request.entry = &transfer_entry;
  request.entry_context = &transfer;
  return stream.enqueue_launch(request);
}

TEST_F(SimEventTest, NeverRecordedEventIsComplete) {
  Event &event = new_event();
  EXPECT_TRUE(event.query());
  EXPECT_TRUE(event.synchronize().is_ok());
}

TEST_F(SimEventTest, RecordCompletesAfterTheWorkBeforeIt) {
  Stream &stream = new_stream();
  Event &event = new_event();
  Gate &gate = new_gate();
  std::vector<int> log;
  ASSERT_TRUE(gate.block(stream).is_ok());
  ASSERT_TRUE(launch_append(stream, log, 1).is_ok());
  ASSERT_TRUE(stream.record_event(event).is_ok());
  gate.wait_until_entered();
  EXPECT_FALSE(event.query());
  gate.open();
  ASSERT_TRUE(event.synchronize().is_ok());
  EXPECT_TRUE(event.query());
  EXPECT_EQ(log, std::vector<int>{1});
}

TEST_F(SimEventTest, SynchronizeWaitsForTheLatestRecord) {
  Stream &stream = new_stream();
  Event &event = new_event();
  std::vector<int> log;
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(launch_append(stream, log, i).is_ok());
    ASSERT_TRUE(stream.record_event(event).is_ok());
  }
  ASSERT_TRUE(event.synchronize().is_ok());
  EXPECT_TRUE(event.query());
  EXPECT_EQ(log.size(), 500u);
}

TEST_F(SimEventTest, AHostWaitOnARecordReportsTheStreamFailureOnce) {
  Stream &failing = new_stream();
  Event &event = new_event();
  std::vector<int> log;
  ASSERT_TRUE(launch_failing(failing).is_ok());
  ASSERT_TRUE(failing.record_event(event).is_ok());
  const Status carried = event.synchronize();
  EXPECT_EQ(carried.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(carried.message().find("task 7"), std::string::npos) << carried.message();
  // Reported: cleared on the stream and on the event, and the stream runs work again.
  EXPECT_TRUE(event.synchronize().is_ok());
  ASSERT_TRUE(launch_append(failing, log, 1).is_ok());
  EXPECT_TRUE(failing.synchronize().is_ok());
  EXPECT_EQ(log, std::vector<int>{1});
  // A failure reported on the stream first is not reported again through the event.
  ASSERT_TRUE(launch_failing(failing).is_ok());
  ASSERT_TRUE(failing.record_event(event).is_ok());
  EXPECT_EQ(failing.synchronize().code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_TRUE(event.synchronize().is_ok());
}

// `producer`, held behind `gate`, stores 42 and records `event`; `consumer` waits on that
// record and then copies what was stored. `meanwhile` runs once the producer is held and the
// consumer's work is queued; then the gate opens. Returns what the consumer copied.
int produce_and_consume(Stream &producer, Stream &consumer, Event &event, Gate &gate,
                        const std::function<void()> &meanwhile) {
  int produced = 0;
  int observed = -1;
  Transfer transfer{&produced, &observed};
  EXPECT_TRUE(gate.block(producer).is_ok());
  EXPECT_TRUE(launch_store(producer, &produced, 42).is_ok());
  EXPECT_TRUE(producer.record_event(event).is_ok());
  EXPECT_TRUE(consumer.wait_event(event).is_ok());
  EXPECT_TRUE(launch_transfer(consumer, transfer).is_ok());
  gate.wait_until_entered();
  meanwhile();
  gate.open();
  EXPECT_TRUE(consumer.synchronize().is_ok());
  EXPECT_TRUE(producer.synchronize().is_ok());
  return observed;
}

TEST_F(SimEventTest, CrossStreamWaitOrdersWork) {
  Stream &producer = new_stream();
  Stream &consumer = new_stream();
  Event &event = new_event();
  const int observed = produce_and_consume(producer, consumer, event, new_gate(),
                                           [&] { EXPECT_FALSE(event.query()); });
  EXPECT_EQ(observed, 42);
}

// A wait binds to the record that was the most recent when it was enqueued: a later record of
// the same event on another stream, executed first, does not satisfy it (nor does it make the
// earlier record count as executed).
TEST_F(SimEventTest, AWaitIsNotSatisfiedByALaterRecordOnAnotherStream) {
  Stream &producer = new_stream();
  Stream &consumer = new_stream();
  Stream &other = new_stream();
  Event &event = new_event();
  const int observed = produce_and_consume(producer, consumer, event, new_gate(), [&] {
    ASSERT_TRUE(other.record_event(event).is_ok());
    ASSERT_TRUE(other.synchronize().is_ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(consumer.query()) << "the wait went on before the record it was bound to ran";
  });
  EXPECT_EQ(observed, 42);
  EXPECT_TRUE(event.query());
}

TEST_F(SimEventTest, WaitBindsToTheRecordAtEnqueue) {
  Stream &producer = new_stream();
  Stream &consumer = new_stream();
  Event &event = new_event();
  Gate &gate = new_gate();
  std::vector<int> log;
  // A wait on a never-recorded event waits for nothing, even if a record follows it.
  ASSERT_TRUE(consumer.wait_event(event).is_ok());
  ASSERT_TRUE(gate.block(producer).is_ok());
  ASSERT_TRUE(producer.record_event(event).is_ok());
  ASSERT_TRUE(launch_append(consumer, log, 1).is_ok());
  ASSERT_TRUE(consumer.synchronize().is_ok());
  EXPECT_EQ(log, std::vector<int>{1});
  EXPECT_FALSE(event.query());
  gate.open();
  ASSERT_TRUE(event.synchronize().is_ok());
}

TEST_F(SimEventTest, AWaitOnAFailedRecordOnlyWaitsAndTheFailureStaysOnItsStream) {
  Stream &failing = new_stream();
  Stream &waiting = new_stream();
  Event &event = new_event();
  std::vector<int> log;
  ASSERT_TRUE(launch_failing(failing).is_ok());
  ASSERT_TRUE(failing.record_event(event).is_ok());
  ASSERT_TRUE(waiting.wait_event(event).is_ok());
  ASSERT_TRUE(launch_append(waiting, log, 1).is_ok());
  EXPECT_TRUE(waiting.synchronize().is_ok());
  EXPECT_EQ(log, std::vector<int>{1});
  const Status failure = failing.synchronize();
  EXPECT_EQ(failure.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(failure.message().find("task 7"), std::string::npos) << failure.message();
}

TEST_F(SimEventTest, EventMayBeDestroyedWhileItsRecordIsQueued) {
  Stream &stream = new_stream();
  Gate &gate = new_gate();
  ASSERT_TRUE(gate.block(stream).is_ok());
  {
    std::unique_ptr<Event> event;
    ASSERT_TRUE(device_.create_event(&event).is_ok());
    ASSERT_TRUE(stream.record_event(*event).is_ok());
    ASSERT_TRUE(stream.wait_event(*event).is_ok());
  }
  gate.open();
  EXPECT_TRUE(stream.synchronize().is_ok());
}

class ForeignEvent final : public Event {
 public:
  Status synchronize() override { return Status::ok(); }
  void wait() override {}
  bool query() const override { return true; }
};

TEST_F(SimEventTest, StreamsRejectEventsTheSimulatorDidNotCreate) {
  Stream &stream = new_stream();
  ForeignEvent foreign;
  EXPECT_EQ(stream.record_event(foreign).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(stream.wait_event(foreign).code(), RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(SimEventTest, PingPongBetweenStreams) {
  Stream &left = new_stream();
  Stream &right = new_stream();
  Event &left_done = new_event();
  Event &right_done = new_event();
  std::vector<int> log;
  // Both streams append to one log; the events make the appends alternate.
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(left.wait_event(right_done).is_ok());
    ASSERT_TRUE(launch_append(left, log, 2 * i).is_ok());
    ASSERT_TRUE(left.record_event(left_done).is_ok());
    ASSERT_TRUE(right.wait_event(left_done).is_ok());
    ASSERT_TRUE(launch_append(right, log, 2 * i + 1).is_ok());
    ASSERT_TRUE(right.record_event(right_done).is_ok());
  }
  ASSERT_TRUE(left.synchronize().is_ok());
  ASSERT_TRUE(right.synchronize().is_ok());
  ASSERT_EQ(log.size(), 400u);
  for (int i = 0; i < 400; ++i) {
    ASSERT_EQ(log[i], i);
  }
}

TEST_F(SimEventTest, ConcurrentRecordsAndHostWaits) {
  Stream &stream = new_stream();
  Event &event = new_event();
  std::vector<int> log;
  {
    std::vector<std::jthread> waiters;
    for (int t = 0; t < 3; ++t) {
      waiters.emplace_back([&event] {
        for (int i = 0; i < 300; ++i) {
          EXPECT_TRUE(event.synchronize().is_ok());
          static_cast<void>(event.query());
        }
      });
    }
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(launch_append(stream, log, i).is_ok());
      ASSERT_TRUE(stream.record_event(event).is_ok());
    }
  }
  ASSERT_TRUE(event.synchronize().is_ok());
  EXPECT_EQ(log.size(), 1000u);
}

}  // namespace
}  // namespace replayrt::sim
