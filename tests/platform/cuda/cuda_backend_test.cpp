// The CUDA backend's host logic over FakeCuda (no GPU): error mapping, allocation, capture
// failure paths, the replay check, foreign memory and wrapped streams, with faults injected
// through the CudaApi table.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "platform/cuda/cuda_device.h"
#include "platform/cuda/cuda_status.h"
#include "platform/cuda/cuda_stream.h"
#include "runtime/engine.h"
#include "support/callable_builder.h"
#include "support/fake_cuda.h"

namespace replayrt::cuda {
namespace {

TEST(CudaErrorMappingTest, EveryClassOfErrorGetsItsStatus) {
  EXPECT_EQ(map_cuda_error(cudaSuccess), RRT_OK);
  EXPECT_EQ(map_cuda_error(cudaErrorMemoryAllocation), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(map_cuda_error(cudaErrorInvalidValue), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(map_cuda_error(cudaErrorInvalidDevicePointer), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(map_cuda_error(cudaErrorNoDevice), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(map_cuda_error(cudaErrorInsufficientDriver), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(map_cuda_error(cudaErrorNoKernelImageForDevice), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(map_cuda_error(cudaErrorStreamCaptureInvalidated), RRT_ERR_INVALID_STATE);
  EXPECT_EQ(map_cuda_error(cudaErrorStreamCaptureImplicit), RRT_ERR_INVALID_STATE);
  EXPECT_EQ(map_cuda_error(cudaErrorStreamCaptureWrongThread), RRT_ERR_INVALID_STATE);
  EXPECT_EQ(map_cuda_error(cudaErrorIllegalAddress), RRT_ERR_KERNEL_FAILED);
  EXPECT_EQ(map_cuda_error(cudaErrorLaunchFailure), RRT_ERR_KERNEL_FAILED);
  EXPECT_EQ(map_cuda_error(cudaErrorUnknown), RRT_ERR_INTERNAL);
  EXPECT_TRUE(is_sticky_device_fault(cudaErrorIllegalAddress));
  EXPECT_FALSE(is_sticky_device_fault(cudaErrorMemoryAllocation));
}

TEST(CudaErrorMappingTest, TheStatusNamesTheCallAndTheError) {
  const Status status = cuda_status(real_cuda_api(), cudaErrorMemoryAllocation, "cudaMalloc");
  EXPECT_EQ(status.code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_NE(status.message().find("cudaMalloc: cudaErrorMemoryAllocation"), std::string::npos)
      << status.message();
  EXPECT_TRUE(cuda_status(real_cuda_api(), cudaSuccess, "x").is_ok());
}

class CudaBackendTest : public ::testing::Test {
 protected:
  void create(CudaDeviceOptions options = {}) {
    const Status status = CudaDevice::create(fake_.api(), 0, options, &device_);
    ASSERT_TRUE(status.is_ok()) << status.message();
  }
  Stream &new_stream() {
    std::unique_ptr<Stream> stream;
    EXPECT_TRUE(device_->create_stream(&stream).is_ok());
    streams_.push_back(std::move(stream));
    return *streams_.back();
  }
  // Declared first, destroyed last.
  testing::FakeCuda fake_;
  std::unique_ptr<Device> device_;
  std::vector<std::unique_ptr<Stream>> streams_;
};

TEST_F(CudaBackendTest, NoDriverIsUnsupportedNamingTheCudaError) {
  fake_.device_count_error = cudaErrorInsufficientDriver;
  const Status status = CudaDevice::create(fake_.api(), 0, {}, &device_);
  EXPECT_EQ(status.code(), RRT_ERR_UNSUPPORTED);
  EXPECT_NE(status.message().find("cudaErrorInsufficientDriver"), std::string::npos)
      << status.message();
  EXPECT_EQ(device_, nullptr);
}

TEST_F(CudaBackendTest, NoDeviceIsUnsupportedAndAnIdPastTheCountIsInvalid) {
  fake_.device_count = 0;
  EXPECT_EQ(CudaDevice::create(fake_.api(), 0, {}, &device_).code(), RRT_ERR_UNSUPPORTED);
  fake_.device_count = 1;
  EXPECT_EQ(CudaDevice::create(fake_.api(), 1, {}, &device_).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(fake_.live_streams, 0);
}

TEST_F(CudaBackendTest, AllocationsAre1024AlignedAndMadeUnderTheRelaxedCaptureMode) {
  create();
  const int exchanges = fake_.relaxed_mode_exchanges;
  for (std::size_t bytes : {std::size_t{1}, std::size_t{300}, std::size_t{5000}}) {
    void *ptr = device_->allocate(bytes);
    ASSERT_NE(ptr, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ptr) % 1024, 0U);
    EXPECT_TRUE(device_->find_allocation(static_cast<char *>(ptr) + bytes - 1).has_value());
  }
  EXPECT_EQ(fake_.relaxed_mode_exchanges, exchanges + 6) << "set and restore per allocation";
}

TEST_F(CudaBackendTest, AFailedCudaMallocPublishesNothing) {
  create();
  const MemoryCounters before = device_->memory_counters();
  fake_.malloc_failures_left = 1;
  EXPECT_EQ(device_->allocate(4096), nullptr);
  const MemoryCounters after = device_->memory_counters();
  EXPECT_EQ(after.allocation_calls, before.allocation_calls);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_EQ(fake_.live_device_blocks(), 0U);
  EXPECT_NE(device_->allocate(4096), nullptr) << "the next allocation succeeds";
}

TEST_F(CudaBackendTest, AnInvalidatedCaptureIsInvalidStateLeaksNothingAndTheStreamIsReusable) {
  create();
  Stream &stream = new_stream();
  void *buffer = device_->allocate(256);
  const int graphs = fake_.live_graphs;
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_memset(buffer, 1, 256).is_ok());
  fake_.end_capture_error = cudaErrorStreamCaptureInvalidated;
  std::unique_ptr<Graph> graph;
  const Status ended = stream.end_capture(&graph);
  EXPECT_EQ(ended.code(), RRT_ERR_INVALID_STATE);
  EXPECT_NE(ended.message().find("cudaErrorStreamCaptureInvalidated"), std::string::npos)
      << ended.message();
  EXPECT_EQ(graph, nullptr);
  EXPECT_FALSE(stream.is_capturing());
  EXPECT_EQ(fake_.live_graphs, graphs);
  EXPECT_EQ(fake_.live_execs, 0);

  fake_.end_capture_error = cudaSuccess;
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_memset(buffer, 2, 256).is_ok());
  ASSERT_TRUE(stream.end_capture(&graph).is_ok());
  EXPECT_EQ(graph->operation_count(), 1U);
}

TEST_F(CudaBackendTest, AFailedInstantiateOrUploadLeaksNoGraph) {
  create();
  Stream &stream = new_stream();
  void *buffer = device_->allocate(256);
  for (const bool instantiate : {true, false}) {
    fake_.instantiate_error = instantiate ? cudaErrorInvalidValue : cudaSuccess;
    fake_.upload_error = instantiate ? cudaSuccess : cudaErrorInvalidValue;
    ASSERT_TRUE(stream.begin_capture().is_ok());
    ASSERT_TRUE(stream.enqueue_memset(buffer, 1, 256).is_ok());
    std::unique_ptr<Graph> graph;
    EXPECT_FALSE(stream.end_capture(&graph).is_ok());
    EXPECT_EQ(graph, nullptr);
    EXPECT_EQ(fake_.live_graphs, 0) << (instantiate ? "instantiate" : "upload");
    EXPECT_EQ(fake_.live_execs, 0) << (instantiate ? "instantiate" : "upload");
  }
}

TEST_F(CudaBackendTest, AFailedBeginCaptureLeavesTheStreamNotCapturing) {
  create();
  Stream &stream = new_stream();
  fake_.begin_capture_error = cudaErrorStreamCaptureImplicit;
  EXPECT_EQ(stream.begin_capture().code(), RRT_ERR_INVALID_STATE);
  EXPECT_FALSE(stream.is_capturing());
  fake_.begin_capture_error = cudaSuccess;
  EXPECT_TRUE(stream.begin_capture().is_ok());
}

TEST_F(CudaBackendTest, QueryIsCudaStreamQueryAndNotReadyIsTheOnlyNotDone) {
  create();
  Stream &stream = new_stream();
  EXPECT_TRUE(stream.query());
  EXPECT_EQ(fake_.stream_queries, 1);
  fake_.forced_stream_query = cudaErrorNotReady;
  EXPECT_FALSE(stream.query());
  fake_.forced_stream_query = cudaErrorIllegalAddress;  // nothing more will execute
  EXPECT_TRUE(stream.query());
  fake_.forced_stream_query = cudaSuccess;
  EXPECT_TRUE(stream.synchronize().is_ok());
}

// After a sticky device fault cudaEventQuery keeps returning the fault, and nothing queued will
// execute any more: the event counts as done, as the stream does, so a caller polling it does
// not poll forever (its synchronize reports the fault).
TEST_F(CudaBackendTest, AnEventQueryAfterAStickyFaultIsDone) {
  create();
  Stream &stream = new_stream();
  std::unique_ptr<Event> event;
  ASSERT_TRUE(device_->create_event(&event).is_ok());
  ASSERT_TRUE(stream.record_event(*event).is_ok());
  fake_.drain();
  fake_.fault(cudaErrorIllegalAddress);
  EXPECT_TRUE(stream.query());
  EXPECT_TRUE(event->query()) << "an event the faulted device will never complete is not done";
  EXPECT_FALSE(event->synchronize().is_ok());
}

TEST_F(CudaBackendTest, ACapturingStreamIsQueriedThroughTheEventBeforeTheCapture) {
  create();
  Stream &stream = new_stream();
  ASSERT_TRUE(stream.begin_capture().is_ok());
  fake_.drain();
  fake_.forced_stream_query = cudaErrorNotReady;  // would be the capture's answer; not asked
  const int queries = fake_.stream_queries;
  EXPECT_TRUE(stream.query());
  EXPECT_EQ(fake_.stream_queries, queries);
  std::unique_ptr<Graph> graph;
  EXPECT_TRUE(stream.end_capture(&graph).is_ok());
}

TEST_F(CudaBackendTest, DestroyingACapturingStreamReleasesThePartialGraph) {
  create();
  {
    Stream &stream = new_stream();
    ASSERT_TRUE(stream.begin_capture().is_ok());
    EXPECT_EQ(fake_.live_graphs, 1);
    streams_.clear();
  }
  EXPECT_EQ(fake_.live_graphs, 0);
  EXPECT_EQ(fake_.live_streams, 1) << "only the device's private stream is left";
}

TEST_F(CudaBackendTest, CudaFreeWaitsUntilNoCaptureIsInProgress) {
  create({.quarantine_bytes = 0});
  Stream &stream = new_stream();
  void *buffer = device_->allocate(256);
  ASSERT_TRUE(stream.begin_capture().is_ok());
  const int frees = fake_.free_calls;
  ASSERT_TRUE(device_->free(buffer).is_ok());
  EXPECT_EQ(fake_.free_calls, frees) << "cudaFree synchronizes the device: not during a capture";
  EXPECT_FALSE(device_->find_allocation(buffer).has_value()) << "but the table forgot it at once";
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(stream.end_capture(&graph).is_ok());
  EXPECT_EQ(fake_.free_calls, frees + 1);
}

TEST_F(CudaBackendTest, ReplayChecksAddressesOnlyAgainstFreesAndCatchesABA) {
  fake_.reuse_freed = true;
  create({.quarantine_bytes = 0});
  Stream &stream = new_stream();
  void *captured = device_->allocate(4096);
  void *unrelated = device_->allocate(8192);
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_memset(captured, 7, 4096).is_ok());
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(stream.end_capture(&graph).is_ok());
  ASSERT_TRUE(stream.replay(*graph).is_ok());
  ASSERT_TRUE(device_->free(unrelated).is_ok());
  EXPECT_TRUE(stream.replay(*graph).is_ok()) << "a free elsewhere forces a check that passes";
  ASSERT_TRUE(stream.synchronize().is_ok()) << "a free comes after the block's queued uses";
  ASSERT_TRUE(device_->free(captured).is_ok());
  void *again = device_->allocate(4096);
  ASSERT_EQ(again, captured) << "the fake hands the freed block out again";
  const int launches = fake_.graph_launches;
  EXPECT_EQ(stream.replay(*graph).code(), RRT_ERR_STALE_ADDRESS);
  EXPECT_EQ(fake_.graph_launches, launches) << "a stale replay launches nothing";
}

// A node of a type the audit does not know may hold device addresses it cannot find (the
// driver's batch memory operations write and wait on device words): the graph is refused.
TEST_F(CudaBackendTest, AGraphHoldingANodeOfATypeTheAuditDoesNotKnowIsRefused) {
  create({.quarantine_bytes = 0});
  Stream &stream = new_stream();
  void *target = device_->allocate(512);
  constexpr int kBatchMemoryOperation = 12;
  fake_.memset_node_type = kBatchMemoryOperation;
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_memset(target, 0, 512).is_ok());
  std::unique_ptr<Graph> graph;
  const Status ended = stream.end_capture(&graph);
  fake_.memset_node_type = -1;
  EXPECT_EQ(ended.code(), RRT_ERR_INVALID_STATE);
  EXPECT_NE(ended.message().find("node 0 of type 12"), std::string::npos) << ended.message();
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(fake_.live_graphs, 0);
  EXPECT_FALSE(stream.is_capturing());
}

TEST_F(CudaBackendTest, TheAuditRecordsAddressesNativeWorkDidNotDeclare) {
  create({.quarantine_bytes = 0});
  Stream &stream = new_stream();
  void *undeclared = device_->allocate(512);
  struct Context {
    const cuda::CudaApi *api;
    void *target;
  } context{&fake_.api(), undeclared};
  NativeWork work;
  work.context = &context;
  work.enqueue = [](void *native, void *raw) {
    const auto *c = static_cast<Context *>(raw);
    return c->api->memset_async(c->target, 0, 512, static_cast<cudaStream_t>(native)) == cudaSuccess
               ? 0
               : 1;
  };
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_native(work).is_ok());
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(stream.end_capture(&graph).is_ok());
  ASSERT_EQ(graph->captured_addresses().size(), 1U);
  EXPECT_EQ(graph->captured_addresses()[0].address, reinterpret_cast<std::uintptr_t>(undeclared));
  ASSERT_TRUE(device_->free(undeclared).is_ok());
  EXPECT_EQ(stream.replay(*graph).code(), RRT_ERR_STALE_ADDRESS);
}

// A user kernel that adds `hidden` into `data`: `hidden` is not among any declared operand.
struct HiddenPointerParams {
  float *data;
  const float *hidden;
  std::uint64_t count;
};

void add_hidden_on_cpu(const testing::FakeKernelLaunch &launch, void * /*context*/) {
  HiddenPointerParams p{};
  std::memcpy(&p, launch.parameters[0].data(), sizeof p);
  for (std::uint64_t i = 0; i < p.count; ++i) {
    p.data[i] += p.hidden[i];
  }
}

// The token that stands for the kernel's host stub.
const char kAddHidden = 0;

class CudaAuditTest : public CudaBackendTest {
 protected:
  void register_add_hidden(testing::FakeKernel kernel) {
    kernel.name = "add_hidden";
    kernel.parameter_sizes = {sizeof(HiddenPointerParams)};
    kernel.run = &add_hidden_on_cpu;
    fake_.register_kernel(&kAddHidden, std::move(kernel));
  }

  // Captures one add_hidden launch over data (declared) and hidden (not declared).
  Status capture_add_hidden(Stream &stream, std::unique_ptr<Graph> *graph) {
    struct Launch {
      const cuda::CudaApi *api;
      HiddenPointerParams params;
    } launch{&fake_.api(), {static_cast<float *>(data_), static_cast<const float *>(hidden_), 4}};
    NativeWork work;
    work.context = &launch;
    work.enqueue = [](void *native, void *raw) {
      auto *l = static_cast<Launch *>(raw);
      void *args[] = {&l->params};
      return l->api->launch_kernel(&kAddHidden, dim3(1), dim3(32), args, 0,
                                   static_cast<cudaStream_t>(native)) == cudaSuccess
                 ? 0
                 : 1;
    };
    const void *declared[] = {data_};
    work.referenced = declared;
    RRT_RETURN_IF_ERROR(stream.begin_capture());
    RRT_RETURN_IF_ERROR(stream.enqueue_native(work));
    return stream.end_capture(graph);
  }

  bool captured(const Graph &graph, const void *address) const {
    for (const CapturedAddress &a : graph.captured_addresses()) {
      if (a.address == reinterpret_cast<std::uintptr_t>(address)) {
        return true;
      }
    }
    return false;
  }

  void SetUp() override {
    create({.quarantine_bytes = 0});
    data_ = device_->allocate(16);
    hidden_ = device_->allocate(16);
  }

  void *data_ = nullptr;
  void *hidden_ = nullptr;
};

TEST_F(CudaAuditTest, AKernelOfAnotherModuleIsAuditedThroughTheDriver) {
  testing::FakeKernel kernel;
  kernel.other_module = true;  // the runtime's cudaGraphKernelNodeGetParams cannot read it
  register_add_hidden(std::move(kernel));
  Stream &stream = new_stream();
  std::unique_ptr<Graph> graph;
  const Status ended = capture_add_hidden(stream, &graph);
  ASSERT_TRUE(ended.is_ok()) << ended.message();
  EXPECT_TRUE(captured(*graph, data_));
  EXPECT_TRUE(captured(*graph, hidden_)) << "the pointer inside the by-value struct";
  const float ones[4] = {1, 1, 1, 1};
  const float twos[4] = {2, 2, 2, 2};
  ASSERT_TRUE(device_->copy_host_to_device(data_, ones, sizeof ones).is_ok());
  ASSERT_TRUE(device_->copy_host_to_device(hidden_, twos, sizeof twos).is_ok());
  ASSERT_TRUE(stream.replay(*graph).is_ok());
  ASSERT_TRUE(stream.synchronize().is_ok());
  float out[4] = {};
  ASSERT_TRUE(device_->copy_device_to_host(out, data_, sizeof out).is_ok());
  EXPECT_EQ(out[3], 3.0F) << "the replay ran the kernel";
  ASSERT_TRUE(device_->free(hidden_).is_ok());
  EXPECT_EQ(stream.replay(*graph).code(), RRT_ERR_STALE_ADDRESS);
}

TEST_F(CudaAuditTest, NodesReportedThroughExtraOrAsALibraryKernelAreAuditedToo) {
  for (const bool through_extra : {true, false}) {
    testing::FakeKernel kernel;
    kernel.other_module = true;
    kernel.reported_through_extra = through_extra;
    kernel.reported_as_library_kernel = !through_extra;
    register_add_hidden(std::move(kernel));
    Stream &stream = new_stream();
    std::unique_ptr<Graph> graph;
    const Status ended = capture_add_hidden(stream, &graph);
    ASSERT_TRUE(ended.is_ok()) << ended.message();
    EXPECT_TRUE(captured(*graph, hidden_)) << (through_extra ? "extra" : "CUkernel");
  }
}

TEST_F(CudaAuditTest, AKernelNodeTheDriverCannotReadIsRefusedNamingIt) {
  register_add_hidden({});
  Stream &stream = new_stream();
  fake_.driver_node_params_error = CUDA_ERROR_NOT_FOUND;  // say, a driver without the call
  std::unique_ptr<Graph> graph;
  Status ended = capture_add_hidden(stream, &graph);
  EXPECT_EQ(ended.code(), RRT_ERR_INVALID_STATE);
  EXPECT_NE(ended.message().find("kernel node 0"), std::string::npos) << ended.message();
  EXPECT_NE(ended.message().find("cannot be audited"), std::string::npos) << ended.message();
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(fake_.live_graphs, 0);

  fake_.driver_node_params_error = CUDA_SUCCESS;
  testing::FakeKernel unreadable;
  unreadable.layout_unreadable = true;
  register_add_hidden(std::move(unreadable));
  ended = capture_add_hidden(stream, &graph);
  EXPECT_EQ(ended.code(), RRT_ERR_INVALID_STATE);
  EXPECT_NE(ended.message().find("add_hidden"), std::string::npos) << ended.message();
  EXPECT_FALSE(stream.is_capturing());
}

TEST_F(CudaAuditTest, AKernelWithoutParametersIsAuditedAndHoldsNoAddress) {
  static const char kNoParameters = 0;
  testing::FakeKernel kernel;
  kernel.name = "no_parameters";
  fake_.register_kernel(&kNoParameters, std::move(kernel));
  Stream &stream = new_stream();
  NativeWork work;
  work.context = const_cast<cuda::CudaApi *>(&fake_.api());
  work.enqueue = [](void *native, void *api) {
    return static_cast<const cuda::CudaApi *>(api)->launch_kernel(
               &kNoParameters, dim3(1), dim3(1), nullptr, 0, static_cast<cudaStream_t>(native)) ==
                   cudaSuccess
               ? 0
               : 1;
  };
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_native(work).is_ok());
  std::unique_ptr<Graph> graph;
  const Status ended = stream.end_capture(&graph);
  ASSERT_TRUE(ended.is_ok()) << ended.message();
  EXPECT_TRUE(graph->captured_addresses().empty());
}

TEST_F(CudaBackendTest, WhileTheFreeEpochIsUnchangedReplayTrustsItsLastFullCheck) {
  create();
  auto &device = static_cast<CudaDevice &>(*device_);
  void *live = device_->allocate(64);
  // A graph whose one address was never live: only a full check can see that.
  const CapturedAddress bogus{0x10, 0x10, 99};
  CudaGraph trusted(device, nullptr, 0, {bogus}, device.free_epoch());
  EXPECT_TRUE(trusted.check_addresses().is_ok()) << "no free since the last check: O(1)";
  CudaGraph never_checked(device, nullptr, 0, {bogus}, CudaGraph::kNeverValidated);
  EXPECT_EQ(never_checked.check_addresses().code(), RRT_ERR_STALE_ADDRESS);
  ASSERT_TRUE(device_->free(live).is_ok());
  EXPECT_EQ(trusted.check_addresses().code(), RRT_ERR_STALE_ADDRESS)
      << "any free forces a full check";
}

TEST_F(CudaBackendTest, HostDeviceEntriesAreUnsupportedAndFailTheCapture) {
  create();
  Stream &stream = new_stream();
  ASSERT_TRUE(stream.begin_capture().is_ok());
  LaunchRequest request;
  EXPECT_EQ(stream.enqueue_launch(request).code(), RRT_ERR_UNSUPPORTED);
  std::unique_ptr<Graph> graph;
  EXPECT_EQ(stream.end_capture(&graph).code(), RRT_ERR_INVALID_STATE);
}

TEST_F(CudaBackendTest, NativeWorkRunsOnTheStreamHandleAndItsFailureIsSticky) {
  create();
  Stream &stream = new_stream();
  void *seen = nullptr;
  NativeWork work;
  work.context = &seen;
  work.enqueue = [](void *native, void *context) {
    *static_cast<void **>(context) = native;
    return 0;
  };
  ASSERT_TRUE(stream.enqueue_native(work).is_ok());
  EXPECT_EQ(seen, stream.native_handle());
  work.enqueue = [](void *, void *) { return 3; };
  EXPECT_EQ(stream.enqueue_native(work).code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_EQ(stream.synchronize().code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_TRUE(stream.synchronize().is_ok());
}

TEST_F(CudaBackendTest, ForeignMemoryIsLiveWhileRegisteredAndStaleAfter) {
  create();
  Stream &stream = new_stream();
  void *foreign = nullptr;
  ASSERT_EQ(fake_.api().malloc(&foreign, 4096), cudaSuccess);
  float host[4] = {};
  EXPECT_EQ(device_->register_foreign(host, sizeof host).code(), RRT_ERR_INVALID_ARGUMENT)
      << "host memory is not device memory";
  ASSERT_TRUE(device_->register_foreign(foreign, 4096).is_ok());
  EXPECT_EQ(device_->register_foreign(foreign, 64).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(device_->find_allocation(static_cast<char *>(foreign) + 100).has_value());
  EXPECT_EQ(device_->free(foreign).code(), RRT_ERR_INVALID_ARGUMENT);
  ASSERT_TRUE(stream.begin_capture().is_ok());
  ASSERT_TRUE(stream.enqueue_memset(foreign, 0, 4096).is_ok());
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(stream.end_capture(&graph).is_ok());
  ASSERT_TRUE(stream.replay(*graph).is_ok());
  ASSERT_TRUE(device_->unregister_foreign(foreign).is_ok());
  EXPECT_EQ(stream.replay(*graph).code(), RRT_ERR_STALE_ADDRESS);
  EXPECT_EQ(device_->unregister_foreign(foreign).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(fake_.api().free(foreign), cudaSuccess);
}

TEST_F(CudaBackendTest, AWrappedStreamUsesTheCallersHandleAndNeverDestroysIt) {
  create();
  cudaStream_t mine = nullptr;
  ASSERT_EQ(fake_.api().stream_create_with_flags(&mine, cudaStreamNonBlocking), cudaSuccess);
  const int streams = fake_.live_streams;
  {
    std::unique_ptr<Stream> wrapped;
    ASSERT_TRUE(device_->wrap_native_stream(mine, &wrapped).is_ok());
    EXPECT_EQ(wrapped->native_handle(), mine);
    EXPECT_EQ(device_->wrap_native_stream(nullptr, &wrapped).code(), RRT_ERR_INVALID_ARGUMENT);
  }
  EXPECT_EQ(fake_.live_streams, streams);
  EXPECT_EQ(fake_.api().stream_destroy(mine), cudaSuccess);
}

TEST(CudaErrorMappingTest, ErrorsThatLeaveTheProcessUnusableAreStickyDeviceFaults) {
  for (const cudaError_t error :
       {cudaErrorECCUncorrectable, cudaErrorNvlinkUncorrectable, cudaErrorContained,
        cudaErrorInvalidAddressSpace, cudaErrorUnknown}) {
    EXPECT_TRUE(is_sticky_device_fault(error)) << cudaGetErrorName(error);
    const Status status = cuda_status(real_cuda_api(), error, "cudaStreamSynchronize");
    EXPECT_NE(status.message().find("unusable"), std::string::npos) << status.message();
  }
  EXPECT_EQ(map_cuda_error(cudaErrorContained), RRT_ERR_KERNEL_FAILED);
  EXPECT_EQ(map_cuda_error(cudaErrorECCUncorrectable), RRT_ERR_KERNEL_FAILED);
}

TEST_F(CudaBackendTest, AFailedAllocationSaysWhetherMemoryRanOutOrTheDeviceFaulted) {
  create();
  void *ptr = nullptr;
  fake_.malloc_failures_left = 1;
  Status failed = device_->try_allocate(4096, &ptr);
  EXPECT_EQ(failed.code(), RRT_ERR_OUT_OF_MEMORY) << failed.message();
  EXPECT_EQ(ptr, nullptr);
  fake_.malloc_failures_left = 1;
  fake_.malloc_error = cudaErrorIllegalAddress;
  failed = device_->try_allocate(4096, &ptr);
  EXPECT_EQ(failed.code(), RRT_ERR_KERNEL_FAILED) << failed.message();
  EXPECT_NE(failed.message().find("cudaErrorIllegalAddress"), std::string::npos)
      << failed.message();
  EXPECT_EQ(fake_.live_device_blocks(), 0U);
  fake_.malloc_error = cudaErrorMemoryAllocation;
  ASSERT_TRUE(device_->try_allocate(4096, &ptr).is_ok());
  EXPECT_NE(ptr, nullptr);
}

TEST_F(CudaBackendTest, ARegisteredForeignRangeMustLieInsideOneAllocation) {
  create();
  void *foreign = nullptr;
  ASSERT_EQ(fake_.api().malloc(&foreign, 4096), cudaSuccess);
  auto *bytes = static_cast<std::byte *>(foreign);
  const Status too_long = device_->register_foreign(foreign, 8192);
  EXPECT_EQ(too_long.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(too_long.message().find("4096"), std::string::npos) << too_long.message();
  EXPECT_EQ(device_->register_foreign(bytes + 100, 4000).code(), RRT_ERR_INVALID_ARGUMENT)
      << "runs 4 bytes past the allocation";
  EXPECT_FALSE(device_->find_allocation(foreign).has_value()) << "nothing was registered";
  ASSERT_TRUE(device_->register_foreign(bytes + 96, 4000).is_ok()) << "inside: accepted";
  EXPECT_TRUE(device_->unregister_foreign(bytes + 96).is_ok());
  EXPECT_EQ(fake_.api().free(foreign), cudaSuccess);
}

TEST_F(CudaBackendTest, TheLegacyAndPerThreadDefaultStreamsCannotBeWrapped) {
  create();
  std::unique_ptr<Stream> wrapped;
  for (cudaStream_t legacy : {cudaStreamLegacy, cudaStreamPerThread}) {
    const Status refused = device_->wrap_native_stream(legacy, &wrapped);
    EXPECT_EQ(refused.code(), RRT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(refused.message().find("default stream"), std::string::npos) << refused.message();
    EXPECT_EQ(wrapped, nullptr);
  }
}

// While cudaFree runs (it synchronizes the whole device), other threads keep using the device.
TEST_F(CudaBackendTest, CudaFreeRunsWithoutTheDeviceLock) {
  create({.quarantine_bytes = 0});
  struct Probe {
    Device *device = nullptr;
    std::thread other;
    std::atomic<bool> done{false};
    bool others_ran = true;
  } probe;
  probe.device = device_.get();
  fake_.on_free_context = &probe;
  fake_.on_free = [](void *raw) {
    auto *p = static_cast<Probe *>(raw);
    p->other = std::thread([p] {
      (void)p->device->memory_counters();
      p->done.store(true);
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!p->done.load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    p->others_ran = p->others_ran && p->done.load();
  };
  void *buffer = device_->allocate(4096);
  ASSERT_TRUE(device_->free(buffer).is_ok());
  fake_.on_free = nullptr;
  probe.other.join();
  EXPECT_TRUE(probe.others_ran) << "another thread waited for the device lock during cudaFree";
}

// ---- a wrapped stream its owner captures (torch.cuda.graph) --------------------------------

class CapturedByTheOwnerTest : public CudaBackendTest {
 protected:
  void SetUp() override {
    std::unique_ptr<Device> device;
    ASSERT_TRUE(CudaDevice::create(fake_.api(), 0, {}, &device).is_ok());
    cuda_ = device.get();
    ASSERT_TRUE(Engine::create(std::move(device), 1, generations_, &engine_).is_ok());
    ASSERT_EQ(fake_.api().stream_create_with_flags(&native_, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_TRUE(cuda_->wrap_native_stream(native_, &wrapped_).is_ok());
    x_ = cuda_->allocate(256);
    y_ = cuda_->allocate(256);
  }
  void TearDown() override {
    wrapped_.reset();
    (void)fake_.api().stream_destroy(native_);
    engine_.reset();
  }

  std::int32_t prepare_doubling() {
    testing::CallableBuilder b;
    b.param(testing::f32({64})).param(testing::f32({64}, RRT_DIR_OUT));
    b.intermediate(testing::f32({64}));
    b.task(testing::kScale, {testing::param(0), testing::inter(0), testing::imm_f32(2.0F)});
    b.task(testing::kAdd, {testing::inter(0), testing::param(0), testing::param(1)});
    std::int32_t id = -1;
    const Status prepared = engine_->prepare_callable(b.spec(), &id);
    EXPECT_TRUE(prepared.is_ok()) << prepared.message();
    return id;
  }

  RunArgsView args() const { return RunArgsView{tensors_, {}}; }

  Device *cuda_ = nullptr;
  GenerationRegistry generations_;
  std::unique_ptr<Engine> engine_;
  cudaStream_t native_ = nullptr;
  std::unique_ptr<Stream> wrapped_;
  void *x_ = nullptr;
  void *y_ = nullptr;
  std::vector<TensorArg> tensors_ = {{nullptr, 256, RRT_SPACE_DEVICE},
                                     {nullptr, 256, RRT_SPACE_DEVICE}};
};

TEST_F(CapturedByTheOwnerTest, AKernelLaunchLandsInTheOwnersGraphWithoutBreakingItsCapture) {
  CapacityPlan plan{};
  plan.gm_heap_bytes = 256;
  plan.gm_sm_bytes = 1024;
  plan.runtime_pool_bytes = 4096;
  ASSERT_TRUE(engine_->kernel_init(plan, 0, 0).is_ok());
  const std::int32_t id = prepare_doubling();
  tensors_[0].addr = x_;
  tensors_[1].addr = y_;
  std::unique_ptr<Stream> other;
  ASSERT_TRUE(cuda_->create_stream(&other).is_ok());
  ASSERT_TRUE(engine_->kernel_launch(id, args(), *other).is_ok()) << "the context's last stream";
  ASSERT_TRUE(other->synchronize().is_ok());

  ASSERT_EQ(fake_.api().stream_begin_capture(native_, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  EXPECT_TRUE(wrapped_->is_capturing());
  EXPECT_TRUE(wrapped_->capture_is_foreign());
  const Status launched = engine_->kernel_launch(id, args(), *wrapped_);
  ASSERT_TRUE(launched.is_ok()) << launched.message();
  EXPECT_EQ(wrapped_->synchronize().code(), RRT_ERR_INVALID_STATE);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(fake_.api().stream_end_capture(native_, &graph), cudaSuccess)
      << "the launch must not have invalidated the owner's capture";
  const std::vector<std::string> kernels = fake_.graph_node_kernels(graph);
  EXPECT_NE(std::find(kernels.begin(), kernels.end(), "add"), kernels.end());
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(fake_.api().graph_instantiate_with_flags(&exec, graph, 0), cudaSuccess);
  const std::vector<float> input(64, 2.0F);
  ASSERT_TRUE(cuda_->copy_host_to_device(x_, input.data(), 256).is_ok());
  ASSERT_EQ(fake_.api().graph_launch(exec, native_), cudaSuccess);
  ASSERT_EQ(fake_.api().stream_synchronize(native_), cudaSuccess);
  std::vector<float> out(64);
  ASSERT_TRUE(cuda_->copy_device_to_host(out.data(), y_, 256).is_ok());
  EXPECT_EQ(out[5], 6.0F);
  EXPECT_EQ(fake_.api().graph_exec_destroy(exec), cudaSuccess);
  EXPECT_EQ(fake_.api().graph_destroy(graph), cudaSuccess);
  EXPECT_FALSE(wrapped_->is_capturing());
}

TEST_F(CapturedByTheOwnerTest, AProgramModeRunIsRefusedAndTheOwnersCaptureGoesOn) {
  ASSERT_TRUE(engine_->program_init().is_ok());
  const std::int32_t id = prepare_doubling();
  tensors_[0].addr = x_;
  tensors_[1].addr = y_;
  std::unique_ptr<ProgramRun> run;
  ASSERT_TRUE(engine_->run_prepare(id, args(), &run).is_ok());
  ASSERT_EQ(fake_.api().stream_begin_capture(native_, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  const Status launched = engine_->run_launch(*run, wrapped_.get());
  EXPECT_EQ(launched.code(), RRT_ERR_INVALID_STATE);
  EXPECT_NE(launched.message().find("kernel-mode"), std::string::npos) << launched.message();
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(fake_.api().stream_end_capture(native_, &graph), cudaSuccess);
  EXPECT_EQ(fake_.api().graph_destroy(graph), cudaSuccess);
  ASSERT_TRUE(engine_->run_launch(*run, wrapped_.get()).is_ok()) << "after the capture it runs";
  EXPECT_TRUE(engine_->run_finalize(*run).is_ok());
}

TEST_F(CapturedByTheOwnerTest, AFailedEnqueueInvalidatesTheOwnersCapture) {
  ASSERT_EQ(fake_.api().stream_begin_capture(native_, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  float host[4] = {};
  EXPECT_FALSE(wrapped_->enqueue_copy_host_to_device(host, host, sizeof host).is_ok())
      << "a host pointer is no device destination";
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(fake_.api().stream_end_capture(native_, &graph), cudaErrorStreamCaptureUnsupported)
      << "the owner learns its graph lacks the work";
  EXPECT_EQ(graph, nullptr);
  EXPECT_TRUE(wrapped_->synchronize().is_ok()) << "and nothing stays sticky on the stream";
}

}  // namespace
}  // namespace replayrt::cuda
