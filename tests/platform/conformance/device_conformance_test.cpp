// The Device/Stream/Event/Graph/Executor contract of src/platform/device.h, checked through
// the factory so that every backend runs the same suite. A backend adds itself with one more
// entry in the instantiation at the end; a backend this build or machine lacks skips.
//
// The suite uses only what the contract promises every backend: synchronous and enqueued
// copies and memsets, events, capture and replay, and the executor's handling of a malformed
// invocation. Work that needs a backend's own launch mechanism stays in that backend's tests.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "platform/device.h"
#include "platform/device_factory.h"
#include "platform/launch/kernel_registry.h"
#include "platform/sim/kernels/builtin_kernels.h"
#include "platform/sim/sim_device.h"
#include "support/callable_builder.h"
#include "support/executable_rig.h"
#include "support/gpu_skip.h"

#if defined(REPLAYRT_HAVE_CUDA)
#include "platform/cuda/cuda_api.h"
#include "platform/cuda/cuda_device.h"
#include "support/fake_cuda.h"
#endif

namespace replayrt {
namespace {

struct Backend {
  const char *name;
  rrt_platform_t platform;
  // A device of this backend that hands a freed base out again soon (no quarantine), for the
  // ABA test; null: the factory's device.
  std::unique_ptr<Device> (*reusing_device)() = nullptr;
  // The backend's device; null: the factory's device for `platform`.
  std::unique_ptr<Device> (*make_device)() = nullptr;
  // True for a backend that needs hardware: without it the suite skips, or fails when
  // REPLAYRT_REQUIRE_GPU=1.
  bool needs_gpu = false;
};

class DeviceConformanceTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam().make_device != nullptr) {
      device_ = GetParam().make_device();
      ASSERT_NE(device_, nullptr);
      kernels_ = std::make_unique<KernelRegistry>(device_->builtin_launchers());
      return;
    }
    const Status status = create_device(GetParam().platform, 0, &device_);
    if (status.code() == RRT_ERR_UNSUPPORTED) {
      if (GetParam().needs_gpu && testing_support::gpu_required()) {
        FAIL() << "REPLAYRT_REQUIRE_GPU=1 but " << GetParam().name << ": " << status.message();
      }
      GTEST_SKIP() << GetParam().name << ": " << status.message();
    }
    ASSERT_TRUE(status.is_ok()) << status.message();
    kernels_ = std::make_unique<KernelRegistry>(device_->builtin_launchers());
  }

  void TearDown() override { release_all(); }

  // Drops every graph, stream and executor, then frees every allocation.
  void release_all() {
    graphs_.clear();
    streams_.clear();
    rigs_.clear();
    executors_.clear();
    for (void *ptr : allocations_) {
      (void)device_->free(ptr);
    }
    allocations_.clear();
  }

  std::byte *allocate(std::size_t bytes) {
    void *ptr = device_->allocate(bytes);
    EXPECT_NE(ptr, nullptr);
    allocations_.push_back(ptr);
    return static_cast<std::byte *>(ptr);
  }

  // Frees an allocation made by allocate() before the fixture does.
  Status release(void *ptr) {
    std::erase(allocations_, ptr);
    return device_->free(ptr);
  }

  Stream &new_stream() {
    std::unique_ptr<Stream> stream;
    EXPECT_TRUE(device_->create_stream(&stream).is_ok());
    streams_.push_back(std::move(stream));
    return *streams_.back();
  }

  std::unique_ptr<Event> new_event() {
    std::unique_ptr<Event> event;
    EXPECT_TRUE(device_->create_event(&event).is_ok());
    return event;
  }

  Graph &end_capture(Stream &stream) {
    std::unique_ptr<Graph> graph;
    EXPECT_TRUE(stream.end_capture(&graph).is_ok());
    graphs_.push_back(std::move(graph));
    return *graphs_.back();
  }

  Executor &new_executor() {
    std::unique_ptr<Executor> executor;
    ExecutorConfig config;
    config.kernels = kernels_.get();
    EXPECT_TRUE(device_->create_executor(config, &executor).is_ok());
    executors_.push_back(std::move(executor));
    return *executors_.back();
  }

  // A one-task callable prepared on `executor`, for launches that must fail.
  testing::ExecutableRig &fill_rig(Executor &executor) {
    testing::CallableBuilder builder;
    builder.param(testing::f32({16}, RRT_DIR_OUT))
        .task(testing::kFill, {testing::param(0), testing::imm(0)});
    return new_rig(executor, builder.desc());
  }

  testing::ExecutableRig &new_rig(Executor &executor, const rrt_callable_desc_t &desc) {
    rigs_.push_back(std::make_unique<testing::ExecutableRig>());
    const Status prepared = rigs_.back()->prepare(*device_, executor, *kernels_, desc);
    EXPECT_TRUE(prepared.is_ok()) << prepared.message();
    return *rigs_.back();
  }

  // Enqueues a launch whose invocation is malformed: it fails (at once or when it executes)
  // with RRT_ERR_KERNEL_FAILED.
  Status enqueue_malformed(Executor &executor, Stream &stream) {
    const std::array<std::byte, 8> malformed{};
    return executor.enqueue(stream, fill_rig(executor).executable(),
                            LaunchBinding{malformed, {}, nullptr});
  }

  void write_floats(void *device, const std::vector<float> &values) {
    ASSERT_TRUE(
        device_->copy_host_to_device(device, values.data(), values.size() * sizeof(float)).is_ok());
  }

  std::vector<float> read_floats(const void *device, std::size_t count) {
    std::vector<float> host(count);
    EXPECT_TRUE(device_->copy_device_to_host(host.data(), device, count * sizeof(float)).is_ok());
    return host;
  }

  std::vector<std::uint8_t> read(const void *device, std::size_t bytes) {
    std::vector<std::uint8_t> host(bytes);
    EXPECT_TRUE(device_->copy_device_to_host(host.data(), device, bytes).is_ok());
    return host;
  }

  // Declared first so that it is destroyed last: streams, graphs and executors must not
  // outlive their device.
  std::unique_ptr<Device> device_;
  std::unique_ptr<KernelRegistry> kernels_;
  std::vector<std::unique_ptr<Executor>> executors_;
  std::vector<std::unique_ptr<testing::ExecutableRig>> rigs_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::unique_ptr<Graph>> graphs_;
  std::vector<void *> allocations_;
};

