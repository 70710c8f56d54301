// The CUDA executor over FakeCuda: what a launch enqueues (and never reads back), the graph a
// captured launch becomes, device operands, profiling records and its refusals.
#include "platform/cuda/cuda_executor.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "platform/cuda/cuda_device.h"
#include "platform/cuda/cuda_stream.h"
#include "platform/launch/profile_records.h"
#include "runtime/engine.h"
#include "support/callable_builder.h"
#include "support/executable_rig.h"
#include "support/fake_cuda.h"

namespace replayrt::cuda {
namespace {

using testing::CallableBuilder;
using testing::f32;
using testing::imm;
using testing::imm_f32;
using testing::inter;
using testing::param;

class CudaExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status created = CudaDevice::create(fake_.api(), 0, {.quarantine_bytes = 0}, &device_);
    ASSERT_TRUE(created.is_ok()) << created.message();
    kernels_ = std::make_unique<KernelRegistry>(device_->builtin_launchers());
    ExecutorConfig config;
    config.kernels = kernels_.get();
    ASSERT_TRUE(device_->create_executor(config, &executor_).is_ok());
    ASSERT_TRUE(device_->create_stream(&stream_).is_ok());
  }

  void TearDown() override {
    stream_.reset();
    rig_.reset();
    for (void *buffer : buffers_) {
      (void)device_->free(buffer);
    }
  }

  Status prepare(const rrt_callable_desc_t &desc) {
    rig_ = std::make_unique<testing::ExecutableRig>();
    return rig_->prepare(*device_, *executor_, *kernels_, desc);
  }

  void *buffer(std::size_t bytes) {
    void *ptr = device_->allocate(bytes);
    EXPECT_NE(ptr, nullptr);
    buffers_.push_back(ptr);
    return ptr;
  }

  void write(void *device, const void *host, std::size_t bytes) {
    ASSERT_TRUE(device_->copy_host_to_device(device, host, bytes).is_ok());
  }

  std::vector<float> read(const void *device, std::size_t floats) {
    std::vector<float> host(floats);
    EXPECT_TRUE(device_->copy_device_to_host(host.data(), device, floats * 4).is_ok());
    return host;
  }

  Status launch(std::span<void *const> tensors, std::span<const std::uint64_t> scalars = {},
                void *timings = nullptr, void *wall = nullptr) {
    return executor_->enqueue(*stream_, rig_->executable(),
                              rig_->binding(tensors, scalars, timings, wall));
  }

  // Declared first, destroyed last.
  testing::FakeCuda fake_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<KernelRegistry> kernels_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<testing::ExecutableRig> rig_;
  std::vector<void *> buffers_;
};

// y = 2x + x through an intermediate.
CallableBuilder doubling(std::uint64_t n) {
  CallableBuilder b;
  b.param(f32({n})).param(f32({n}, RRT_DIR_OUT)).intermediate(f32({n}));
  b.task(testing::kScale, {param(0), inter(0), imm_f32(2.0F)});
  b.task(testing::kAdd, {inter(0), param(0), param(1)});
  return b;
}

TEST_F(CudaExecutorTest, AKernelModeLaunchReadsNoDeviceMemoryAndSynchronizesNothing) {
  std::unique_ptr<Device> device;
  ASSERT_TRUE(CudaDevice::create(fake_.api(), 0, {}, &device).is_ok());
  Device &cuda = *device;
  GenerationRegistry generations;
  std::unique_ptr<Engine> engine;
  ASSERT_TRUE(Engine::create(std::move(device), 1, generations, &engine).is_ok());
  CapacityPlan plan{};
  plan.gm_heap_bytes = 1024;
  plan.gm_sm_bytes = 1024;
  plan.runtime_pool_bytes = 4096;
  ASSERT_TRUE(engine->kernel_init(plan, 0, 0).is_ok());
  CallableBuilder b = doubling(256);
  std::int32_t id = -1;
  ASSERT_TRUE(engine->prepare_callable(b.spec(), &id).is_ok());
  void *x = cuda.allocate(1024);
  void *y = cuda.allocate(1024);
  const std::vector<float> input(256, 1.5F);
  ASSERT_TRUE(cuda.copy_host_to_device(x, input.data(), 1024).is_ok());
  const std::vector<TensorArg> tensors = {{x, 1024, RRT_SPACE_DEVICE}, {y, 1024, RRT_SPACE_DEVICE}};
  std::unique_ptr<Stream> stream;
  ASSERT_TRUE(cuda.create_stream(&stream).is_ok());
  fake_.drain();
  const int copies = fake_.device_to_host_copies;
  const int synchronizations = fake_.stream_synchronizations;
  for (int i = 0; i < 3; ++i) {
    const Status launched = engine->kernel_launch(id, RunArgsView{tensors, {}}, *stream);
    ASSERT_TRUE(launched.is_ok()) << launched.message();
  }
  EXPECT_EQ(fake_.device_to_host_copies, copies) << "the launch read its image back";
  EXPECT_EQ(fake_.stream_synchronizations, synchronizations) << "the launch synchronized";
  ASSERT_TRUE(stream->synchronize().is_ok());
  std::vector<float> out(256);
  ASSERT_TRUE(cuda.copy_device_to_host(out.data(), y, 1024).is_ok());
  EXPECT_EQ(out[17], 4.5F);
  stream.reset();
  ASSERT_TRUE(cuda.free(x).is_ok());
  ASSERT_TRUE(cuda.free(y).is_ok());
}

