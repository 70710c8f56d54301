// The host-side task launcher against a fake stream: what it enqueues for an invocation, and
// what it refuses before enqueuing anything.
#include "platform/launch/task_launcher.h"

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "platform/launch/builtin_kernels.h"
#include "platform/launch/invocation_header.h"
#include "platform/launch/task_graph_image.h"
#include "platform/sim/sim_device.h"

namespace replayrt {
namespace {

void *const kNativeHandle = reinterpret_cast<void *>(0x5EED);

// Runs native work at once with kNativeHandle and records what it was given.
class FakeStream final : public Stream {
 public:
  struct Enqueued {
    std::vector<const void *> referenced;
  };
  std::vector<Enqueued> enqueued;
  std::vector<Status> failures;
  bool capturing = false;

  Status enqueue_copy_host_to_device(void *, const void *, std::size_t) override { return ok(); }
  Status enqueue_copy_device_to_host(void *, const void *, std::size_t) override { return ok(); }
  Status enqueue_copy_device_to_device(void *, const void *, std::size_t) override { return ok(); }
  Status enqueue_memset(void *, int, std::size_t) override { return ok(); }
  Status enqueue_launch(const LaunchRequest &) override {
    return Status::error(RRT_ERR_UNSUPPORTED, "fake");
  }
  Status enqueue_native(const NativeWork &work) override {
    enqueued.push_back({{work.referenced.begin(), work.referenced.end()}});
    const int code = work.enqueue(kNativeHandle, work.context);
    return code == 0 ? Status::ok()
                     : Status::error(RRT_ERR_KERNEL_FAILED, "launcher returned nonzero");
  }
  Status record_event(Event &) override { return ok(); }
  Status wait_event(Event &) override { return ok(); }
  Status synchronize() override { return ok(); }
  Status wait_idle() override { return ok(); }
  bool query() const override { return true; }
  Status begin_capture() override { return ok(); }
  Status end_capture(std::unique_ptr<Graph> *) override { return ok(); }
  bool is_capturing() const override { return capturing; }
  void fail_enqueue(const Status &why) override { failures.push_back(why); }
  Status replay(const Graph &) override { return ok(); }

 private:
  static Status ok() { return Status::ok(); }
};

struct Call {
  int kernel;
  void *stream;
  std::vector<void *> tensors;
  std::vector<std::uint64_t> bytes;
  std::vector<std::uint64_t> scalars;
};
std::vector<Call> g_calls;

int record(const rrt_kernel_args_t *args, void *stream, void *user) {
  g_calls.push_back(Call{static_cast<int>(reinterpret_cast<std::intptr_t>(user)),
                         stream,
                         {args->tensors, args->tensors + args->num_tensors},
                         {args->tensor_bytes, args->tensor_bytes + args->num_tensors},
                         {args->scalars, args->scalars + args->num_scalars}});
  return 0;
}

int fail_with_nine(const rrt_kernel_args_t *, void *, void *) {
  return 9;
}

class TaskLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_calls.clear();
    KernelEntry first;
    first.name = "first";
    first.native_launch = &record;
    first.user = reinterpret_cast<void *>(1);
    ASSERT_TRUE(kernels_.add(first, &first_id_).is_ok());
    KernelEntry second = first;
    second.name = "second";
    second.user = reinterpret_cast<void *>(2);
    ASSERT_TRUE(kernels_.add(second, &second_id_).is_ok());
    KernelEntry failing = first;
    failing.name = "failing";
    failing.native_launch = &fail_with_nine;
    ASSERT_TRUE(kernels_.add(failing, &failing_id_).is_ok());
    // A kernel with the built-in add's host check (in a build without CUDA the built-in
    // itself has no native launcher).
    KernelEntry checked = first;
    checked.name = "checked_add";
    checked.check_operands = builtin_operand_check("add");
    ASSERT_TRUE(kernels_.add(checked, &add_id_).is_ok());
    KernelEntry host_only;
    host_only.name = "host_only";
    host_only.sim_host_fn = [](const rrt_kernel_args_t *, void *) { return 0; };
    ASSERT_TRUE(kernels_.add(host_only, &host_only_id_).is_ok());
    tensor_a_ = device_.allocate(256);
    tensor_b_ = device_.allocate(256);
    heap_ = device_.allocate(1024);
  }

