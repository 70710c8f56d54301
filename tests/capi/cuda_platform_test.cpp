// What the C ABI promises on CUDA and nowhere else, on the fake CUDA platform: device faults,
// captures bound to their thread, lazy module loading, streams captured by their owner, and
// foreign device memory.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"
#include "support/fake_cuda_platform.h"

namespace {

using replayrt::testing::FakeCuda;
using replayrt::testing::last_message;
using replayrt::testing::platform_fake_cuda;
using replayrt::testing::run_args;

constexpr std::uint64_t kFloats = 64;
constexpr std::uint64_t kBytes = kFloats * 4;

// A native launcher of the fake kernel `user` (its registration token), one pointer parameter:
// the task's first tensor.
int launch_fake_kernel(const rrt_kernel_args_t *args, void *stream, void *user) {
  void *pointer = args->tensors[0];
  void *parameters[] = {&pointer};
  return platform_fake_cuda().api().launch_kernel(user, dim3(1), dim3(1), parameters, 0,
                                                  static_cast<cudaStream_t>(stream)) == cudaSuccess
             ? 0
             : 1;
}

// A kernel-mode CUDA context with one callable of one task over one INOUT tensor.
class CudaPlatformTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = RRT_PLATFORM_CUDA;
    options.profiling = profiling_ ? 1 : 0;
    ASSERT_EQ(rrt_context_create(&options, &ctx_), RRT_OK) << last_message();
    ASSERT_EQ(rrt_stream_create(ctx_, &stream_), RRT_OK);
    ASSERT_EQ(rrt_device_alloc(ctx_, kBytes, &buffer_), RRT_OK);
  }
  void TearDown() override {
    EXPECT_EQ(rrt_stream_destroy(stream_), RRT_OK);
    (void)rrt_device_free(ctx_, buffer_);
    EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK);
  }

  // Kernel init and prepare of one task of `kernel` over the INOUT tensor (and, for a kernel
  // that takes one, the immediate scalar 0).
  std::int32_t prepare(std::int32_t kernel, bool with_scalar = false) {
    describe(kernel, with_scalar);
    rrt_kernel_config_t config{};
    config.struct_size = sizeof config;
    config.context_generation = 0;
    EXPECT_EQ(rrt_capacity_plan_fit(&desc_, &config.capacity), RRT_OK);
    EXPECT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
    std::int32_t id = -1;
    EXPECT_EQ(rrt_callable_prepare(ctx_, &desc_, &id), RRT_OK) << last_message();
    return id;
  }

  // prepare() for program mode.
  std::int32_t prepare_program(std::int32_t kernel, bool with_scalar = false) {
    describe(kernel, with_scalar);
    EXPECT_EQ(rrt_program_init(ctx_), RRT_OK) << last_message();
    std::int32_t id = -1;
    EXPECT_EQ(rrt_callable_prepare(ctx_, &desc_, &id), RRT_OK) << last_message();
    return id;
  }

  // The callable prepare() prepares, in desc_.
  void describe(std::int32_t kernel, bool with_scalar) {
    param_.dtype = RRT_DTYPE_F32;
    param_.ndim = 1;
    param_.shape[0] = kFloats;
    param_.direction = RRT_DIR_INOUT;
    task_ = {kernel, with_scalar ? 2U : 1U, operands_};
    desc_.struct_size = sizeof desc_;
    desc_.num_params = 1;
    desc_.params = &param_;
    desc_.num_tasks = 1;
    desc_.tasks = &task_;
  }

  rrt_run_args_t args() {
    tensor_ = {buffer_, kBytes, RRT_SPACE_DEVICE};
    return run_args({&tensor_, 1});
  }

  std::int32_t builtin(const char *name) {
    std::int32_t id = -1;
    EXPECT_EQ(rrt_kernel_lookup(ctx_, name, &id), RRT_OK);
    return id;
  }

  // Registers `kernel` (one pointer parameter) with the fake under `token`, and with the
  // context as a native kernel of its name that launches it; returns the callable over it.
  std::int32_t prepare_fake_kernel(replayrt::testing::FakeKernel kernel, char *token) {
    kernel.parameter_sizes = {sizeof(void *)};
    const std::string name = kernel.name;
    platform_fake_cuda().register_kernel(token, std::move(kernel));
    std::int32_t native = -1;
    EXPECT_EQ(rrt_kernel_register_native(ctx_, name.c_str(), &launch_fake_kernel, token, &native),
              RRT_OK);
    return prepare(native);
  }

  // Prepares a one-task `fill` callable into *id, wraps a new native stream of the fake device
  // into *wrapped, launches the callable once on *wrapped (`first_on_wrapped`) or on stream_,
  // and then the native stream's owner begins capturing it, as torch.cuda.graph does.
  void launch_then_owner_capture(bool first_on_wrapped, std::int32_t *id, cudaStream_t *native,
                                 rrt_stream_t *wrapped) {
    const FakeCuda &fake = platform_fake_cuda();
    *id = prepare(builtin("fill"), true);
    ASSERT_EQ(fake.api().stream_create_with_flags(native, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(rrt_stream_wrap_native(ctx_, *native, wrapped), RRT_OK);
    const rrt_run_args_t launch = args();
    ASSERT_EQ(rrt_kernel_launch(ctx_, *id, &launch, first_on_wrapped ? *wrapped : stream_), RRT_OK)
        << last_message();
    ASSERT_EQ(fake.api().stream_begin_capture(*native, cudaStreamCaptureModeThreadLocal),
              cudaSuccess);
  }

  // `call`, made while the owner of a wrapped stream that has work queued captures it, is
  // refused (it would have to wait for that work) and changes nothing: once the capture ends, a
  // launch still runs on the context's buffer.
  void expect_refused_during_an_owner_capture(const std::function<rrt_status_t()> &call) {
    std::int32_t id = -1;
    cudaStream_t native = nullptr;
    rrt_stream_t wrapped = nullptr;
    ASSERT_NO_FATAL_FAILURE(launch_then_owner_capture(true, &id, &native, &wrapped));
    EXPECT_EQ(call(), RRT_ERR_INVALID_STATE);
    EXPECT_NE(last_message().find("cudaStreamBeginCapture"), std::string::npos) << last_message();
    end_owner_capture_and_destroy(native, wrapped);
    const rrt_run_args_t launch = args();
    EXPECT_EQ(rrt_kernel_launch(ctx_, id, &launch, stream_), RRT_OK) << last_message();
    EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  }

  // Ends the owner's capture of `native` and destroys the graph it made, then the wrapper and
  // the native stream.
  static void end_owner_capture_and_destroy(cudaStream_t native, rrt_stream_t wrapped) {
    const FakeCuda &fake = platform_fake_cuda();
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(fake.api().stream_end_capture(native, &graph), cudaSuccess);
    EXPECT_EQ(fake.api().graph_destroy(graph), cudaSuccess);
    EXPECT_EQ(rrt_stream_destroy(wrapped), RRT_OK);
    EXPECT_EQ(fake.api().stream_destroy(native), cudaSuccess);
  }

  // Profiling on for the context SetUp creates.
  bool profiling_ = false;
  rrt_context_t ctx_ = nullptr;
  rrt_stream_t stream_ = nullptr;
  void *buffer_ = nullptr;
  rrt_tensor_desc_t param_{};
  rrt_operand_t operands_[2] = {{RRT_OPERAND_PARAM, 0}, {RRT_OPERAND_IMMEDIATE, 0}};
  rrt_task_desc_t task_{};
  rrt_callable_desc_t desc_{};
  rrt_tensor_arg_t tensor_{};
};

int faulting_kernel(const rrt_kernel_args_t *, void *) {
  return 1;
}

// Runs last in its process (ctest runs each case alone): the fault is sticky for the device.
TEST_F(CudaPlatformTest, AKernelFaultIsStickyForTheWholeContextAndSaysSo) {
  std::int32_t faulting = -1;
  ASSERT_EQ(replayrt::testing::register_host_kernel_on_fake_cuda(ctx_, "faulting", &faulting_kernel,
                                                                 nullptr, &faulting),
            RRT_OK);
  const std::int32_t id = prepare(faulting);
  const rrt_run_args_t launch = args();
  ASSERT_EQ(rrt_kernel_launch(ctx_, id, &launch, stream_), RRT_OK);
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_ERR_KERNEL_FAILED);
  const std::string message = last_message();
  EXPECT_NE(message.find("cudaErrorLaunchFailure"), std::string::npos) << message;
  EXPECT_NE(message.find("unusable"), std::string::npos) << message;
  rrt_stream_t other = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &other), RRT_ERR_KERNEL_FAILED)
      << "a device fault reaches every later call, unlike a simulator kernel's failure";
  platform_fake_cuda().fault(cudaSuccess);
}