std::vector<std::uint8_t> filled(std::size_t bytes, std::uint8_t value) {
  std::vector<std::uint8_t> out(bytes, value);
  return out;
}

TEST_P(DeviceConformanceTest, PropertiesDescribeTheAllocations) {
  const DeviceProperties properties = device_->properties();
  ASSERT_GT(properties.base_alignment, 0U);
  EXPECT_EQ(properties.base_alignment & (properties.base_alignment - 1), 0U)
      << "the base alignment is a power of two";
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20}) {
    const auto address = reinterpret_cast<std::uintptr_t>(allocate(bytes));
    EXPECT_EQ(address % properties.base_alignment, 0U) << bytes << " bytes";
  }
  if (properties.host_can_dereference) {
    std::byte *buffer = allocate(64);
    const std::vector<std::uint8_t> pattern = filled(64, 0x5A);
    ASSERT_TRUE(device_->copy_host_to_device(buffer, pattern.data(), pattern.size()).is_ok());
    EXPECT_EQ(std::to_integer<std::uint8_t>(buffer[63]), 0x5A);
  }
}

TEST_P(DeviceConformanceTest, AllocationsAreDistinctAndCounted) {
  const MemoryCounters before = device_->memory_counters();
  std::byte *a = allocate(4096);
  std::byte *b = allocate(4096);
  EXPECT_NE(a, b);
  const MemoryCounters during = device_->memory_counters();
  EXPECT_EQ(during.allocation_calls, before.allocation_calls + 2);
  EXPECT_GE(during.live_bytes, before.live_bytes + 8192);
  EXPECT_GE(during.peak_live_bytes, during.live_bytes);
  EXPECT_EQ(device_->allocate(0), nullptr);
  ASSERT_TRUE(release(a).is_ok());
  EXPECT_EQ(device_->memory_counters().free_calls, before.free_calls + 1);
}