  // Writes an image of `tasks` (with their operands and edges) into device memory and an
  // invocation naming it with two tensors and one scalar.
  void build(const std::vector<TaskRecord> &tasks, const std::vector<OperandRecord> &operands,
             const std::vector<std::uint32_t> &successors,
             const std::vector<ViewRecord> &views = {},
             const std::vector<DeviceValueRecord> &device_values = {}) {
    const TaskGraphLayout layout = task_graph_layout(
        tasks.size(), operands.size(), successors.size(), views.size(), device_values.size());
    std::vector<std::byte> image(layout.total);
    TaskGraphHeader header{};
    header.magic = kTaskGraphMagic;
    header.version = kTaskGraphVersion;
    header.callable_id = 3;
    header.num_tasks = static_cast<std::uint32_t>(tasks.size());
    header.generation = 11;
    header.num_params = 2;
    header.num_scalars = 1;
    header.num_operands = static_cast<std::uint32_t>(operands.size());
    header.num_edges = static_cast<std::uint32_t>(successors.size());
    header.image_bytes = layout.total;
    header.tasks_offset = layout.tasks;
    header.operands_offset = layout.operands;
    header.successors_offset = layout.successors;
    header.num_views = static_cast<std::uint32_t>(views.size());
    header.num_device_values = static_cast<std::uint32_t>(device_values.size());
    header.views_offset = layout.views;
    header.device_values_offset = layout.device_values;
    std::memcpy(image.data(), &header, sizeof header);
    const auto place = [&image](std::size_t offset, const auto &records) {
      if (!records.empty()) {
        std::memcpy(image.data() + offset, records.data(),
                    records.size() * sizeof(records.front()));
      }
    };
    place(layout.views, views);
    place(layout.device_values, device_values);
    place(layout.tasks, tasks);
    place(layout.operands, operands);
    place(layout.successors, successors);
    image_ = device_.allocate(image.size());
    ASSERT_TRUE(device_.copy_host_to_device(image_, image.data(), image.size()).is_ok());

    InvocationHeader invocation{};
    invocation.callable_id = 3;
    invocation.generation = 11;
    invocation.tensor_count = 2;
    invocation.scalar_count = 1;
    invocation.payload_bytes = invocation_bytes(2, 1) - sizeof(InvocationHeader);
    invocation_.assign(invocation_bytes(2, 1) / 8, 0);
    std::memcpy(invocation_.data(), &invocation, sizeof invocation);
    std::uint64_t *payload = invocation_.data() + sizeof(InvocationHeader) / 8;
    payload[0] = reinterpret_cast<std::uint64_t>(image_);
    payload[3] = reinterpret_cast<std::uint64_t>(tensor_a_);
    payload[4] = reinterpret_cast<std::uint64_t>(tensor_b_);
    payload[5] = 256;
    payload[6] = 128;
    payload[7] = 42;
  }

  std::span<const std::byte> invocation() const {
    return {reinterpret_cast<const std::byte *>(invocation_.data()), invocation_.size() * 8};
  }

  // Two tasks: first(tensor 0, the heap intermediate; scalar 0) then second(tensor 1; 7).
  void build_chain(std::int32_t first_kernel, std::int32_t second_kernel) {
    const auto heap = reinterpret_cast<std::uint64_t>(heap_) + 64;
    build({TaskRecord{first_kernel, 0, 2, 1, 0, 1, 0, 0},
           TaskRecord{second_kernel, 3, 1, 1, 1, 0, 1, 0}},
          {OperandRecord{0, 0, 0, 0}, OperandRecord{1, 0, heap, 32}, OperandRecord{2, 0, 0, 0},
           OperandRecord{0, 1, 0, 0}, OperandRecord{3, 0, 7, 0}},
          {1});
  }

  sim::SimDevice device_;
  KernelRegistry kernels_;
  std::int32_t add_id_ = -1;
  std::int32_t first_id_ = -1;
  std::int32_t second_id_ = -1;
  std::int32_t failing_id_ = -1;
  std::int32_t host_only_id_ = -1;
  void *tensor_a_ = nullptr;
  void *tensor_b_ = nullptr;
  void *heap_ = nullptr;
  void *image_ = nullptr;
  std::vector<std::uint64_t> invocation_;
};