TEST_F(CudaPlatformTest, ACaptureIsEndedAndItsStreamDestroyedOnlyOnItsOwnThread) {
  (void)prepare(builtin("fill"), true);
  rrt_stream_t capturing = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &capturing), RRT_OK);
  const int graphs = platform_fake_cuda().live_graphs;
  std::mutex mutex;
  std::condition_variable changed;
  int step = 0;
  rrt_status_t ended = RRT_ERR_INTERNAL;
  std::thread owner([&] {
    ASSERT_EQ(rrt_stream_begin_capture(capturing), RRT_OK);
    std::unique_lock<std::mutex> lock(mutex);
    step = 1;
    changed.notify_all();
    changed.wait(lock, [&] { return step == 2; });
    rrt_graph_t graph = nullptr;
    ended = rrt_stream_end_capture(capturing, &graph);
    if (graph != nullptr) {
      (void)rrt_graph_destroy(graph);
    }
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return step == 1; });
  }
  rrt_graph_t graph = nullptr;
  EXPECT_EQ(rrt_stream_end_capture(capturing, &graph), RRT_ERR_INVALID_STATE);
  EXPECT_NE(last_message().find("another thread"), std::string::npos) << last_message();
  EXPECT_EQ(rrt_stream_destroy(capturing), RRT_ERR_INVALID_STATE);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    step = 2;
  }
  changed.notify_all();
  owner.join();
  EXPECT_EQ(ended, RRT_OK) << "the capture went on and ended on its thread";
  EXPECT_EQ(rrt_stream_destroy(capturing), RRT_OK);
  EXPECT_EQ(platform_fake_cuda().live_graphs, graphs) << "nothing of the capture leaked";
}

