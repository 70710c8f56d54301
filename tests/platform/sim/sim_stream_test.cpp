#include "platform/sim/sim_stream.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "platform/sim/sim_device.h"
#include "platform/sim/sim_event.h"
#include "platform/sim/sim_execution_fixture.h"
#include "support/fault_injecting_device.h"
#include "support/liveness_bound.h"

namespace replayrt::sim {
namespace {

using testing::Gate;
using testing::launch_append;
using testing::launch_failing;
using testing::SimExecutionTest;

using SimStreamTest = SimExecutionTest;

TEST_F(SimStreamTest, LaunchesRunInEnqueueOrder) {
  Stream &stream = new_stream();
  std::vector<int> log;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(launch_append(stream, log, i).is_ok());
  }
  ASSERT_TRUE(stream.synchronize().is_ok());
  std::vector<int> expected(2000);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(log, expected);
}

struct ByteSum {
  std::size_t bytes = 0;
  std::uint64_t sum = 0;
};

Status sum_entry(void *context, const std::byte *invocation, std::size_t bytes) {
  auto *const result = static_cast<ByteSum *>(context);
  result->bytes = bytes;
  result->sum = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    result->sum += static_cast<std::uint64_t>(invocation[i]);
  }
  return Status::ok();
}

TEST_F(SimStreamTest, LaunchGetsTheBytesAsTheyWereAtEnqueue) {
  Stream &stream = new_stream();
  for (const std::size_t size :
       {std::size_t{0}, std::size_t{16}, std::size_t{256}, std::size_t{257}, std::size_t{5000}}) {
    std::vector<std::byte> buffer(size, std::byte{3});
    ByteSum result;
    LaunchRequest request;
    request.entry = &sum_entry;
    request.entry_context = &result;
    request.invocation = buffer;
    Gate &gate = new_gate();
    ASSERT_TRUE(gate.block(stream).is_ok());
    ASSERT_TRUE(stream.enqueue_launch(request).is_ok());
    // The executor is still blocked in the gate; the launch must already own its bytes.
    std::fill(buffer.begin(), buffer.end(), std::byte{9});
    gate.open();
    ASSERT_TRUE(stream.synchronize().is_ok());
    EXPECT_EQ(result.bytes, size);
    EXPECT_EQ(result.sum, 3 * size);
  }
}

Status record_thread(void *context, const std::byte * /*invocation*/, std::size_t /*bytes*/) {
  *static_cast<std::thread::id *>(context) = std::this_thread::get_id();
  return Status::ok();
}

// Enqueues a launch and synchronizes at once, `gap` after the previous try, until the launch
// ran on this thread (the synchronize found it untaken and ran it itself) or 200 tries did
// not; true when one did. Whether the host wins that race is up to the scheduler.
bool synchronize_runs_a_launch_here(Stream &stream, std::chrono::milliseconds gap) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    std::this_thread::sleep_for(gap);
    std::thread::id runner;
    LaunchRequest request;
    request.entry = &record_thread;
    request.entry_context = &runner;
    const Status enqueued = stream.enqueue_launch(request);
    const Status synchronized = stream.synchronize();
    EXPECT_TRUE(enqueued.is_ok()) << enqueued.message();
    EXPECT_TRUE(synchronized.is_ok()) << synchronized.message();
    if (!enqueued.is_ok() || !synchronized.is_ok()) {
      return false;
    }
    if (runner == std::this_thread::get_id()) {
      return true;
    }
  }
  return false;
}

// The executor parks after a brief spin; a launch enqueued then wakes it, and a synchronize
// that follows at once finds the launch still queued and runs it itself.
TEST_F(SimStreamTest, SynchronizeRunsQueuedWorkTheExecutorHasNotTakenOnTheCallingThread) {
  Stream &stream = new_stream();
  EXPECT_TRUE(synchronize_runs_a_launch_here(stream, std::chrono::milliseconds(1)));
}