TEST_P(DeviceConformanceTest, FreeRefusesUnknownInteriorAndRepeatedPointers) {
  std::byte *buffer = allocate(2048);
  int host = 0;
  EXPECT_EQ(device_->free(&host).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(device_->free(buffer + 1).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(device_->find_allocation(buffer).has_value()) << "a refused free changes nothing";
  ASSERT_TRUE(release(buffer).is_ok());
  EXPECT_EQ(device_->free(buffer).code(), RRT_ERR_INVALID_ARGUMENT);
}

TEST_P(DeviceConformanceTest, FindAllocationCoversExactlyTheAllocation) {
  std::byte *buffer = allocate(4096);
  const auto whole = device_->find_allocation(buffer);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->base, reinterpret_cast<std::uintptr_t>(buffer));
  EXPECT_GE(whole->size, 4096U);
  const auto interior = device_->find_allocation(buffer + 4095);
  ASSERT_TRUE(interior.has_value());
  EXPECT_EQ(interior->base, whole->base);
  EXPECT_EQ(interior->generation, whole->generation);
  int host = 0;
  EXPECT_FALSE(device_->find_allocation(&host).has_value());

  const std::array<AddressRange, 3> ranges = {AddressRange{buffer, 4096},
                                              AddressRange{buffer + 4000, 96},
                                              AddressRange{buffer + 4000, whole->size}};
  EXPECT_EQ(device_->first_range_outside_allocations(ranges), 2U);
  EXPECT_EQ(device_->first_range_outside_allocations(std::span(ranges).first(2)), 2U);
}

TEST_P(DeviceConformanceTest, SynchronousCopiesAndMemsetRoundTrip) {
  std::byte *a = allocate(256);
  std::byte *b = allocate(256);
  const std::vector<std::uint8_t> pattern = filled(256, 0x3C);
  ASSERT_TRUE(device_->copy_host_to_device(a, pattern.data(), pattern.size()).is_ok());
  ASSERT_TRUE(device_->copy_device_to_device(b, a, 256).is_ok());
  EXPECT_EQ(read(b, 256), pattern);
  ASSERT_TRUE(device_->memset(b + 128, 0x7E, 128).is_ok());
  const std::vector<std::uint8_t> back = read(b, 256);
  EXPECT_EQ(back[127], 0x3C);
  EXPECT_EQ(back[128], 0x7E);
}

TEST_P(DeviceConformanceTest, RangesOutsideOneAllocationAreRefusedAndChangeNothing) {
  std::byte *buffer = allocate(1024);
  const std::size_t size = device_->find_allocation(buffer)->size;
  ASSERT_TRUE(device_->memset(buffer, 0x11, size).is_ok());
  const std::vector<std::uint8_t> big = filled(size + 1, 0x22);
  EXPECT_EQ(device_->copy_host_to_device(buffer, big.data(), big.size()).code(),
            RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(device_->memset(buffer + 1, 0x22, size).code(), RRT_ERR_INVALID_ARGUMENT);
  std::vector<std::uint8_t> host(size + 1);
  EXPECT_EQ(device_->copy_device_to_host(host.data(), buffer, size + 1).code(),
            RRT_ERR_INVALID_ARGUMENT);
  int not_device = 0;
  EXPECT_EQ(device_->copy_device_to_device(buffer, &not_device, sizeof not_device).code(),
            RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(read(buffer, size), filled(size, 0x11));
}

TEST_P(DeviceConformanceTest, StreamWorkRunsInEnqueueOrder) {
  Stream &stream = new_stream();
  std::byte *a = allocate(512);
  std::byte *b = allocate(512);
  const std::vector<std::uint8_t> first = filled(512, 1);
  const std::vector<std::uint8_t> second = filled(512, 2);
  std::vector<std::uint8_t> seen_first(512);
  std::vector<std::uint8_t> seen_second(512);
  ASSERT_TRUE(stream.enqueue_copy_host_to_device(a, first.data(), 512).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_device_to_device(b, a, 512).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_device_to_host(seen_first.data(), b, 512).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_host_to_device(a, second.data(), 512).is_ok());
  ASSERT_TRUE(stream.enqueue_memset(a + 256, 3, 256).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_device_to_host(seen_second.data(), a, 512).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(seen_first, first);
  EXPECT_EQ(seen_second[255], 2);
  EXPECT_EQ(seen_second[256], 3);
}

TEST_P(DeviceConformanceTest, AFailedLaunchIsStickyUntilSynchronizeReportsAndClearsIt) {
  Stream &stream = new_stream();
  Executor &executor = new_executor();
  std::byte *buffer = allocate(64);
  ASSERT_TRUE(device_->memset(buffer, 0x11, 64).is_ok());
  const Status enqueued = enqueue_malformed(executor, stream);
  if (!enqueued.is_ok()) {
    EXPECT_EQ(enqueued.code(), RRT_ERR_KERNEL_FAILED) << enqueued.message();
  }
  (void)stream.enqueue_memset(buffer, 0x22, 64);
  const Status failure = stream.synchronize();
  EXPECT_EQ(failure.code(), RRT_ERR_KERNEL_FAILED) << failure.message();
  EXPECT_EQ(read(buffer, 64), filled(64, 0x11)) << "work after the failure is skipped";

  EXPECT_TRUE(stream.synchronize().is_ok()) << "synchronize cleared the failure";
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x33, 64).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(read(buffer, 64), filled(64, 0x33));
}

TEST_P(DeviceConformanceTest, AStreamQueryIsDoneOnceItsWorkExecutedAndReportsNothing) {
  Stream &stream = new_stream();
  Executor &executor = new_executor();
  EXPECT_TRUE(stream.query()) << "nothing queued";
  std::byte *buffer = allocate(64);
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x44, 64).is_ok());
  ASSERT_TRUE(stream.wait_idle().is_ok());
  EXPECT_TRUE(stream.query());
  (void)enqueue_malformed(executor, stream);
  ASSERT_TRUE(stream.wait_idle().is_ok());
  EXPECT_TRUE(stream.query()) << "failed work counts as executed";
  EXPECT_EQ(stream.synchronize().code(), RRT_ERR_KERNEL_FAILED) << "the query left it pending";
  EXPECT_TRUE(stream.query());
}

TEST_P(DeviceConformanceTest, CreateExecutorRefusesAConfigWithoutKernels) {
  std::unique_ptr<Executor> executor;
  EXPECT_EQ(device_->create_executor(ExecutorConfig{}, &executor).code(), RRT_ERR_INVALID_ARGUMENT);
  ExecutorConfig config;
  config.kernels = kernels_.get();
  EXPECT_EQ(device_->create_executor(config, nullptr).code(), RRT_ERR_INVALID_ARGUMENT);
}

TEST_P(DeviceConformanceTest, AnEventNeverRecordedIsComplete) {
  const std::unique_ptr<Event> event = new_event();
  EXPECT_TRUE(event->query());
  EXPECT_TRUE(event->synchronize().is_ok());
}

TEST_P(DeviceConformanceTest, AnEventCompletesAfterTheWorkBeforeIt) {
  Stream &stream = new_stream();
  const std::unique_ptr<Event> event = new_event();
  std::byte *buffer = allocate(1 << 20);
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x44, 1 << 20).is_ok());
  ASSERT_TRUE(stream.record_event(*event).is_ok());
  ASSERT_TRUE(event->synchronize().is_ok());
  EXPECT_TRUE(event->query());
  EXPECT_EQ(read(buffer + (1 << 20) - 16, 16), filled(16, 0x44));
}