TEST_F(CudaExecutorTest, ACapturedLaunchMakesIndependentTasksParallelBranchesThatJoin) {
  // a = 2x, b = 4x (independent), c = a + b, then d = c * 3 after the join.
  CallableBuilder b;
  b.param(f32({64})).param(f32({64}, RRT_DIR_OUT)).param(f32({64}, RRT_DIR_OUT));
  b.param(f32({64}, RRT_DIR_OUT)).param(f32({64}, RRT_DIR_OUT));
  b.task(testing::kScale, {param(0), param(1), imm_f32(2.0F)});
  b.task(testing::kScale, {param(0), param(2), imm_f32(4.0F)});
  b.task(testing::kAdd, {param(1), param(2), param(3)});
  b.task(testing::kScale, {param(3), param(4), imm_f32(3.0F)});
  ASSERT_TRUE(prepare(b.desc()).is_ok());
  void *const tensors[] = {buffer(256), buffer(256), buffer(256), buffer(256), buffer(256)};
  const auto native = static_cast<cudaStream_t>(stream_->share_native_handle());
  // The caller captures the stream itself: the launch sees it capturing and builds branches.
  ASSERT_EQ(fake_.api().stream_begin_capture(native, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  ASSERT_EQ(fake_.api().memset_async(tensors[0], 0, 4, native), cudaSuccess);  // node 0
  const Status launched = launch(tensors);
  ASSERT_TRUE(launched.is_ok()) << launched.message();
  ASSERT_EQ(fake_.api().memset_async(tensors[4], 0, 4, native), cudaSuccess);  // after the join
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(fake_.api().stream_end_capture(native, &graph), cudaSuccess);
  const std::vector<std::string> kernels = fake_.graph_node_kernels(graph);
  ASSERT_EQ(kernels, (std::vector<std::string>{"", "scale", "scale", "add", "scale", ""}));
  const std::vector<std::vector<std::size_t>> deps = fake_.graph_dependencies(graph);
  EXPECT_EQ(deps[1], std::vector<std::size_t>{0}) << "a root depends on what came before";
  EXPECT_EQ(deps[2], std::vector<std::size_t>{0}) << "the second root is a parallel branch";
  EXPECT_EQ(deps[3], (std::vector<std::size_t>{1, 2})) << "the join";
  EXPECT_EQ(deps[4], std::vector<std::size_t>{3});
  EXPECT_EQ(deps[5], std::vector<std::size_t>{4}) << "later work follows the last task";
  EXPECT_EQ(fake_.api().graph_destroy(graph), cudaSuccess);
}

TEST_F(CudaExecutorTest, EagerLaunchesRunInProgramOrder) {
  CallableBuilder b = doubling(64);
  ASSERT_TRUE(prepare(b.desc()).is_ok());
  void *const tensors[] = {buffer(256), buffer(256)};
  const std::vector<float> input(64, 2.0F);
  write(tensors[0], input.data(), 256);
  fake_.clear_launches();
  ASSERT_TRUE(launch(tensors).is_ok());
  ASSERT_TRUE(stream_->synchronize().is_ok());
  const auto launches = fake_.launches();
  ASSERT_EQ(launches.size(), 2U);
  EXPECT_EQ(launches[0].kernel, "scale");
  EXPECT_EQ(launches[1].kernel, "add");
  EXPECT_FALSE(launches[0].captured);
  EXPECT_EQ(read(tensors[1], 64)[63], 6.0F);
}

TEST_F(CudaExecutorTest, AProfiledLaunchWritesEveryTaskTimingAndItsLaunchRecord) {
  CallableBuilder b = doubling(64);
  ASSERT_TRUE(prepare(b.desc()).is_ok());
  void *const tensors[] = {buffer(256), buffer(256)};
  void *timings = buffer(2 * sizeof(TaskTiming));
  void *wall = buffer(sizeof(LaunchRecord));
  ASSERT_TRUE(device_->memset(timings, 0, 2 * sizeof(TaskTiming)).is_ok());
  ASSERT_TRUE(device_->memset(wall, 0, sizeof(LaunchRecord)).is_ok());
  const int before = fake_.stream_synchronizations;
  ASSERT_TRUE(launch(tensors, {}, timings, wall).is_ok());
  ASSERT_TRUE(launch(tensors, {}, timings, wall).is_ok());
  EXPECT_EQ(fake_.stream_synchronizations, before) << "profiling synchronizes nothing";
  ASSERT_TRUE(stream_->synchronize().is_ok());
  TaskTiming records[2];
  LaunchRecord launch_record;
  ASSERT_TRUE(device_->copy_device_to_host(records, timings, sizeof records).is_ok());
  ASSERT_TRUE(device_->copy_device_to_host(&launch_record, wall, sizeof launch_record).is_ok());
  for (std::uint32_t t = 0; t < 2; ++t) {
    EXPECT_EQ(records[t].task, t);
    EXPECT_NE(records[t].start_ns, 0U);
    EXPECT_LE(records[t].start_ns, records[t].end_ns);
  }
  EXPECT_LE(records[0].end_ns, records[1].start_ns) << "task 1 follows task 0";
  EXPECT_EQ(launch_record.tasks, 2U);
  EXPECT_EQ(launch_record.launches, 2U);
  EXPECT_LE(launch_record.start_ns, records[0].start_ns);
  EXPECT_GE(launch_record.end_ns, records[1].end_ns);
}

// out = cache[row] through a view whose row is device value 0.
CallableBuilder row_copy() {
  CallableBuilder b;
  b.param(f32({8, 4}))
      .param(rrt_tensor_desc_t{RRT_DTYPE_I32, 1, {1}, RRT_DIR_IN, RRT_PARAM_SPACE_ANY})
      .param(f32({4}, RRT_DIR_OUT));
  b.device_value(RRT_OPERAND_PARAM, 1, 0);
  b.view(RRT_OPERAND_PARAM, 0, {4}, 0, 0, 4, 7);
  b.task(testing::kCopy, {testing::view(0), param(2)});
  return b;
}

TEST_F(CudaExecutorTest, ABuiltinsDeviceOffsetOutOfRangeWritesNanAndAnOutputOffsetNothing) {
  CallableBuilder b = row_copy();
  ASSERT_TRUE(prepare(b.desc()).is_ok());
  void *cache = buffer(std::size_t{32} * 4);
  void *row = buffer(4);
  void *out = buffer(16);
  std::vector<float> rows(32);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i] = static_cast<float>(i);
  }
  write(cache, rows.data(), 128);
  void *const tensors[] = {cache, row, out};
  for (const std::int32_t index : {3, 8, -1}) {
    write(row, &index, 4);
    ASSERT_TRUE(launch(tensors).is_ok());
    ASSERT_TRUE(stream_->synchronize().is_ok()) << "CUDA kernels cannot fail the task";
    const std::vector<float> got = read(out, 4);
    if (index == 3) {
      EXPECT_EQ(got[1], 13.0F);
    } else {
      EXPECT_TRUE(std::isnan(got[1])) << "row " << index;
    }
  }
  // A view over the output whose offset is out of range: nothing is written.
  CallableBuilder into_row;
  into_row.param(f32({4}))
      .param(rrt_tensor_desc_t{RRT_DTYPE_I32, 1, {1}, RRT_DIR_IN, RRT_PARAM_SPACE_ANY})
      .param(f32({8, 4}, RRT_DIR_INOUT));
  into_row.device_value(RRT_OPERAND_PARAM, 1, 0);
  into_row.view(RRT_OPERAND_PARAM, 2, {4}, 0, 0, 4, 7);
  into_row.task(testing::kCopy, {param(0), testing::view(0)});
  ASSERT_TRUE(prepare(into_row.desc()).is_ok());
  const std::int32_t past = 9;
  write(row, &past, 4);
  void *const into[] = {out, row, cache};
  ASSERT_TRUE(launch(into).is_ok());
  ASSERT_TRUE(stream_->synchronize().is_ok());
  EXPECT_EQ(read(cache, 32), rows) << "nothing was written";
}