// Once a host synchronize has run a batch itself, the stream is host-driven: an enqueue no
// longer wakes the parked executor. Work that no host thread then synchronizes must still run:
// the executor looks for it by itself. The flag is polled with a generous liveness bound (not
// a timing goal); a synchronize afterwards runs the launch on this thread if it never ran.
TEST_F(SimStreamTest, WorkOnAHostDrivenStreamRunsWithoutASynchronize) {
  Stream &stream = new_stream();
  const bool host_driven = synchronize_runs_a_launch_here(stream, std::chrono::milliseconds(0));
  ASSERT_TRUE(host_driven);
  // Long enough for the executor to give up spinning and park.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::atomic<bool> ran{false};
  LaunchRequest request;
  request.entry = &testing::set_flag_entry;
  request.entry_context = &ran;
  ASSERT_TRUE(stream.enqueue_launch(request).is_ok());
  const auto deadline = std::chrono::steady_clock::now() + replayrt::testing::liveness_bound();
  while (!ran.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  EXPECT_TRUE(ran.load(std::memory_order_acquire));
  ASSERT_TRUE(stream.synchronize().is_ok());
}

// An idle policy under which the executor of a host-driven stream waits for an hour: for its
// poll, and for a host thread to take work it sees untaken.
ExecutorIdlePolicy hour_long_idle_policy() {
  ExecutorIdlePolicy idle;
  idle.host_take_grace = std::chrono::hours(1);
  idle.host_driven_poll = std::chrono::hours(1);
  return idle;
}

// Polls `event` until it completes or a generous liveness bound (not a timing goal) passes.
bool completes(const SimEvent &event) {
  const auto deadline = std::chrono::steady_clock::now() + replayrt::testing::liveness_bound();
  while (!event.query() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return event.query();
}

// A host thread that runs a batch while an event record is queued behind it hands the record to
// the executor when the batch ends: nothing else takes it, since waits on the event go through
// no stream call. Under an hour-long poll and grace, the record completes only if the host
// wakes the parked executor. An executor still awake when the batch ends takes the record
// without being woken, and a loaded machine can delay its parking past the settling sleep; the
// scenario therefore runs on 20 fresh streams, each of which must complete its record.
TEST(SimStreamHandOffTest, AnEventRecordQueuedBehindAHostBatchRunsWhenTheBatchEnds) {
  SimMemory memory;
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(round);
    SimStream stream(memory, {}, hour_long_idle_policy());
    ASSERT_TRUE(synchronize_runs_a_launch_here(stream, std::chrono::milliseconds(1)));
    // Long enough for an executor that the last launch woke to find the queue empty and park.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    Gate gate;
    ASSERT_TRUE(gate.block(stream).is_ok());
    std::thread host([&] { EXPECT_TRUE(stream.synchronize().is_ok()); });
    gate.wait_until_entered();
    SimEvent event;
    EXPECT_TRUE(stream.record_event(event).is_ok());
    gate.open();
    host.join();
    ASSERT_TRUE(completes(event));
  }
}

// On a host-driven stream the executor leaves untaken work for a host thread to take, but not
// once an event record joins that work: nothing but the executor takes the record. The executor
// takes a gate and a record (the record wakes it), a launch is queued behind them, and a second
// record follows once the executor, done with the gate, waits out its hour-long grace for the
// launch; no host thread synchronizes.
TEST(SimStreamHandOffTest, AnEventRecordEndsTheExecutorsGraceForTheHost) {
  SimMemory memory;
  SimStream stream(memory, {}, hour_long_idle_policy());
  ASSERT_TRUE(synchronize_runs_a_launch_here(stream, std::chrono::milliseconds(1)));
  Gate gate;
  ASSERT_TRUE(gate.block(stream).is_ok());
  SimEvent gate_passed;
  ASSERT_TRUE(stream.record_event(gate_passed).is_ok());
  gate.wait_until_entered();
  std::atomic<bool> ran{false};
  LaunchRequest request;
  request.entry = &testing::set_flag_entry;
  request.entry_context = &ran;
  ASSERT_TRUE(stream.enqueue_launch(request).is_ok());
  gate.open();
  ASSERT_TRUE(completes(gate_passed));
  // Long enough for the executor to end the gate's batch and start its grace for the launch.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  SimEvent after_launch;
  ASSERT_TRUE(stream.record_event(after_launch).is_ok());
  EXPECT_TRUE(completes(after_launch));
  EXPECT_TRUE(ran.load(std::memory_order_acquire));
}

TEST_F(SimStreamTest, CopiesAndMemsetRoundTripThroughDeviceMemory) {
  Stream &stream = new_stream();
  auto *const first = static_cast<unsigned char *>(allocate(4096));
  auto *const second = static_cast<unsigned char *>(allocate(4096));
  std::array<unsigned char, 4096> source{};
  for (std::size_t i = 0; i < source.size(); ++i) {
    source[i] = static_cast<unsigned char>(i % 251);
  }
  std::array<unsigned char, 4096> result{};
  ASSERT_TRUE(stream.enqueue_copy_host_to_device(first, source.data(), source.size()).is_ok());
  ASSERT_TRUE(stream.enqueue_memset(first + 100, 0xAB, 50).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_device_to_device(second, first, 4096).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_device_to_host(result.data(), second, result.size()).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  for (std::size_t i = 0; i < result.size(); ++i) {
    const unsigned char expected = i >= 100 && i < 150 ? 0xAB : source[i];
    ASSERT_EQ(result[i], expected) << "byte " << i;
  }
}

TEST_F(SimStreamTest, SynchronizeWaitsForAllQueuedWork) {
  Gate &gate = new_gate();
  Stream &stream = new_stream();
  std::vector<int> log;
  ASSERT_TRUE(gate.block(stream).is_ok());
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(launch_append(stream, log, i).is_ok());
  }
  std::jthread opener([&gate] {
    gate.wait_until_entered();
    gate.open();
  });
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(log.size(), 100u);
}

TEST_F(SimStreamTest, FailureSkipsLaterWorkUntilSynchronizeReportsIt) {
  Stream &stream = new_stream();
  auto *const buffer = static_cast<unsigned char *>(allocate(1024));
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x11, 1024).is_ok());
  std::vector<int> log;
  ASSERT_TRUE(launch_append(stream, log, 1).is_ok());
  ASSERT_TRUE(launch_failing(stream).is_ok());
  ASSERT_TRUE(launch_append(stream, log, 2).is_ok());
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x22, 1024).is_ok());
  ASSERT_TRUE(launch_failing(stream).is_ok());

  const Status failure = stream.synchronize();
  EXPECT_EQ(failure.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(failure.message().find("task 7"), std::string::npos) << failure.message();
  EXPECT_EQ(log, std::vector<int>{1});
  unsigned char byte = 0;
  ASSERT_TRUE(device_.copy_device_to_host(&byte, buffer + 512, 1).is_ok());
  EXPECT_EQ(byte, 0x11);

  EXPECT_TRUE(stream.synchronize().is_ok());
  ASSERT_TRUE(launch_append(stream, log, 3).is_ok());
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x33, 1024).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(log, (std::vector<int>{1, 3}));
  ASSERT_TRUE(device_.copy_device_to_host(&byte, buffer + 512, 1).is_ok());
  EXPECT_EQ(byte, 0x33);
}