TEST_P(DeviceConformanceTest, AnEventOrdersWorkAcrossStreams) {
  Stream &producer = new_stream();
  Stream &consumer = new_stream();
  const std::unique_ptr<Event> event = new_event();
  std::byte *buffer = allocate(1 << 20);
  std::vector<std::uint8_t> seen(16);
  ASSERT_TRUE(producer.enqueue_memset(buffer, 0x55, 1 << 20).is_ok());
  ASSERT_TRUE(producer.record_event(*event).is_ok());
  ASSERT_TRUE(consumer.wait_event(*event).is_ok());
  ASSERT_TRUE(
      consumer.enqueue_copy_device_to_host(seen.data(), buffer + (1 << 20) - 16, 16).is_ok());
  ASSERT_TRUE(consumer.synchronize().is_ok());
  EXPECT_EQ(seen, filled(16, 0x55));
  ASSERT_TRUE(producer.synchronize().is_ok());
}

TEST_P(DeviceConformanceTest, AFailureStaysOnItsStreamAndIsReportedOnce) {
  Stream &failing = new_stream();
  Stream &waiting = new_stream();
  Executor &executor = new_executor();
  const std::unique_ptr<Event> event = new_event();
  std::byte *buffer = allocate(64);
  ASSERT_TRUE(device_->memset(buffer, 0x11, 64).is_ok());
  (void)enqueue_malformed(executor, failing);
  ASSERT_TRUE(failing.record_event(*event).is_ok());
  ASSERT_TRUE(waiting.wait_event(*event).is_ok());
  ASSERT_TRUE(waiting.enqueue_memset(buffer, 0x22, 64).is_ok());
  EXPECT_TRUE(waiting.synchronize().is_ok());
  EXPECT_EQ(read(buffer, 64), filled(64, 0x22));
  EXPECT_EQ(event->synchronize().code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_TRUE(event->synchronize().is_ok());
  EXPECT_TRUE(failing.synchronize().is_ok());
  ASSERT_TRUE(failing.enqueue_memset(buffer, 0x33, 64).is_ok());
  EXPECT_TRUE(failing.synchronize().is_ok());
  EXPECT_EQ(read(buffer, 64), filled(64, 0x33));
}

TEST_P(DeviceConformanceTest, WaitIdleWaitsAndReportsNothingAlsoWhileCapturing) {
  Stream &stream = new_stream();
  std::byte *buffer = allocate(64);
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x5A, 64).is_ok());
  ASSERT_TRUE(stream.begin_capture().is_ok());
  EXPECT_TRUE(stream.wait_idle().is_ok());
  EXPECT_EQ(read(buffer, 64), filled(64, 0x5A)) << "work queued before the capture has run";
  EXPECT_TRUE(stream.is_capturing());
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x11, 64).is_ok());
  (void)end_capture(stream);

  stream.fail_enqueue(Status::error(RRT_ERR_KERNEL_FAILED, "pending"));
  EXPECT_TRUE(stream.wait_idle().is_ok());
  EXPECT_EQ(stream.synchronize().code(), RRT_ERR_KERNEL_FAILED) << "wait_idle left it pending";
}

TEST_P(DeviceConformanceTest, AnEventWaitReportsNothingAndLeavesTheFailureToSynchronize) {
  Stream &stream = new_stream();
  const std::unique_ptr<Event> event = new_event();
  stream.fail_enqueue(Status::error(RRT_ERR_KERNEL_FAILED, "pending"));
  ASSERT_TRUE(stream.record_event(*event).is_ok());
  event->wait();
  EXPECT_TRUE(event->query());
  EXPECT_EQ(event->synchronize().code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_TRUE(stream.synchronize().is_ok()) << "the event's synchronize reported it";
}

// An event a graph records is recorded by every replay: the record carries the replaying
// stream's failure state at that point, not that of the event's previous record on another
// stream.
TEST_P(DeviceConformanceTest, AReplaysEventRecordCarriesOnlyTheReplayingStreamsFailure) {
  Stream &failing = new_stream();
  Stream &replaying = new_stream();
  const std::unique_ptr<Event> event = new_event();
  ASSERT_TRUE(replaying.begin_capture().is_ok());
  ASSERT_TRUE(replaying.record_event(*event).is_ok());
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(replaying.end_capture(&graph).is_ok());
  failing.fail_enqueue(Status::error(RRT_ERR_KERNEL_FAILED, "pending"));
  ASSERT_TRUE(failing.record_event(*event).is_ok());
  ASSERT_TRUE(replaying.replay(*graph).is_ok());
  EXPECT_TRUE(event->synchronize().is_ok()) << "the replay's record carried another stream's";
  EXPECT_EQ(failing.synchronize().code(), RRT_ERR_KERNEL_FAILED) << "reported on its stream";
  EXPECT_TRUE(replaying.synchronize().is_ok());
}

// A replay onto a stream whose failure is pending skips the graph's work, but its event
// records still mark the stream and carry that failure, as a record enqueued then does.
TEST_P(DeviceConformanceTest, AReplaySkippedForAPendingFailureStillRecordsItsEvents) {
  Stream &stream = new_stream();
  const std::unique_ptr<Event> event = new_event();
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.record_event(*event).is_ok());
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(stream.end_capture(&graph).is_ok());
  stream.fail_enqueue(Status::error(RRT_ERR_KERNEL_FAILED, "pending"));
  ASSERT_TRUE(stream.replay(*graph).is_ok());
  EXPECT_EQ(event->synchronize().code(), RRT_ERR_KERNEL_FAILED)
      << "the skipped replay's record did not carry the pending failure";
  EXPECT_TRUE(stream.synchronize().is_ok()) << "the event's synchronize reported it";
}