TEST_F(CudaExecutorTest, ADeviceValueInABuiltinsShapeScalarIsUnsupportedAndEnqueuesNothing) {
  CallableBuilder b;
  b.param(f32({4})).param(f32({4}, RRT_DIR_OUT));
  b.param(rrt_tensor_desc_t{RRT_DTYPE_I32, 1, {1}, RRT_DIR_IN, RRT_PARAM_SPACE_ANY});
  b.device_value(RRT_OPERAND_PARAM, 2, 0);
  b.task(testing::kSoftmax, {param(0), param(1), testing::device_value(0)});
  ASSERT_TRUE(prepare(b.desc()).is_ok());
  void *const tensors[] = {buffer(16), buffer(16), buffer(4)};
  const int launches = fake_.kernel_launches;
  const Status launched = launch(tensors);
  EXPECT_EQ(launched.code(), RRT_ERR_UNSUPPORTED);
  EXPECT_NE(launched.message().find("scalar 0"), std::string::npos) << launched.message();
  EXPECT_NE(launched.message().find("softmax"), std::string::npos) << launched.message();
  EXPECT_EQ(fake_.kernel_launches, launches);
  EXPECT_EQ(stream_->synchronize().code(), RRT_ERR_UNSUPPORTED) << "sticky on the stream";
}