// A user kernel whose module loads lazily: its first launch inside a capture would load it.
char lazy_kernel_token = 0;

TEST_F(CudaPlatformTest, AKernelFirstLaunchedInsideACaptureMustBeWarmedUpFirst) {
  replayrt::testing::FakeKernel kernel;
  kernel.name = "lazy";
  kernel.other_module = true;
  kernel.loaded = false;
  const std::int32_t id = prepare_fake_kernel(std::move(kernel), &lazy_kernel_token);
  const rrt_run_args_t launch = args();
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  EXPECT_EQ(rrt_kernel_launch(ctx_, id, &launch, stream_), RRT_ERR_KERNEL_FAILED);
  rrt_graph_t graph = nullptr;
  EXPECT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_ERR_INVALID_STATE);
  EXPECT_NE(last_message().find("cudaErrorStreamCaptureUnsupported"), std::string::npos)
      << last_message();
  EXPECT_EQ(graph, nullptr);
  // Warmed up (here by cudaFuncGetAttributes), the same capture succeeds.
  cudaFuncAttributes attributes{};
  ASSERT_EQ(platform_fake_cuda().api().func_get_attributes(&attributes, &lazy_kernel_token),
            cudaSuccess);
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, id, &launch, stream_), RRT_OK) << last_message();
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK) << last_message();
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
}

TEST_F(CudaPlatformTest, ALaunchIntoAStreamItsOwnerCapturesLandsInTheOwnersGraph) {
  std::int32_t id = -1;
  cudaStream_t native = nullptr;
  rrt_stream_t wrapped = nullptr;
  // The context's previous launch ran on another stream: the launch would order itself after
  // it with an event wait, which a capture must not cross.
  ASSERT_NO_FATAL_FAILURE(launch_then_owner_capture(false, &id, &native, &wrapped));
  const rrt_run_args_t launch = args();
  EXPECT_EQ(rrt_kernel_launch(ctx_, id, &launch, wrapped), RRT_OK) << last_message();
  EXPECT_EQ(rrt_stream_synchronize(wrapped), RRT_ERR_INVALID_STATE);
  EXPECT_EQ(rrt_stream_destroy(wrapped), RRT_ERR_INVALID_STATE) << "it is capturing";
  end_owner_capture_and_destroy(native, wrapped);
}

