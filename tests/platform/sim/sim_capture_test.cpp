#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "platform/sim/sim_execution_fixture.h"
#include "platform/sim/sim_graph.h"
#include "platform/sim/sim_stream.h"

namespace replayrt::sim {
namespace {

using testing::Gate;
using testing::launch_append;
using testing::SimExecutionTest;
using testing::Transfer;
using testing::transfer_entry;

using SimCaptureTest = SimExecutionTest;

std::uintptr_t address_of(const void *ptr) {
  return reinterpret_cast<std::uintptr_t>(ptr);
}

std::unique_ptr<Graph> end_capture(Stream &stream) {
  std::unique_ptr<Graph> graph;
  const Status status = stream.end_capture(&graph);
  EXPECT_TRUE(status.is_ok()) << status.message();
  return graph;
}

TEST_F(SimCaptureTest, CaptureRecordsInsteadOfExecuting) {
  Stream &stream = new_stream();
  auto *const buffer = static_cast<unsigned char *>(allocate(1024));
  ASSERT_TRUE(device_.memset(buffer, 0x11, 1024).is_ok());
  std::array<unsigned char, 1024> host{};
  std::vector<int> log;

  ASSERT_TRUE(stream.begin_capture().is_ok());
  EXPECT_TRUE(stream.is_capturing());
  ASSERT_TRUE(launch_append(stream, log, 1).is_ok());
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x22, 1024).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_device_to_host(host.data(), buffer, host.size()).is_ok());
  const std::unique_ptr<Graph> graph = end_capture(stream);
  EXPECT_FALSE(stream.is_capturing());
  ASSERT_TRUE(stream.synchronize().is_ok());

  EXPECT_EQ(graph->operation_count(), 3u);
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(host[0], 0);
  unsigned char byte = 0;
  ASSERT_TRUE(device_.copy_device_to_host(&byte, buffer, 1).is_ok());
  EXPECT_EQ(byte, 0x11);

  ASSERT_TRUE(stream.replay(*graph).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(log, std::vector<int>{1});
  EXPECT_EQ(host[1023], 0x22);
}

struct Decoded {
  std::vector<std::uint32_t> words;
};

// Appends every 32-bit word of its invocation to the Decoded in its context.
Status decode_entry(void *context, const std::byte *invocation, std::size_t bytes) {
  auto *const decoded = static_cast<Decoded *>(context);
  for (std::size_t offset = 0; offset + 4 <= bytes; offset += 4) {
    std::uint32_t word = 0;
    std::memcpy(&word, invocation + offset, 4);
    decoded->words.push_back(word);
  }
  return Status::ok();
}

TEST_F(SimCaptureTest, ReplayRunsExactlyTheRecordedBytesEveryTime) {
  Stream &stream = new_stream();
  Decoded decoded;
  std::vector<std::uint32_t> expected_once;
  std::vector<std::uint32_t> buffer;
  ASSERT_TRUE(stream.begin_capture().is_ok());
  for (std::uint32_t launch = 0; launch < 3; ++launch) {
    // Launch 2 is larger than the inline invocation capacity.
    buffer.assign(launch == 2 ? 100 : 4, 0);
    for (std::size_t i = 0; i < buffer.size(); ++i) {
      buffer[i] = launch * 1000 + static_cast<std::uint32_t>(i);
    }
    expected_once.insert(expected_once.end(), buffer.begin(), buffer.end());
    LaunchRequest request;
    request.entry = &decode_entry;
    request.entry_context = &decoded;
    request.invocation = std::as_bytes(std::span<const std::uint32_t>(buffer));
    ASSERT_TRUE(stream.enqueue_launch(request).is_ok());
    std::fill(buffer.begin(), buffer.end(), 0xFFFFFFFFu);
  }
  const std::unique_ptr<Graph> graph = end_capture(stream);
  EXPECT_EQ(graph->operation_count(), 3u);

  constexpr int kReplays = 50;
  for (int i = 0; i < kReplays; ++i) {
    ASSERT_TRUE(stream.replay(*graph).is_ok());
  }
  ASSERT_TRUE(stream.synchronize().is_ok());
  std::vector<std::uint32_t> expected;
  for (int i = 0; i < kReplays; ++i) {
    expected.insert(expected.end(), expected_once.begin(), expected_once.end());
  }
  EXPECT_EQ(decoded.words, expected);
}

TEST_F(SimCaptureTest, GraphsInterleaveAndReplayOnAnyStreamOfTheDevice) {
  Stream &capturing = new_stream();
  Stream &other = new_stream();
  std::vector<int> log;
  ASSERT_TRUE(capturing.begin_capture().is_ok());
  ASSERT_TRUE(launch_append(capturing, log, 1).is_ok());
  ASSERT_TRUE(launch_append(capturing, log, 2).is_ok());
  const std::unique_ptr<Graph> first = end_capture(capturing);
  ASSERT_TRUE(capturing.begin_capture().is_ok());
  ASSERT_TRUE(launch_append(capturing, log, 10).is_ok());
  const std::unique_ptr<Graph> second = end_capture(capturing);

  ASSERT_TRUE(other.replay(*first).is_ok());
  ASSERT_TRUE(other.replay(*second).is_ok());
  ASSERT_TRUE(other.replay(*first).is_ok());
  ASSERT_TRUE(launch_append(other, log, 99).is_ok());
  ASSERT_TRUE(other.replay(*second).is_ok());
  ASSERT_TRUE(other.synchronize().is_ok());
  EXPECT_EQ(log, (std::vector<int>{1, 2, 10, 1, 2, 99, 10}));
}

TEST_F(SimCaptureTest, CapturedCopiesReadAndWriteHostMemoryAtEachReplay) {
  Stream &stream = new_stream();
  auto *const device_buffer = static_cast<unsigned char *>(allocate(256));
  std::array<unsigned char, 256> source{};
  std::array<unsigned char, 256> result{};
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_copy_host_to_device(device_buffer, source.data(), 256).is_ok());
  ASSERT_TRUE(stream.enqueue_memset(device_buffer, 0x7F, 16).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_device_to_device(device_buffer + 128, device_buffer, 16).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_device_to_host(result.data(), device_buffer, 256).is_ok());
  const std::unique_ptr<Graph> graph = end_capture(stream);
  EXPECT_EQ(graph->operation_count(), 4u);