TEST_F(SimStreamTest, CopyOfARangeFreedBeforeItRunsFailsOnTheDevice) {
  Gate &gate = new_gate();
  Stream &stream = new_stream();
  void *const buffer = allocate(2048);
  std::array<unsigned char, 2048> result{};
  std::vector<int> log;
  ASSERT_TRUE(gate.block(stream).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_device_to_host(result.data(), buffer, result.size()).is_ok());
  ASSERT_TRUE(launch_append(stream, log, 1).is_ok());
  ASSERT_TRUE(device_.free(buffer).is_ok());
  gate.open();
  const Status failure = stream.synchronize();
  EXPECT_EQ(failure.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(failure.message().find("device-to-host copy"), std::string::npos) << failure.message();
  EXPECT_TRUE(log.empty());
}

TEST_F(SimStreamTest, NullEntryIsRejectedAtEnqueue) {
  Stream &stream = new_stream();
  EXPECT_EQ(stream.enqueue_launch(LaunchRequest{}).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(stream.synchronize().is_ok());
}

Status throwing_entry(void * /*context*/, const std::byte * /*invocation*/, std::size_t /*bytes*/) {
  throw std::runtime_error("an entry threw");
}

TEST_F(SimStreamTest, AThrowingEntryBecomesTheStickyFailureAndTheStreamCarriesOn) {
  Stream &stream = new_stream();
  std::vector<int> log;
  LaunchRequest request;
  request.entry = &throwing_entry;
  ASSERT_TRUE(stream.enqueue_launch(request).is_ok());
  ASSERT_TRUE(launch_append(stream, log, 1).is_ok());
  const Status failure = stream.synchronize();
  EXPECT_EQ(failure.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(failure.message().find("threw an exception"), std::string::npos) << failure.message();
  EXPECT_TRUE(log.empty());
  ASSERT_TRUE(launch_append(stream, log, 2).is_ok());
  EXPECT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(log, std::vector<int>{2});
}

TEST_F(SimStreamTest, StreamsOfOneDeviceRunIndependently) {
  Gate &gate = new_gate();
  Stream &blocked = new_stream();
  Stream &free_running = new_stream();
  std::vector<int> blocked_log;
  std::vector<int> free_log;
  ASSERT_TRUE(gate.block(blocked).is_ok());
  ASSERT_TRUE(launch_append(blocked, blocked_log, 1).is_ok());
  ASSERT_TRUE(launch_append(free_running, free_log, 2).is_ok());
  ASSERT_TRUE(free_running.synchronize().is_ok());
  EXPECT_EQ(free_log, std::vector<int>{2});
  gate.open();
  ASSERT_TRUE(blocked.synchronize().is_ok());
  EXPECT_EQ(blocked_log, std::vector<int>{1});
}

TEST_F(SimStreamTest, ConcurrentEnqueuesAllRunInEachThreadsOrder) {
  Stream &stream = new_stream();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  std::vector<int> log;
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&stream, &log, t] {
        for (int i = 0; i < kPerThread; ++i) {
          ASSERT_TRUE(launch_append(stream, log, t * kPerThread + i).is_ok());
        }
      });
    }
  }
  ASSERT_TRUE(stream.synchronize().is_ok());
  ASSERT_EQ(log.size(), static_cast<std::size_t>(kThreads * kPerThread));
  std::array<int, kThreads> next{};
  for (const int value : log) {
    const int thread = value / kPerThread;
    EXPECT_EQ(value % kPerThread, next[thread]);
    next[thread] = value % kPerThread + 1;
  }
}