// The context's last launch ran on a wrapped stream that its owner then began capturing: the
// next launch on another stream must follow that launch, but a record on the captured stream
// would land in the owner's graph and a wait for it is refused there. The launch is refused,
// enqueuing nothing, until the owner's capture ends.
TEST_F(CudaPlatformTest,
       ALaunchThatMustFollowAStreamItsOwnerNowCapturesIsRefusedUntilTheCaptureEnds) {
  std::int32_t id = -1;
  cudaStream_t native = nullptr;
  rrt_stream_t wrapped = nullptr;
  ASSERT_NO_FATAL_FAILURE(launch_then_owner_capture(true, &id, &native, &wrapped));
  const rrt_run_args_t launch = args();
  EXPECT_EQ(rrt_kernel_launch(ctx_, id, &launch, stream_), RRT_ERR_INVALID_STATE)
      << "a launch went on without following the captured stream's earlier launch";
  EXPECT_NE(last_message().find("must follow the context's last launch"), std::string::npos)
      << last_message();
  end_owner_capture_and_destroy(native, wrapped);
  EXPECT_EQ(rrt_kernel_launch(ctx_, id, &launch, stream_), RRT_OK) << last_message();
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
}

TEST_F(CudaPlatformTest, ForeignMemoryIsAdmittedOnlyWhollyAndGoesStaleWhenUnregistered) {
  const std::int32_t id = prepare(builtin("fill"), true);
  const FakeCuda &fake = platform_fake_cuda();
  void *foreign = nullptr;
  ASSERT_EQ(fake.api().malloc(&foreign, kBytes), cudaSuccess);
  EXPECT_EQ(rrt_device_register(ctx_, foreign, 2 * kBytes), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("runs past"), std::string::npos) << last_message();
  ASSERT_EQ(rrt_device_register(ctx_, foreign, kBytes), RRT_OK) << last_message();
  const rrt_tensor_arg_t tensor{foreign, kBytes, RRT_SPACE_DEVICE};
  const rrt_run_args_t launch = run_args({&tensor, 1});
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, id, &launch, stream_), RRT_OK) << last_message();
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK) << last_message();
  ASSERT_EQ(rrt_graph_replay(graph, stream_), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  ASSERT_EQ(rrt_device_unregister(ctx_, foreign), RRT_OK);
  EXPECT_EQ(rrt_graph_replay(graph, stream_), RRT_ERR_STALE_ADDRESS);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(fake.api().free(foreign), cudaSuccess);
}

// A kernel that waits until its gate opens (the host's release), then marks that it ran.
struct KernelGate {
  std::atomic<int> open{0};
  std::atomic<bool> ran{false};
};
char gated_kernel_token = 0;

void run_gated(const replayrt::testing::FakeKernelLaunch & /*launch*/, void *context) {
  auto &gate = *static_cast<KernelGate *>(context);
  gate.open.wait(0, std::memory_order_acquire);
  gate.ran.store(true, std::memory_order_release);
}