TEST_P(DeviceConformanceTest, CaptureRecordsAndReplayRunsTheRecordedWork) {
  Stream &stream = new_stream();
  std::byte *a = allocate(256);
  std::byte *b = allocate(256);
  ASSERT_TRUE(device_->memset(a, 0, 256).is_ok());
  ASSERT_TRUE(device_->memset(b, 0, 256).is_ok());
  ASSERT_TRUE(stream.begin_capture().is_ok());
  EXPECT_TRUE(stream.is_capturing());
  ASSERT_TRUE(stream.enqueue_memset(a, 0x66, 256).is_ok());
  ASSERT_TRUE(stream.enqueue_copy_device_to_device(b, a, 256).is_ok());
  EXPECT_EQ(stream.synchronize().code(), RRT_ERR_INVALID_STATE);
  Graph &graph = end_capture(stream);
  EXPECT_FALSE(stream.is_capturing());
  EXPECT_EQ(graph.operation_count(), 2U);
  EXPECT_EQ(read(b, 256), filled(256, 0)) << "captured work does not run at capture";

  bool saw_a = false;
  bool saw_b = false;
  for (const CapturedAddress &captured : graph.captured_addresses()) {
    saw_a = saw_a || captured.address == reinterpret_cast<std::uintptr_t>(a);
    saw_b = saw_b || captured.address == reinterpret_cast<std::uintptr_t>(b);
  }
  EXPECT_TRUE(saw_a && saw_b);

  for (int replay = 0; replay < 3; ++replay) {
    ASSERT_TRUE(device_->memset(b, 0, 256).is_ok());
    ASSERT_TRUE(stream.replay(graph).is_ok());
    ASSERT_TRUE(stream.synchronize().is_ok());
    EXPECT_EQ(read(b, 256), filled(256, 0x66)) << "replay " << replay;
  }
  Stream &other = new_stream();
  ASSERT_TRUE(device_->memset(b, 0, 256).is_ok());
  ASSERT_TRUE(other.replay(graph).is_ok());
  ASSERT_TRUE(other.synchronize().is_ok());
  EXPECT_EQ(read(b, 256), filled(256, 0x66)) << "a graph replays on any stream of its device";
}

TEST_P(DeviceConformanceTest, CaptureStateErrors) {
  Stream &stream = new_stream();
  std::unique_ptr<Graph> graph;
  EXPECT_EQ(stream.end_capture(&graph).code(), RRT_ERR_INVALID_STATE);
  ASSERT_TRUE(stream.begin_capture().is_ok());
  EXPECT_EQ(stream.begin_capture().code(), RRT_ERR_INVALID_STATE);
  Graph &empty = end_capture(stream);
  EXPECT_EQ(empty.operation_count(), 0U);
  ASSERT_TRUE(stream.begin_capture().is_ok());
  EXPECT_EQ(stream.replay(empty).code(), RRT_ERR_INVALID_STATE);
  end_capture(stream);
  EXPECT_TRUE(stream.replay(empty).is_ok());
  EXPECT_TRUE(stream.synchronize().is_ok());
}

TEST_P(DeviceConformanceTest, ACaptureWithARefusedEnqueueFailsAtEndAndTheStreamStaysUsable) {
  Stream &stream = new_stream();
  std::byte *buffer = allocate(64);
  int host = 0;
  ASSERT_TRUE(stream.begin_capture().is_ok());
  EXPECT_EQ(stream.enqueue_memset(&host, 0, sizeof host).code(), RRT_ERR_INVALID_ARGUMENT);
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x77, 64).is_ok());
  std::unique_ptr<Graph> graph;
  EXPECT_EQ(stream.end_capture(&graph).code(), RRT_ERR_INVALID_STATE)
      << "a graph missing the refused memset must not be handed out";
  EXPECT_EQ(graph, nullptr);
  EXPECT_FALSE(stream.is_capturing());
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x77, 64).is_ok());
  Graph &retry = end_capture(stream);
  EXPECT_EQ(retry.operation_count(), 1U);
}

TEST_P(DeviceConformanceTest, FailEnqueueDiscardsTheCaptureOrBecomesTheStickyFailure) {
  Stream &stream = new_stream();
  std::byte *buffer = allocate(64);
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_memset(buffer, 0x11, 64).is_ok());
  stream.fail_enqueue(Status::error(RRT_ERR_KERNEL_FAILED, "a launch was refused"));
  std::unique_ptr<Graph> graph;
  const Status ended = stream.end_capture(&graph);
  EXPECT_EQ(ended.code(), RRT_ERR_INVALID_STATE);
  EXPECT_NE(ended.message().find("a launch was refused"), std::string::npos) << ended.message();
  EXPECT_EQ(graph, nullptr);
  ASSERT_TRUE(stream.synchronize().is_ok()) << "a failed capture leaves no sticky failure";

  stream.fail_enqueue(Status::error(RRT_ERR_KERNEL_FAILED, "outside a capture"));
  const Status sticky = stream.synchronize();
  EXPECT_EQ(sticky.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(sticky.message().find("outside a capture"), std::string::npos) << sticky.message();
  EXPECT_TRUE(stream.synchronize().is_ok());
}