TEST_F(TaskLauncherTest, AFixedViewResolvesToItsPartOfItsBase) {
  ViewRecord view{};
  view.source = static_cast<std::uint32_t>(ImageTensorSource::kParam);
  view.index = 0;
  view.byte_offset = 64;
  view.bytes = 128;
  view.offset_value = -1;
  build({TaskRecord{first_id_, 0, 1, 0, 0, 0, 0, 0}},
        {OperandRecord{static_cast<std::uint32_t>(ImageOperandKind::kView), 0, 0, 128}}, {},
        {view});
  TaskLauncher launcher(device_, kernels_);
  FakeStream stream;
  ASSERT_TRUE(launcher.enqueue(stream, invocation(), {}).is_ok());
  ASSERT_EQ(g_calls.size(), 1U);
  EXPECT_EQ(g_calls[0].tensors, (std::vector<void *>{static_cast<std::byte *>(tensor_a_) + 64}));
  EXPECT_EQ(g_calls[0].bytes, (std::vector<std::uint64_t>{128}));
}

TEST_F(TaskLauncherTest, ADeviceValueIsUnsupportedAndNothingIsEnqueued) {
  DeviceValueRecord value{};
  value.source = static_cast<std::uint32_t>(ImageTensorSource::kParam);
  value.index = 1;
  value.dtype = RRT_DTYPE_I32;
  build({TaskRecord{first_id_, 0, 1, 0, 0, 0, 0, 0}, TaskRecord{second_id_, 1, 0, 1, 0, 0, 0, 0}},
        {OperandRecord{0, 0, 0, 0},
         OperandRecord{static_cast<std::uint32_t>(ImageOperandKind::kDeviceValue), 0, 0, 0}},
        {}, {}, {value});
  TaskLauncher launcher(device_, kernels_);
  FakeStream stream;
  const Status status = launcher.enqueue(stream, invocation(), {});
  EXPECT_EQ(status.code(), RRT_ERR_UNSUPPORTED);
  EXPECT_NE(status.message().find("task 1 (kernel 'second') reads a device value"),
            std::string::npos)
      << status.message();
  EXPECT_TRUE(g_calls.empty());
  EXPECT_TRUE(stream.enqueued.empty());
  ASSERT_EQ(stream.failures.size(), 1U);
  EXPECT_EQ(stream.failures[0].code(), RRT_ERR_UNSUPPORTED);
}

TEST_F(TaskLauncherTest, EachTaskIsOneNativeCallInProgramOrderWithItsResolvedOperands) {
  build_chain(first_id_, second_id_);
  TaskLauncher launcher(device_, kernels_);
  FakeStream stream;
  const void *const launch_referenced[] = {image_, heap_};
  ASSERT_TRUE(launcher.enqueue(stream, invocation(), launch_referenced).is_ok());
  ASSERT_EQ(g_calls.size(), 2U);
  EXPECT_EQ(g_calls[0].kernel, 1);
  EXPECT_EQ(g_calls[1].kernel, 2);
  EXPECT_EQ(g_calls[0].stream, kNativeHandle);
  EXPECT_EQ(g_calls[0].tensors,
            (std::vector<void *>{tensor_a_, static_cast<std::byte *>(heap_) + 64}));
  EXPECT_EQ(g_calls[0].bytes, (std::vector<std::uint64_t>{256, 32}));
  EXPECT_EQ(g_calls[0].scalars, std::vector<std::uint64_t>{42});
  EXPECT_EQ(g_calls[1].tensors, std::vector<void *>{tensor_b_});
  EXPECT_EQ(g_calls[1].bytes, std::vector<std::uint64_t>{128});
  EXPECT_EQ(g_calls[1].scalars, std::vector<std::uint64_t>{7});

  ASSERT_EQ(stream.enqueued.size(), 2U);
  EXPECT_EQ(
      stream.enqueued[0].referenced,
      (std::vector<const void *>{image_, heap_, tensor_a_, static_cast<std::byte *>(heap_) + 64}))
      << "the first task also carries the launch's addresses";
  EXPECT_EQ(stream.enqueued[1].referenced, std::vector<const void *>{tensor_b_});
  EXPECT_TRUE(stream.failures.empty());
}