// Foreign memory goes back to its owner when unregistered: work queued on it before must have
// run by then, so unregister waits for it, as rrt_device_free does.
TEST_F(CudaPlatformTest, UnregisterWaitsForTheWorkQueuedOnTheForeignMemory) {
  KernelGate gate;
  replayrt::testing::FakeKernel kernel;
  kernel.name = "gated";
  kernel.run = &run_gated;
  kernel.context = &gate;
  const std::int32_t id = prepare_fake_kernel(std::move(kernel), &gated_kernel_token);
  void *foreign = nullptr;
  ASSERT_EQ(platform_fake_cuda().api().malloc(&foreign, kBytes), cudaSuccess);
  ASSERT_EQ(rrt_device_register(ctx_, foreign, kBytes), RRT_OK) << last_message();
  const rrt_tensor_arg_t tensor{foreign, kBytes, RRT_SPACE_DEVICE};
  const rrt_run_args_t launch = run_args({&tensor, 1});
  ASSERT_EQ(rrt_kernel_launch(ctx_, id, &launch, stream_), RRT_OK) << last_message();

  std::future<rrt_status_t> unregistered =
      std::async(std::launch::async, [&] { return rrt_device_unregister(ctx_, foreign); });
  EXPECT_EQ(unregistered.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
      << "unregister returned while a launch on the memory was still queued";
  gate.open.store(1, std::memory_order_release);
  gate.open.notify_all();
  EXPECT_EQ(unregistered.get(), RRT_OK);
  EXPECT_TRUE(gate.ran.load(std::memory_order_acquire));
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  EXPECT_EQ(platform_fake_cuda().api().free(foreign), cudaSuccess);
}

// A program-mode run that must follow a stream its owner now captures is refused as a launch
// is, and stays prepared: it launches once the owner's capture ends.
TEST_F(CudaPlatformTest, ARunRefusedUntilAnOwnersCaptureEndsStaysPrepared) {
  const std::int32_t id = prepare_program(builtin("fill"), true);
  const FakeCuda &fake = platform_fake_cuda();
  cudaStream_t native = nullptr;
  rrt_stream_t wrapped = nullptr;
  ASSERT_EQ(fake.api().stream_create_with_flags(&native, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(rrt_stream_wrap_native(ctx_, native, &wrapped), RRT_OK);
  const rrt_run_args_t launch = args();
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, id, &launch, &run), RRT_OK) << last_message();
  ASSERT_EQ(rrt_run_launch(run, wrapped), RRT_OK) << last_message();
  ASSERT_EQ(rrt_run_wait(run), RRT_OK) << last_message();
  ASSERT_EQ(rrt_run_finalize(run), RRT_OK);
  ASSERT_EQ(fake.api().stream_begin_capture(native, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(rrt_run_prepare(ctx_, id, &launch, &run), RRT_OK) << last_message();
  EXPECT_EQ(rrt_run_launch(run, stream_), RRT_ERR_INVALID_STATE);
  EXPECT_NE(last_message().find("must follow the context's last launch"), std::string::npos)
      << last_message();
  end_owner_capture_and_destroy(native, wrapped);
  EXPECT_EQ(rrt_run_launch(run, stream_), RRT_OK) << last_message();
  EXPECT_EQ(rrt_run_wait(run), RRT_OK) << last_message();
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK);
}

// A capture's current dependencies may carry edge data (a programmatic dependency an earlier
// kernel of the capture set up, as torch's may), and then cudaStreamGetCaptureInfo without room
// for edge data fails (cudaErrorLossyQuery). A captured launch reads the edge data and hands it
// on, so its first task still depends on the earlier kernel as the capture said.
TEST_F(CudaPlatformTest, ACapturedLaunchKeepsTheEdgeDataOfTheCapturesDependencies) {
  const std::int32_t id = prepare(builtin("fill"), true);
  const FakeCuda &fake = platform_fake_cuda();
  const rrt_run_args_t launch = args();
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, id, &launch, stream_), RRT_OK) << last_message();
  void *handle = nullptr;
  ASSERT_EQ(rrt_stream_native_handle(stream_, &handle), RRT_OK);
  const auto native = static_cast<cudaStream_t>(handle);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t *dependencies = nullptr;
  std::size_t count = 0;
  ASSERT_EQ(fake.api().stream_get_capture_info(native, &status, nullptr, nullptr, &dependencies,
                                               nullptr, &count),
            cudaSuccess);
  ASSERT_EQ(count, 1U);
  cudaGraphNode_t kernel = dependencies[0];
  cudaGraphEdgeData programmatic{};
  programmatic.from_port = cudaGraphKernelNodePortProgrammatic;
  programmatic.type = cudaGraphDependencyTypeProgrammatic;
  ASSERT_EQ(fake.api().stream_update_capture_dependencies(native, &kernel, &programmatic, 1,
                                                          cudaStreamSetCaptureDependencies),
            cudaSuccess);
  const int before = fake.nodes_added_with_edge_data;
  EXPECT_EQ(rrt_kernel_launch(ctx_, id, &launch, stream_), RRT_OK) << last_message();
  EXPECT_EQ(fake.nodes_added_with_edge_data, before + 1)
      << "the launch's first task keeps the capture's edge data";
  rrt_graph_t graph = nullptr;
  EXPECT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK) << last_message();
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
}