  for (const unsigned char fill : {0x01, 0x02}) {
    source.fill(fill);
    ASSERT_TRUE(stream.replay(*graph).is_ok());
    ASSERT_TRUE(stream.synchronize().is_ok());
    EXPECT_EQ(result[0], 0x7F);
    EXPECT_EQ(result[16], fill);
    EXPECT_EQ(result[128], 0x7F);
    EXPECT_EQ(result[144], fill);
  }
}

TEST_F(SimCaptureTest, EnqueueOfANonDeviceAddressFailsAndTheCaptureEndsInFailure) {
  Stream &stream = new_stream();
  auto *const buffer = static_cast<unsigned char *>(allocate(1024));
  std::vector<int> log;
  int host_value = 0;
  const void *const outside[] = {buffer, &host_value};
  ASSERT_TRUE(stream.begin_capture().is_ok());

  const Status launch = launch_append(stream, log, 1, outside);
  EXPECT_EQ(launch.code(), RRT_ERR_INVALID_ARGUMENT);
  char expected_address[32];
  std::snprintf(expected_address, sizeof expected_address, "%p",
                static_cast<const void *>(&host_value));
  EXPECT_NE(launch.message().find(expected_address), std::string::npos) << launch.message();

  EXPECT_EQ(stream.enqueue_memset(&host_value, 0, sizeof host_value).code(),
            RRT_ERR_INVALID_ARGUMENT);
  const Status past_end = stream.enqueue_memset(buffer + 1000, 0, 100);
  EXPECT_EQ(past_end.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(past_end.message().find("past the end"), std::string::npos) << past_end.message();
  EXPECT_EQ(stream.enqueue_copy_device_to_device(buffer, &host_value, 4).code(),
            RRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(stream.is_capturing());
  const void *const inside[] = {buffer + 10};
  ASSERT_TRUE(launch_append(stream, log, 2, inside).is_ok());
  std::unique_ptr<Graph> refused_graph;
  const Status ended = stream.end_capture(&refused_graph);
  EXPECT_EQ(ended.code(), RRT_ERR_INVALID_STATE) << "the refused enqueues would be missing";
  EXPECT_NE(ended.message().find(expected_address), std::string::npos) << ended.message();
  EXPECT_EQ(refused_graph, nullptr);
  EXPECT_FALSE(stream.is_capturing());

  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(launch_append(stream, log, 2, inside).is_ok());
  const std::unique_ptr<Graph> graph = end_capture(stream);
  EXPECT_EQ(graph->operation_count(), 1u);
  ASSERT_EQ(graph->captured_addresses().size(), 1u);
  EXPECT_EQ(graph->captured_addresses()[0].address, address_of(buffer + 10));
  ASSERT_TRUE(stream.replay(*graph).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(log, std::vector<int>{2});
}

TEST_F(SimCaptureTest, CapturedAddressesNameTheirAllocation) {
  Stream &stream = new_stream();
  auto *const first = static_cast<unsigned char *>(allocate(4096));
  auto *const second = static_cast<unsigned char *>(allocate(1024));
  std::vector<int> log;
  const void *const referenced[] = {first + 100, second, first + 100};
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(launch_append(stream, log, 1, referenced).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_device_to_device(second, first + 100, 64).is_ok());
  const std::unique_ptr<Graph> graph = end_capture(stream);

  const auto first_info = device_.find_allocation(first);
  const auto second_info = device_.find_allocation(second);
  ASSERT_TRUE(first_info && second_info);
  const std::span<const CapturedAddress> captured = graph->captured_addresses();
  ASSERT_EQ(captured.size(), 2u);
  for (const CapturedAddress &entry : captured) {
    if (entry.address == address_of(second)) {
      EXPECT_EQ(entry.base, second_info->base);
      EXPECT_EQ(entry.generation, second_info->generation);
    } else {
      EXPECT_EQ(entry.address, address_of(first + 100));
      EXPECT_EQ(entry.base, first_info->base);
      EXPECT_EQ(entry.generation, first_info->generation);
    }
  }
}

TEST_F(SimCaptureTest, ReplayAfterFreeIsStaleAndEnqueuesNothing) {
  Stream &stream = new_stream();
  void *const kept = allocate(1024);
  auto *const freed = static_cast<unsigned char *>(allocate(1024));
  std::vector<int> log;
  const void *const referenced[] = {kept, freed + 8};
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(launch_append(stream, log, 1).is_ok());
  ASSERT_TRUE(launch_append(stream, log, 2, referenced).is_ok());
  const std::unique_ptr<Graph> graph = end_capture(stream);
  ASSERT_TRUE(stream.replay(*graph).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(log, (std::vector<int>{1, 2}));

  ASSERT_TRUE(device_.free(freed).is_ok());
  const Status stale = stream.replay(*graph);
  EXPECT_EQ(stale.code(), RRT_ERR_STALE_ADDRESS);
  char expected_address[32];
  std::snprintf(expected_address, sizeof expected_address, "%p",
                static_cast<const void *>(freed + 8));
  EXPECT_NE(stale.message().find(expected_address), std::string::npos) << stale.message();
  EXPECT_NE(stale.message().find("freed"), std::string::npos) << stale.message();
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(log, (std::vector<int>{1, 2}));
  EXPECT_EQ(graph->operation_count(), 2u);
}

TEST(SimCaptureReuseTest, ReplayAfterTheAddressIsReallocatedIsStale) {
  // Without a quarantine a freed block goes straight back to the host allocator, which tends
  // to hand the same address out again; the generation still tells the allocations apart.
  SimDevice device(SimDeviceOptions{.memory = SimMemoryOptions{.quarantine_bytes = 0}});
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(device.create_stream(&stream).is_ok());
  void *const original = device.allocate(4096);
  ASSERT_NE(original, nullptr);
  std::vector<int> log;
  const void *const referenced[] = {original};
  ASSERT_TRUE(stream->begin_capture().is_ok());
  ASSERT_TRUE(launch_append(*stream, log, 1, referenced).is_ok());
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(stream->end_capture(&graph).is_ok());

  ASSERT_TRUE(device.free(original).is_ok());
  void *const replacement = device.allocate(4096);
  ASSERT_NE(replacement, nullptr);
  const Status stale = stream->replay(*graph);
  EXPECT_EQ(stale.code(), RRT_ERR_STALE_ADDRESS);
  if (replacement == original) {
    EXPECT_NE(stale.message().find("different allocation"), std::string::npos) << stale.message();
  }
  ASSERT_TRUE(stream->synchronize().is_ok());
  EXPECT_TRUE(log.empty());
  ASSERT_TRUE(device.free(replacement).is_ok());
}

TEST_F(SimCaptureTest, StaleCheckTellsANewAllocationAtTheSameAddressFromTheOriginal) {
  // The host allocator decides whether a freed address comes back, so this builds the graph
  // directly: it claims `buffer` was captured in an allocation of a generation that is not
  // the one live there now, as after a free and a reallocation at the same base.
  Stream &stream = new_stream();
  void *const buffer = allocate(1024);
  const auto now = device_.find_allocation(buffer);
  ASSERT_TRUE(now.has_value());
  std::vector<int> log;
  std::vector<SimOperation> operations(1);
  operations[0].kind = SimOperation::Kind::kLaunch;
  operations[0].entry = &testing::append_entry;
  operations[0].entry_context = &log;
  const int value = 1;
  operations[0].invocation = InvocationBytes(std::as_bytes(std::span<const int>(&value, 1)));
  const SimGraph graph(device_.memory(), std::move(operations),
                       {CapturedAddress{now->base, now->base, now->generation + 1000}});

  const Status stale = stream.replay(graph);
  EXPECT_EQ(stale.code(), RRT_ERR_STALE_ADDRESS);
  EXPECT_NE(stale.message().find("different allocation"), std::string::npos) << stale.message();
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_TRUE(log.empty());
}

TEST_F(SimCaptureTest, CaptureStateErrors) {
  Stream &stream = new_stream();
  std::unique_ptr<Graph> graph;
  EXPECT_EQ(stream.end_capture(&graph).code(), RRT_ERR_INVALID_STATE);
  ASSERT_TRUE(stream.begin_capture().is_ok());
  EXPECT_EQ(stream.begin_capture().code(), RRT_ERR_INVALID_STATE);
  EXPECT_EQ(stream.synchronize().code(), RRT_ERR_INVALID_STATE);
  EXPECT_EQ(stream.end_capture(nullptr).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(stream.is_capturing());
  ASSERT_TRUE(stream.end_capture(&graph).is_ok());
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(graph->operation_count(), 0u);
  ASSERT_TRUE(stream.begin_capture().is_ok());
  EXPECT_EQ(stream.replay(*graph).code(), RRT_ERR_INVALID_STATE);
  EXPECT_NE(end_capture(stream), nullptr);
  EXPECT_TRUE(stream.replay(*graph).is_ok());
  EXPECT_TRUE(stream.synchronize().is_ok());
}

class ForeignGraph final : public Graph {
 public:
  std::size_t operation_count() const override { return 0; }
  Status check_addresses() const override { return Status::ok(); }
  std::span<const CapturedAddress> captured_addresses() const override { return {}; }
};

TEST_F(SimCaptureTest, ReplayRejectsGraphsOfOtherDevices) {
  SimDevice other_device;
  std::unique_ptr<Stream> other_stream;
  ASSERT_TRUE(other_device.create_stream(&other_stream).is_ok());
  std::vector<int> log;
  ASSERT_TRUE(other_stream->begin_capture().is_ok());
  ASSERT_TRUE(launch_append(*other_stream, log, 1).is_ok());
  const std::unique_ptr<Graph> foreign_device_graph = end_capture(*other_stream);

  Stream &stream = new_stream();
  EXPECT_EQ(stream.replay(*foreign_device_graph).code(), RRT_ERR_INVALID_ARGUMENT);
  const ForeignGraph foreign_graph;
  EXPECT_EQ(stream.replay(foreign_graph).code(), RRT_ERR_INVALID_ARGUMENT);
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_TRUE(log.empty());
}

TEST_F(SimCaptureTest, WorkQueuedBeforeCaptureStillRuns) {
  Stream &stream = new_stream();
  Event &before = new_event();
  Gate &gate = new_gate();
  std::vector<int> log;
  ASSERT_TRUE(gate.block(stream).is_ok());
  ASSERT_TRUE(launch_append(stream, log, 1).is_ok());
  ASSERT_TRUE(stream.record_event(before).is_ok());
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(launch_append(stream, log, 2).is_ok());
  gate.open();
  ASSERT_TRUE(before.synchronize().is_ok());
  EXPECT_EQ(log, std::vector<int>{1});
  const std::unique_ptr<Graph> graph = end_capture(stream);
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(log, std::vector<int>{1});
}

Status increment_entry(void *context, const std::byte * /*invocation*/, std::size_t /*bytes*/) {
  ++*static_cast<int *>(context);
  return Status::ok();
}

TEST_F(SimCaptureTest, EventWaitInAGraphBindsAtReplay) {
  Stream &producer = new_stream();
  Stream &consumer = new_stream();
  Event &event = new_event();
  int produced = 0;
  int observed = -1;
  Transfer transfer{&produced, &observed};

  // Captured while the event was never recorded: a wait bound then would wait for nothing.
  ASSERT_TRUE(consumer.begin_capture().is_ok());
  ASSERT_TRUE(consumer.wait_event(event).is_ok());
  LaunchRequest request;
  request.entry = &transfer_entry;
  request.entry_context = &transfer;
  ASSERT_TRUE(consumer.enqueue_launch(request).is_ok());
  const std::unique_ptr<Graph> graph = end_capture(consumer);
  EXPECT_EQ(graph->operation_count(), 2u);

  LaunchRequest increment;
  increment.entry = &increment_entry;
  increment.entry_context = &produced;
  for (int round = 1; round <= 3; ++round) {
    Gate &gate = new_gate();
    ASSERT_TRUE(gate.block(producer).is_ok());
    ASSERT_TRUE(producer.enqueue_launch(increment).is_ok());
    ASSERT_TRUE(producer.record_event(event).is_ok());
    ASSERT_TRUE(consumer.replay(*graph).is_ok());
    gate.wait_until_entered();
    gate.open();
    ASSERT_TRUE(consumer.synchronize().is_ok());
    EXPECT_EQ(observed, round);
    ASSERT_TRUE(producer.synchronize().is_ok());
  }
}

TEST_F(SimCaptureTest, RecordThenWaitInOneGraph) {
  Stream &stream = new_stream();
  Event &event = new_event();
  std::vector<int> log;
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(launch_append(stream, log, 1).is_ok());
  ASSERT_TRUE(stream.record_event(event).is_ok());
  ASSERT_TRUE(stream.wait_event(event).is_ok());
  ASSERT_TRUE(launch_append(stream, log, 2).is_ok());
  const std::unique_ptr<Graph> graph = end_capture(stream);
  EXPECT_EQ(graph->operation_count(), 4u);
  EXPECT_TRUE(event.query());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(stream.replay(*graph).is_ok());
  }
  ASSERT_TRUE(event.synchronize().is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(log.size(), 20u);
}

TEST_F(SimCaptureTest, GraphMayBeDestroyedWhileItsReplayIsQueued) {
  Stream &stream = new_stream();
  Gate &gate = new_gate();
  std::vector<int> log;
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(launch_append(stream, log, 1).is_ok());
  std::unique_ptr<Graph> graph = end_capture(stream);
  ASSERT_TRUE(gate.block(stream).is_ok());
  ASSERT_TRUE(stream.replay(*graph).is_ok());
  graph.reset();
  gate.open();
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(log, std::vector<int>{1});
}

TEST_F(SimCaptureTest, ConcurrentReplaysEnqueueEachGraphAsOneBlock) {
  Stream &shared = new_stream();
  constexpr int kThreads = 4;
  constexpr int kReplays = 200;
  constexpr int kSteps = 3;
  std::vector<int> log;
  std::vector<std::unique_ptr<Graph>> graphs;
  Stream &capturing = new_stream();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(capturing.begin_capture().is_ok());
    for (int step = 0; step < kSteps; ++step) {
      ASSERT_TRUE(launch_append(capturing, log, (t << 8) | step).is_ok());
    }
    graphs.push_back(end_capture(capturing));
  }
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&shared, &graphs, t] {
        for (int i = 0; i < kReplays; ++i) {
          ASSERT_TRUE(shared.replay(*graphs[t]).is_ok());
        }
      });
    }
  }
  ASSERT_TRUE(shared.synchronize().is_ok());
  ASSERT_EQ(log.size(), static_cast<std::size_t>(kThreads * kReplays * kSteps));
  for (std::size_t i = 0; i < log.size(); i += kSteps) {
    const int thread = log[i] >> 8;
    for (int step = 0; step < kSteps; ++step) {
      ASSERT_EQ(log[i + step], (thread << 8) | step) << "at " << i + step;
    }
  }
}