TEST_F(SimStreamTest, ConcurrentSynchronizeCallsAllReturn) {
  Stream &stream = new_stream();
  std::vector<int> log;
  std::atomic<int> synchronized{0};
  {
    std::vector<std::jthread> waiters;
    for (int t = 0; t < 3; ++t) {
      waiters.emplace_back([&] {
        for (int i = 0; i < 200; ++i) {
          EXPECT_TRUE(stream.synchronize().is_ok());
        }
        synchronized.fetch_add(1);
      });
    }
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(launch_append(stream, log, i).is_ok());
    }
  }
  EXPECT_EQ(synchronized.load(), 3);
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(log.size(), 2000u);
}

TEST_F(SimStreamTest, DestructionRunsQueuedWorkFirst) {
  Gate &gate = new_gate();
  std::vector<int> log;
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(device_.create_stream(&stream).is_ok());
  ASSERT_TRUE(gate.block(*stream).is_ok());
  std::jthread opener([&gate] {
    gate.wait_until_entered();
    gate.open();
  });
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(launch_append(*stream, log, i).is_ok());
  }
  EXPECT_TRUE(launch_failing(*stream).is_ok());
  stream.reset();
  EXPECT_EQ(log.size(), 100u);
}

TEST_F(SimStreamTest, IdleStreamsCanBeCreatedAndDestroyed) {
  for (int i = 0; i < 20; ++i) {
    std::unique_ptr<Stream> stream;
    ASSERT_TRUE(device_.create_stream(&stream).is_ok());
  }
}