// Finalize must wait for the work queued on every stream before it releases memory, and a
// stream its owner captures cannot be waited for: finalize is refused and changes nothing.
TEST_F(CudaPlatformTest, FinalizeWhileTheOwnerCapturesAWrappedStreamIsRefusedAndChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(
      expect_refused_during_an_owner_capture([&] { return rrt_context_finalize(ctx_); }));
  EXPECT_EQ(rrt_context_finalize(ctx_), RRT_OK) << last_message();
}

// For the same reason a free is refused and frees nothing.
TEST_F(CudaPlatformTest, AFreeWhileTheOwnerCapturesAWrappedStreamIsRefusedAndFreesNothing) {
  ASSERT_NO_FATAL_FAILURE(
      expect_refused_during_an_owner_capture([&] { return rrt_device_free(ctx_, buffer_); }));
}

// replayrt never sees an owner's capture end or its graph go, so it cannot hold an event for
// that graph: the event is the caller's to keep alive while the owner's graph may run, and it
// can be destroyed once the caller is done with it.
TEST_F(CudaPlatformTest, AnEventAnOwnersCaptureRecordedOrWaitedOnIsNotHeldByReplayrt) {
  std::int32_t id = -1;
  cudaStream_t native = nullptr;
  rrt_stream_t wrapped = nullptr;
  ASSERT_NO_FATAL_FAILURE(launch_then_owner_capture(true, &id, &native, &wrapped));
  rrt_event_t recorded = nullptr;
  rrt_event_t waited = nullptr;
  ASSERT_EQ(rrt_event_create(ctx_, &recorded), RRT_OK);
  ASSERT_EQ(rrt_event_create(ctx_, &waited), RRT_OK);
  ASSERT_EQ(rrt_event_record(waited, stream_), RRT_OK);
  EXPECT_EQ(rrt_event_record(recorded, wrapped), RRT_OK) << last_message();
  EXPECT_EQ(rrt_stream_wait_event(wrapped, waited), RRT_OK) << last_message();
  end_owner_capture_and_destroy(native, wrapped);
  EXPECT_EQ(rrt_event_destroy(recorded), RRT_OK) << last_message();
  EXPECT_EQ(rrt_event_destroy(waited), RRT_OK) << last_message();
}

class CudaPlatformProfilingTest : public CudaPlatformTest {
 protected:
  void SetUp() override {
    profiling_ = true;
    CudaPlatformTest::SetUp();
  }
};

// The task records of one capture's launches follow one another, and replayrt counts them until
// the capture ends, which it never sees for an owner's capture: there each launch writes its
// records from the first one on, so every owner capture fits the collectors one launch fits.
TEST_F(CudaPlatformProfilingTest, EveryOwnerCaptureOfAWrappedStreamFitsTheCollectors) {
  std::int32_t id = -1;
  cudaStream_t native = nullptr;
  rrt_stream_t wrapped = nullptr;
  ASSERT_NO_FATAL_FAILURE(launch_then_owner_capture(true, &id, &native, &wrapped));
  const FakeCuda &fake = platform_fake_cuda();
  const rrt_run_args_t launch = args();
  for (int capture = 0; capture < 3; ++capture) {
    if (capture > 0) {
      ASSERT_EQ(fake.api().stream_begin_capture(native, cudaStreamCaptureModeThreadLocal),
                cudaSuccess);
    }
    EXPECT_EQ(rrt_kernel_launch(ctx_, id, &launch, wrapped), RRT_OK)
        << "capture " << capture << ": " << last_message();
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(fake.api().stream_end_capture(native, &graph), cudaSuccess);
    EXPECT_EQ(fake.api().graph_destroy(graph), cudaSuccess);
  }
  EXPECT_EQ(rrt_stream_destroy(wrapped), RRT_OK);
  EXPECT_EQ(fake.api().stream_destroy(native), cudaSuccess);
}

}  // namespace