TEST_P(DeviceConformanceTest, ReplayAfterAFreeIsStaleAndEnqueuesNothing) {
  Stream &stream = new_stream();
  std::byte *kept = allocate(64);
  std::byte *freed = allocate(64);
  ASSERT_TRUE(device_->memset(kept, 0, 64).is_ok());
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_memset(kept, 0x12, 64).is_ok());
  ASSERT_TRUE(stream.enqueue_memset(freed, 0x34, 64).is_ok());
  Graph &graph = end_capture(stream);
  ASSERT_TRUE(release(freed).is_ok());
  EXPECT_EQ(stream.replay(graph).code(), RRT_ERR_STALE_ADDRESS);
  ASSERT_TRUE(stream.synchronize().is_ok());
  EXPECT_EQ(read(kept, 64), filled(64, 0)) << "a stale replay enqueues none of its work";
}

// ABA: an allocation at the base a graph captured is not the captured one. Whether a base
// comes back is up to the backend's allocator, so the test uses the backend's reusing device
// and allocates and frees blocks of the captured size until one lands there (or gives up,
// checking only staleness).
TEST_P(DeviceConformanceTest, ANewAllocationAtACapturedBaseIsStale) {
  constexpr std::size_t kBytes = std::size_t{64} << 10;
  if (GetParam().reusing_device != nullptr) {
    release_all();
    device_ = GetParam().reusing_device();
  }
  Stream &stream = new_stream();
  std::byte *original = allocate(kBytes);
  const std::uint64_t original_generation = device_->find_allocation(original)->generation;
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_memset(original, 0x5E, 64).is_ok());
  Graph &graph = end_capture(stream);
  ASSERT_TRUE(release(original).is_ok());

  std::byte *reused = nullptr;
  for (int attempt = 0; attempt < 4096 && reused == nullptr; ++attempt) {
    std::byte *candidate = allocate(kBytes);
    if (candidate == original) {
      reused = candidate;
    } else {
      ASSERT_TRUE(release(candidate).is_ok());
    }
  }
  if (reused != nullptr) {
    const auto now = device_->find_allocation(reused);
    ASSERT_TRUE(now.has_value());
    EXPECT_NE(now->generation, original_generation);
    ASSERT_TRUE(device_->memset(reused, 0, 64).is_ok());
  }
  EXPECT_EQ(stream.replay(graph).code(), RRT_ERR_STALE_ADDRESS);
  ASSERT_TRUE(stream.synchronize().is_ok());
  if (reused != nullptr) {
    EXPECT_EQ(read(reused, 64), filled(64, 0)) << "the stale replay did not write the new block";
  } else {
    RecordProperty("aba", "the allocator never handed the captured base out again");
  }
}

// ---- executing prepared callables: every backend computes the same outputs ----------------

std::vector<float> ramp(std::size_t count, float scale) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    values[i] = scale * static_cast<float>(i) - 3.0F;
  }
  return values;
}