// A user launcher that records the device operands it is handed.
struct SeenOperands {
  std::uint32_t count = 0;
  rrt_device_operand_t first{};
  std::uint64_t scalar = 1;
};

int record_operands(const rrt_kernel_args_t *args, void * /*stream*/, void *user) {
  auto *seen = static_cast<SeenOperands *>(user);
  seen->count = args->num_device_operands;
  if (args->num_device_operands != 0) {
    seen->first = args->device_operands[0];
    seen->scalar = args->scalars[0];
  }
  return 0;
}

TEST_F(CudaExecutorTest, ANativeLauncherReceivesEachDeviceValuesAddress) {
  SeenOperands seen;
  KernelEntry entry;
  entry.name = "seen";
  entry.native_launch = &record_operands;
  entry.user = &seen;
  std::int32_t kernel = -1;
  ASSERT_TRUE(kernels_->add(entry, &kernel).is_ok());
  CallableBuilder b;
  b.param(f32({4}, RRT_DIR_INOUT));
  b.param(rrt_tensor_desc_t{RRT_DTYPE_I64, 1, {2}, RRT_DIR_IN, RRT_PARAM_SPACE_ANY});
  b.device_value(RRT_OPERAND_PARAM, 1, 1);
  b.task(kernel, {param(0), testing::device_value(0)});
  ASSERT_TRUE(prepare(b.desc()).is_ok());
  void *values = buffer(16);
  void *const tensors[] = {buffer(16), values};
  ASSERT_TRUE(launch(tensors).is_ok());
  ASSERT_EQ(seen.count, 1U);
  EXPECT_EQ(seen.first.kind, RRT_DEVICE_OPERAND_SCALAR);
  EXPECT_EQ(seen.first.index, 0U);
  EXPECT_EQ(seen.first.value, static_cast<const std::byte *>(values) + 8);
  EXPECT_EQ(seen.first.dtype, static_cast<std::uint32_t>(RRT_DTYPE_I64));
  EXPECT_EQ(seen.scalar, 0U);
}

TEST_F(CudaExecutorTest, AFailedBuiltinLaunchNamesTheCudaErrorAndAStaleErrorIsBlamedOnNothing) {
  CallableBuilder b = doubling(64);
  ASSERT_TRUE(prepare(b.desc()).is_ok());
  void *const tensors[] = {buffer(256), buffer(256)};
  // An earlier failed call that nobody cleared.
  void *ignored = nullptr;
  fake_.malloc_failures_left = 1;
  ASSERT_NE(fake_.api().malloc(&ignored, 16), cudaSuccess);
  EXPECT_TRUE(launch(tensors).is_ok()) << "the launch reports its own result only";
  ASSERT_TRUE(stream_->synchronize().is_ok());
  fake_.launch_error = cudaErrorInvalidConfiguration;
  const Status launched = launch(tensors);
  EXPECT_FALSE(launched.is_ok());
  EXPECT_NE(launched.message().find("cudaErrorInvalidConfiguration"), std::string::npos)
      << launched.message();
  EXPECT_NE(launched.message().find("task 0 (kernel 'scale')"), std::string::npos)
      << launched.message();
  fake_.launch_error = cudaSuccess;
  EXPECT_FALSE(stream_->synchronize().is_ok()) << "the failure is the stream's";
}