TEST_F(TaskLauncherTest, ASteadyStateLaunchCallsNoDeviceAllocator) {
  build_chain(first_id_, second_id_);
  TaskLauncher launcher(device_, kernels_);
  FakeStream stream;
  ASSERT_TRUE(launcher.enqueue(stream, invocation(), {}).is_ok());
  const MemoryCounters before = device_.memory_counters();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(launcher.enqueue(stream, invocation(), {}).is_ok());
  }
  const MemoryCounters after = device_.memory_counters();
  EXPECT_EQ(after.allocation_calls, before.allocation_calls);
  EXPECT_EQ(after.free_calls, before.free_calls);
  EXPECT_EQ(g_calls.size(), 22U);
}

TEST_F(TaskLauncherTest, ABuiltinFailingItsHostCheckEnqueuesNoTaskAtAll) {
  // add's check with one tensor fails check 1 (it needs 3).
  build_chain(first_id_, add_id_);
  TaskLauncher launcher(device_, kernels_);
  FakeStream stream;
  const Status status = launcher.enqueue(stream, invocation(), {});
  EXPECT_EQ(status.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(status.message().find("task 1 (kernel 'checked_add') failed with code 1"),
            std::string::npos)
      << status.message();
  EXPECT_TRUE(stream.enqueued.empty()) << "validation runs before the first enqueue";
  ASSERT_EQ(stream.failures.size(), 1U) << "the stream learns of the refusal";
}

TEST_F(TaskLauncherTest, ALauncherFailureStopsTheExpansionAndIsHandedToTheStream) {
  build_chain(failing_id_, second_id_);
  TaskLauncher launcher(device_, kernels_);
  FakeStream stream;
  stream.capturing = true;
  const Status status = launcher.enqueue(stream, invocation(), {});
  EXPECT_EQ(status.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(status.message().find("task 0 (kernel 'failing')"), std::string::npos)
      << status.message();
  EXPECT_EQ(stream.enqueued.size(), 1U);
  EXPECT_TRUE(g_calls.empty());
  EXPECT_EQ(stream.failures.size(), 1U);
}

TEST_F(TaskLauncherTest, AKernelWithoutANativeLauncherIsRefused) {
  build_chain(first_id_, host_only_id_);
  TaskLauncher launcher(device_, kernels_);
  FakeStream stream;
  const Status status = launcher.enqueue(stream, invocation(), {});
  EXPECT_EQ(status.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(status.message().find("has no sim launcher"), std::string::npos) << status.message();
  EXPECT_TRUE(stream.enqueued.empty());
}

TEST_F(TaskLauncherTest, AnEdgeAgainstProgramOrderIsRefused) {
  build({TaskRecord{first_id_, 0, 1, 0, 0, 1, 1, 0}, TaskRecord{second_id_, 0, 1, 0, 1, 1, 1, 0}},
        {OperandRecord{0, 0, 0, 0}}, {1, 0});
  TaskLauncher launcher(device_, kernels_);
  FakeStream stream;
  const Status status = launcher.enqueue(stream, invocation(), {});
  EXPECT_EQ(status.code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_NE(status.message().find("not a topological order"), std::string::npos)
      << status.message();
  EXPECT_TRUE(stream.enqueued.empty());
}

TEST_F(TaskLauncherTest, AFreedImageIsRefused) {
  build_chain(first_id_, second_id_);
  ASSERT_TRUE(device_.free(image_).is_ok());
  TaskLauncher launcher(device_, kernels_);
  FakeStream stream;
  EXPECT_EQ(launcher.enqueue(stream, invocation(), {}).code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_TRUE(stream.enqueued.empty());
}

TEST_F(TaskLauncherTest, AnOperandOutsideTheImageIsRefused) {
  build({TaskRecord{first_id_, 0, 3, 0, 0, 0, 0, 0}}, {OperandRecord{0, 0, 0, 0}}, {});
  TaskLauncher launcher(device_, kernels_);
  FakeStream stream;
  EXPECT_EQ(launcher.enqueue(stream, invocation(), {}).code(), RRT_ERR_KERNEL_FAILED);
  EXPECT_TRUE(stream.enqueued.empty());
}

}  // namespace
}  // namespace replayrt