TEST_P(DeviceConformanceTest, AChainOfBuiltinsThroughAnIntermediateComputesItsOutput) {
  Stream &stream = new_stream();
  Executor &executor = new_executor();
  testing::CallableBuilder builder;
  builder.param(testing::f32({64})).param(testing::f32({64}, RRT_DIR_OUT));
  builder.intermediate(testing::f32({64}));
  builder.task(testing::kScale, {testing::param(0), testing::inter(0), testing::imm_f32(2.0F)});
  builder.task(testing::kAdd, {testing::inter(0), testing::param(0), testing::param(1)});
  testing::ExecutableRig &rig = new_rig(executor, builder.desc());
  std::byte *x = allocate(256);
  std::byte *y = allocate(256);
  const std::vector<float> input = ramp(64, 0.5F);
  write_floats(x, input);
  void *const tensors[] = {x, y};
  ASSERT_TRUE(executor.enqueue(stream, rig.executable(), rig.binding(tensors, {})).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  const std::vector<float> out = read_floats(y, 64);
  for (std::size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(out[i], input[i] * 2.0F + input[i]) << i;
  }
}

TEST_P(DeviceConformanceTest, IndependentTasksAndTheirJoinReplayWithNewInputs) {
  Stream &stream = new_stream();
  Executor &executor = new_executor();
  testing::CallableBuilder builder;
  builder.param(testing::f32({128}))
      .param(testing::f32({128}, RRT_DIR_OUT))
      .param(testing::f32({128}, RRT_DIR_OUT))
      .param(testing::f32({128}, RRT_DIR_OUT));
  builder.task(testing::kScale, {testing::param(0), testing::param(1), testing::imm_f32(2.0F)});
  builder.task(testing::kScale, {testing::param(0), testing::param(2), testing::imm_f32(4.0F)});
  builder.task(testing::kAdd, {testing::param(1), testing::param(2), testing::param(3)});
  testing::ExecutableRig &rig = new_rig(executor, builder.desc());
  std::byte *x = allocate(512);
  std::byte *a = allocate(512);
  std::byte *b = allocate(512);
  std::byte *c = allocate(512);
  void *const tensors[] = {x, a, b, c};
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(executor.enqueue(stream, rig.executable(), rig.binding(tensors, {})).is_ok());
  Graph &graph = end_capture(stream);
  for (const float scale : {1.0F, -0.25F}) {
    const std::vector<float> input = ramp(128, scale);
    write_floats(x, input);
    ASSERT_TRUE(stream.replay(graph).is_ok());
    ASSERT_TRUE(stream.synchronize().is_ok());
    const std::vector<float> out = read_floats(c, 128);
    for (std::size_t i = 0; i < 128; ++i) {
      ASSERT_EQ(out[i], input[i] * 2.0F + input[i] * 4.0F) << i << " at scale " << scale;
    }
  }
}

TEST_P(DeviceConformanceTest, ACapturedLaunchReadsItsDeviceValuesAtEveryReplay) {
  Stream &stream = new_stream();
  Executor &executor = new_executor();
  // out = cache[row] * factor, the row a view offset and the factor a device scalar.
  testing::CallableBuilder builder;
  builder.param(testing::f32({8, 4}))
      .param(rrt_tensor_desc_t{RRT_DTYPE_I32, 1, {1}, RRT_DIR_IN, RRT_PARAM_SPACE_ANY})
      .param(testing::f32({1}))
      .param(testing::f32({4}, RRT_DIR_OUT));
  builder.intermediate(testing::f32({4}));
  builder.device_value(RRT_OPERAND_PARAM, 1, 0).device_value(RRT_OPERAND_PARAM, 2, 0);
  builder.view(RRT_OPERAND_PARAM, 0, {4}, 0, 0, 4, 7);
  builder.task(testing::kCopy, {testing::view(0), testing::inter(0)});
  builder.task(testing::kScale, {testing::inter(0), testing::param(3), testing::device_value(1)});
  testing::ExecutableRig &rig = new_rig(executor, builder.desc());
  std::byte *cache = allocate(32 * sizeof(float));
  std::byte *row = allocate(sizeof(std::int32_t));
  std::byte *factor = allocate(sizeof(float));
  std::byte *out = allocate(4 * sizeof(float));
  const std::vector<float> rows = ramp(32, 1.0F);
  write_floats(cache, rows);
  void *const tensors[] = {cache, row, factor, out};
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(executor.enqueue(stream, rig.executable(), rig.binding(tensors, {})).is_ok());
  Graph &graph = end_capture(stream);
  for (const auto &[index, scale] : {std::pair{2, 2.0F}, std::pair{7, 0.5F}, std::pair{0, -1.0F}}) {
    ASSERT_TRUE(device_->copy_host_to_device(row, &index, sizeof index).is_ok());
    write_floats(factor, {scale});
    ASSERT_TRUE(stream.replay(graph).is_ok());
    ASSERT_TRUE(stream.synchronize().is_ok());
    const std::vector<float> got = read_floats(out, 4);
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(got[i], rows[static_cast<std::size_t>(index) * 4 + i] * scale)
          << "row " << index << " element " << i;
    }
  }
}

