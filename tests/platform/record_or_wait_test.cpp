// record_or_wait_idle over a SimDevice wrapped by a FaultInjectingDevice: a gate holds the
// stream's work back, so whether the call returned before that work ran is deterministic.
#include "platform/record_or_wait.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <future>
#include <memory>

#include <gtest/gtest.h>

#include "platform/sim/sim_device.h"
#include "platform/sim/sim_execution_fixture.h"
#include "support/fault_injecting_device.h"

namespace replayrt {
namespace {

using sim::testing::Gate;
using sim::testing::set_flag_entry;

constexpr auto kBlockedFor = std::chrono::milliseconds(200);

enum class RecordFailure { kStatus, kException };

// One stream whose work is held back by a gate: the gate, then a launch that sets done_.
class RecordOrWaitIdleTest : public ::testing::TestWithParam<RecordFailure> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(faults_.create_stream(&stream_).is_ok());
    ASSERT_TRUE(faults_.create_event(&event_).is_ok());
    ASSERT_TRUE(gate_.block(*stream_).is_ok());
    LaunchRequest request;
    request.entry = &set_flag_entry;
    request.entry_context = &done_;
    ASSERT_TRUE(stream_->enqueue_launch(request).is_ok());
  }
  void TearDown() override {
    gate_.open();
    if (stream_ != nullptr) {
      EXPECT_TRUE(stream_->synchronize().is_ok());
    }
  }
  void fail_the_next_record() {
    if (GetParam() == RecordFailure::kStatus) {
      faults_.fail_nth_enqueue(1);
    } else {
      faults_.throw_on_nth_enqueue(1);
    }
  }

  sim::SimDevice device_;
  FaultInjectingDevice faults_{device_};
  Gate gate_;
  std::atomic<bool> done_{false};
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Event> event_;
};

TEST_P(RecordOrWaitIdleTest, ARecordedEventMarksTheQueuedWorkAndTheCallDoesNotWait) {
  EXPECT_TRUE(record_or_wait_idle(*stream_, *event_));
  EXPECT_FALSE(event_->query()) << "the event does not follow the held-back work";
  EXPECT_FALSE(done_.load());
  gate_.open();
  EXPECT_TRUE(event_->synchronize().is_ok());
  EXPECT_TRUE(done_.load());
}

TEST_P(RecordOrWaitIdleTest, WhenTheRecordFailsTheCallReturnsOnlyOnceTheQueuedWorkHasRun) {
  fail_the_next_record();
  std::future<bool> recorded =
      std::async(std::launch::async, [this] { return record_or_wait_idle(*stream_, *event_); });
  EXPECT_EQ(recorded.wait_for(kBlockedFor), std::future_status::timeout)
      << "the call returned while the stream's work was still queued";
  gate_.open();
  EXPECT_FALSE(recorded.get());
  EXPECT_TRUE(done_.load());
  EXPECT_TRUE(stream_->query());
  EXPECT_TRUE(event_->query()) << "the failed record left the event as it was: never recorded";
}

INSTANTIATE_TEST_SUITE_P(StatusAndThrow, RecordOrWaitIdleTest,
                         ::testing::Values(RecordFailure::kStatus, RecordFailure::kException),
                         [](const ::testing::TestParamInfo<RecordFailure> &info) {
                           return info.param == RecordFailure::kStatus ? "Status" : "Throw";
                         });

}  // namespace
}  // namespace replayrt