TEST_F(SimStreamTest, NullOutputsAreRejected) {
  EXPECT_EQ(device_.create_stream(nullptr).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(device_.create_event(nullptr).code(), RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(SimStreamTest, QueryIsFalseWhileWorkIsQueuedAndReportsNothing) {
  Gate &gate = new_gate();
  Stream &stream = new_stream();
  EXPECT_TRUE(stream.query());
  ASSERT_TRUE(gate.block(stream).is_ok());
  ASSERT_TRUE(launch_failing(stream).is_ok());
  gate.wait_until_entered();
  EXPECT_FALSE(stream.query());
  gate.open();
  while (!stream.query()) {
    std::this_thread::yield();
  }
  EXPECT_EQ(stream.synchronize().code(), RRT_ERR_KERNEL_FAILED);  // the query left it pending
}

// Stream and event host waits complete under every policy, also when they start before the
// work finishes (the gate opens only once the work has started; a waiter that parked is woken).
class SimHostWaitPolicyTest : public ::testing::TestWithParam<HostWaitPolicy::Kind> {};

TEST_P(SimHostWaitPolicyTest, StreamAndEventWaitsCompleteUnderThePolicy) {
  SimDevice device;
  HostWaitPolicy policy;
  policy.kind = GetParam();
  policy.spin_budget = std::chrono::microseconds(10);
  device.set_host_wait_policy(policy);
  std::unique_ptr<Stream> stream;
  std::unique_ptr<Event> event;
  ASSERT_TRUE(device.create_stream(&stream).is_ok());
  ASSERT_TRUE(device.create_event(&event).is_ok());
  for (int round = 0; round < 3; ++round) {
    Gate gate;
    std::vector<int> log;
    ASSERT_TRUE(gate.block(*stream).is_ok());
    ASSERT_TRUE(launch_append(*stream, log, round).is_ok());
    ASSERT_TRUE(stream->record_event(*event).is_ok());
    std::jthread opener([&gate] {
      gate.wait_until_entered();
      gate.open();
    });
    if (round % 2 == 0) {
      ASSERT_TRUE(event->synchronize().is_ok());
    } else {
      ASSERT_TRUE(stream->synchronize().is_ok());
    }
    EXPECT_EQ(log, std::vector<int>{round});
    ASSERT_TRUE(stream->wait_idle().is_ok());
    EXPECT_TRUE(stream->query());
    EXPECT_TRUE(event->query());
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, SimHostWaitPolicyTest,
                         ::testing::Values(HostWaitPolicy::Kind::kSpinThenBlock,
                                           HostWaitPolicy::Kind::kSpin,
                                           HostWaitPolicy::Kind::kYield,
                                           HostWaitPolicy::Kind::kBlock));

TEST(SimStreamFaultInjectionTest, FaultInjectingDeviceForwardsStreamsAndEvents) {
  SimDevice device;
  FaultInjectingDevice faults(device);
  std::unique_ptr<Stream> stream;
  std::unique_ptr<Event> event;
  ASSERT_TRUE(faults.create_stream(&stream).is_ok());
  ASSERT_TRUE(faults.create_event(&event).is_ok());
  EXPECT_NE(dynamic_cast<FaultInjectingStream *>(stream.get()), nullptr);
  std::vector<int> log;
  ASSERT_TRUE(launch_append(*stream, log, 5).is_ok());
  ASSERT_TRUE(stream->record_event(*event).is_ok());
  ASSERT_TRUE(event->synchronize().is_ok());
  EXPECT_EQ(log, std::vector<int>{5});
}

}  // namespace
}  // namespace replayrt::sim