TEST_P(DeviceConformanceTest, DecoderBuiltinsComputeAStepAsTheSimulatorsKernelsDo) {
  Stream &stream = new_stream();
  Executor &executor = new_executor();
  // One position of a toy attention block: kv_store both caches at pos, rope q at pos, then
  // attention over positions 0..pos. hd 8, 2 heads, 1 KV head, 16 positions.
  constexpr std::uint64_t kHd = 8;
  constexpr std::uint64_t kHeads = 2;
  constexpr std::uint64_t kPositions = 16;
  testing::CallableBuilder builder;
  builder
      .param(testing::f32({kHeads * kHd}, RRT_DIR_INOUT))  // q
      .param(testing::f32({kHd}))                          // k of the step
      .param(testing::f32({kHd}))                          // v of the step
      .param(rrt_tensor_desc_t{RRT_DTYPE_I32, 1, {1}, RRT_DIR_IN, RRT_PARAM_SPACE_ANY})
      .param(testing::f32({kPositions, kHd}, RRT_DIR_INOUT))  // k cache
      .param(testing::f32({kPositions, kHd}, RRT_DIR_INOUT))  // v cache
      .param(testing::f32({kHeads * kHd}, RRT_DIR_OUT));      // out
  builder.task(testing::kKvStore, {testing::param(1), testing::param(3), testing::param(4),
                                   testing::imm(1), testing::imm(kHd), testing::imm(kPositions)});
  builder.task(testing::kKvStore, {testing::param(2), testing::param(3), testing::param(5),
                                   testing::imm(1), testing::imm(kHd), testing::imm(kPositions)});
  builder.task(testing::kRope,
               {testing::param(3), testing::param(0), testing::imm(1), testing::imm(kHeads),
                testing::imm(kHd), testing::imm_f32(10000.0F)});
  builder.task(testing::kAttention,
               {testing::param(0), testing::param(4), testing::param(5), testing::param(3),
                testing::param(6), testing::imm(1), testing::imm(kHeads), testing::imm(1),
                testing::imm(kHd), testing::imm(kPositions)});
  testing::ExecutableRig &rig = new_rig(executor, builder.desc());
  std::vector<std::byte *> buffers;
  for (const std::uint64_t floats : {kHeads * kHd, kHd, kHd, std::uint64_t{1}, kPositions * kHd,
                                     kPositions * kHd, kHeads * kHd}) {
    buffers.push_back(allocate(floats * sizeof(float)));
  }
  const std::vector<float> k_cache = ramp(kPositions * kHd, 0.01F);
  const std::vector<float> v_cache = ramp(kPositions * kHd, -0.02F);
  const std::vector<float> q = ramp(kHeads * kHd, 0.1F);
  const std::vector<float> k = ramp(kHd, 0.3F);
  const std::vector<float> v = ramp(kHd, 0.2F);
  const std::int32_t pos = 5;
  write_floats(buffers[0], q);
  write_floats(buffers[1], k);
  write_floats(buffers[2], v);
  ASSERT_TRUE(device_->copy_host_to_device(buffers[3], &pos, sizeof pos).is_ok());
  write_floats(buffers[4], k_cache);
  write_floats(buffers[5], v_cache);
  const std::vector<void *> tensors(buffers.begin(), buffers.end());
  ASSERT_TRUE(executor.enqueue(stream, rig.executable(), rig.binding(tensors, {})).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  const std::vector<float> got = read_floats(buffers[6], kHeads * kHd);

  // The reference: the simulator's CPU kernels on host copies of the same operands.
  std::vector<float> ref_q = q;
  std::vector<float> ref_k = k_cache;
  std::vector<float> ref_v = v_cache;
  std::vector<float> ref_out(kHeads * kHd);
  std::int32_t ref_pos = pos;
  const auto run = [](const char *name, std::vector<void *> t, std::vector<std::uint64_t> bytes,
                      std::vector<std::uint64_t> scalars) {
    const rrt_kernel_args_t args{static_cast<std::uint32_t>(t.size()),
                                 t.data(),
                                 bytes.data(),
                                 static_cast<std::uint32_t>(scalars.size()),
                                 scalars.data(),
                                 0,
                                 nullptr};
    ASSERT_EQ(sim::builtin_host_kernel(name)(&args, nullptr), 0) << name;
  };
  std::vector<float> ref_k_step = k;
  std::vector<float> ref_v_step = v;
  run("kv_store", {ref_k_step.data(), &ref_pos, ref_k.data()}, {kHd * 4, 4, kPositions * kHd * 4},
      {1, kHd, kPositions});
  run("kv_store", {ref_v_step.data(), &ref_pos, ref_v.data()}, {kHd * 4, 4, kPositions * kHd * 4},
      {1, kHd, kPositions});
  run("rope", {&ref_pos, ref_q.data()}, {4, kHeads * kHd * 4},
      {1, kHeads, kHd, rrt_scalar_from_f32(10000.0F)});
  run("attention", {ref_q.data(), ref_k.data(), ref_v.data(), &ref_pos, ref_out.data()},
      {kHeads * kHd * 4, kPositions * kHd * 4, kPositions * kHd * 4, 4, kHeads * kHd * 4},
      {1, kHeads, 1, kHd, kPositions});
  for (std::size_t i = 0; i < ref_out.size(); ++i) {
    EXPECT_NEAR(got[i], ref_out[i], 1e-5F * (1.0F + std::fabs(ref_out[i]))) << i;
  }
}

#if defined(REPLAYRT_HAVE_CUDA)
// The CUDA backend over FakeCuda (host memory, no GPU) and over the real runtime.
#if defined(REPLAYRT_CONFORMANCE_GPU)
std::unique_ptr<Device> real_cuda_reusing_device() {
  std::unique_ptr<Device> device;
  const Status status =
      cuda::CudaDevice::create(cuda::real_cuda_api(), 0, {.quarantine_bytes = 0}, &device);
  EXPECT_TRUE(status.is_ok()) << status.message();
  return device;
}
#else
testing::FakeCuda &fake_cuda() {
  static testing::FakeCuda fake;
  return fake;
}

std::unique_ptr<Device> fake_cuda_device(std::size_t quarantine_bytes) {
  std::unique_ptr<Device> device;
  const Status status = cuda::CudaDevice::create(fake_cuda().api(), 0,
                                                 {.quarantine_bytes = quarantine_bytes}, &device);
  EXPECT_TRUE(status.is_ok()) << status.message();
  return device;
}
#endif
#endif

#if !defined(REPLAYRT_CONFORMANCE_GPU)
std::unique_ptr<Device> sim_reusing_device() {
  return std::make_unique<sim::SimDevice>(sim::SimDeviceOptions{.memory = {.quarantine_bytes = 0}});
}
#endif

#if defined(REPLAYRT_CONFORMANCE_GPU)
// The real CUDA backend (ctest label gpu).
const Backend kBackends[] = {{"cuda", RRT_PLATFORM_CUDA, &real_cuda_reusing_device, nullptr, true}};
#elif defined(REPLAYRT_HAVE_CUDA)
std::unique_ptr<Device> fake_cuda_reusing_device() {
  fake_cuda().reuse_freed = true;
  return fake_cuda_device(0);
}
std::unique_ptr<Device> fake_cuda_quarantining_device() {
  return fake_cuda_device(std::size_t{64} << 20);
}
const Backend kBackends[] = {
    {"sim", RRT_PLATFORM_SIM, &sim_reusing_device},
    {"cuda_fake", RRT_PLATFORM_CUDA, &fake_cuda_reusing_device, &fake_cuda_quarantining_device}};
#else
const Backend kBackends[] = {{"sim", RRT_PLATFORM_SIM, &sim_reusing_device}};
#endif

INSTANTIATE_TEST_SUITE_P(Backends, DeviceConformanceTest, ::testing::ValuesIn(kBackends),
                         [](const ::testing::TestParamInfo<Backend> &info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace replayrt