TEST_F(CudaExecutorTest, PrepareRefusesAKernelWithoutANativeLauncher) {
  KernelEntry host_only;
  host_only.name = "host_only";
  host_only.host_fn = [](const rrt_kernel_args_t *, void *) { return 0; };
  std::int32_t kernel = -1;
  ASSERT_TRUE(kernels_->add(host_only, &kernel).is_ok());
  CallableBuilder b;
  b.param(f32({4}, RRT_DIR_INOUT));
  b.task(kernel, {param(0)});
  const Status prepared = prepare(b.desc());
  EXPECT_EQ(prepared.code(), RRT_ERR_UNSUPPORTED);
  EXPECT_NE(prepared.message().find("no CUDA launcher"), std::string::npos) << prepared.message();
}

TEST_F(CudaExecutorTest, ALaunchOfAnotherCallablesInvocationIsRefusedBeforeAnythingRuns) {
  CallableBuilder b = doubling(64);
  ASSERT_TRUE(prepare(b.desc()).is_ok());
  testing::ExecutableRig other;
  CallableBuilder c = doubling(64);
  ASSERT_TRUE(other.prepare(*device_, *executor_, *kernels_, c.desc(), 9, 99).is_ok());
  void *const tensors[] = {buffer(256), buffer(256)};
  const int launches = fake_.kernel_launches;
  const Status launched =
      executor_->enqueue(*stream_, rig_->executable(), other.binding(tensors, {}));
  EXPECT_EQ(launched.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(launched.message().find("generation 99"), std::string::npos) << launched.message();
  EXPECT_EQ(fake_.kernel_launches, launches);
  (void)stream_->synchronize();
}

TEST_F(CudaExecutorTest, ADecodeStepsAttentionSpreadsOverMoreBlocksThanTheGpuHasSms) {
  // One query row, 32 heads of 128 over 4096 positions (8 KV heads): one block per (row, head)
  // would leave most of a 132-SM GPU idle.
  constexpr std::uint64_t kHeads = 32;
  constexpr std::uint64_t kKvHeads = 8;
  constexpr std::uint64_t kHd = 128;
  constexpr std::uint64_t kPositions = 4096;
  CallableBuilder b;
  b.param(f32({kHeads * kHd}))
      .param(f32({kPositions, kKvHeads * kHd}))
      .param(f32({kPositions, kKvHeads * kHd}))
      .param(rrt_tensor_desc_t{RRT_DTYPE_I32, 1, {1}, RRT_DIR_IN, RRT_PARAM_SPACE_ANY})
      .param(f32({kHeads * kHd}, RRT_DIR_OUT));
  b.task(testing::kAttention, {param(0), param(1), param(2), param(3), param(4), imm(1),
                               imm(kHeads), imm(kKvHeads), imm(kHd), imm(kPositions)});
  ASSERT_TRUE(prepare(b.desc()).is_ok());
  const std::size_t cache = kPositions * kKvHeads * kHd * 4;
  void *const tensors[] = {buffer(kHeads * kHd * 4), buffer(cache), buffer(cache), buffer(4),
                           buffer(kHeads * kHd * 4)};
  ASSERT_TRUE(device_->memset(tensors[0], 0, kHeads * kHd * 4).is_ok());
  ASSERT_TRUE(device_->memset(tensors[1], 0, cache).is_ok());
  ASSERT_TRUE(device_->memset(tensors[2], 0, cache).is_ok());
  const std::int32_t pos = 4000;
  write(tensors[3], &pos, 4);
  fake_.clear_launches();
  ASSERT_TRUE(launch(tensors).is_ok());
  ASSERT_TRUE(stream_->synchronize().is_ok());
  const auto launches = fake_.launches();
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].kernel, "attention");
  int sms = 0;
  ASSERT_EQ(fake_.api().device_get_attribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  EXPECT_GE(launches[0].grid.x, static_cast<unsigned>(sms));
  EXPECT_EQ(read(tensors[4], 1)[0], 0.0F) << "the mean of zero values";
}

}  // namespace
}  // namespace replayrt::cuda