TEST_F(SimCaptureTest, ConcurrentReplaysOnSeparateStreams) {
  constexpr int kThreads = 3;
  constexpr int kReplays = 300;
  std::vector<std::vector<int>> logs(kThreads);
  std::vector<std::unique_ptr<Graph>> graphs;
  std::vector<Stream *> streams;
  for (int t = 0; t < kThreads; ++t) {
    Stream &stream = new_stream();
    streams.push_back(&stream);
    ASSERT_TRUE(stream.begin_capture().is_ok());
    ASSERT_TRUE(launch_append(stream, logs[t], t).is_ok());
    graphs.push_back(end_capture(stream));
  }
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kReplays; ++i) {
          ASSERT_TRUE(streams[t]->replay(*graphs[t]).is_ok());
        }
        ASSERT_TRUE(streams[t]->synchronize().is_ok());
      });
    }
  }
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(logs[t], std::vector<int>(kReplays, t));
  }
}

TEST_F(SimCaptureTest, DestroyingACapturingStreamAbandonsTheCapture) {
  std::vector<int> log;
  {
    std::unique_ptr<Stream> stream;
    ASSERT_TRUE(device_.create_stream(&stream).is_ok());
    ASSERT_TRUE(launch_append(*stream, log, 1).is_ok());
    ASSERT_TRUE(stream->begin_capture().is_ok());
    ASSERT_TRUE(launch_append(*stream, log, 2).is_ok());
  }
  EXPECT_EQ(log, std::vector<int>{1});
}

}  // namespace
}  // namespace replayrt::sim
