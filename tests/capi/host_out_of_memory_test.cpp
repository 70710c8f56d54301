// The C ABI under host out-of-memory: this program links the replacement of the global operator
// new (support/host_allocation_faults.h), so that while a thread has allocation failure switched
// on every allocation it makes (in the library too) throws std::bad_alloc, or only its nth one
// does. A call that runs out of host memory
// returns the documented code and records its last-error detail without allocating; nothing
// terminates, and nothing the call had done stays behind. The program links the library's
// objects (not the shared library), so that one check can read what a graph holds through its
// handle (capi/handles.h); every call goes through the C ABI.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <replayrt/replayrt.h>
#include <replayrt/replayrt.hpp>

#include <gtest/gtest.h>

#include "abi_queries.h"
#include "capi/handles.h"
#include "platform/allocation_table.h"
#include "support/host_allocation_faults.h"
#include "test_platform.h"

namespace {

using replayrt::testing::HostAllocationCounter;
using replayrt::testing::HostAllocationFails;
using replayrt::testing::last_message;
using replayrt::testing::NthHostAllocationFails;
using replayrt::testing::stats_of;

TEST(HostOutOfMemoryTest, ContextCreateReportsInternalWithoutTerminating) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = replayrt::testing::test_platform();
  rrt_context_t ctx = nullptr;
  const std::uint64_t refused_before = replayrt::testing::refused_host_allocations();
  rrt_status_t status = RRT_OK;
  {
    const HostAllocationFails failing;
    status = rrt_context_create(&options, &ctx);
  }
  EXPECT_EQ(status, RRT_ERR_INTERNAL);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_GT(replayrt::testing::refused_host_allocations(), refused_before);
  rrt_error_detail_t detail{};
  EXPECT_EQ(rrt_last_error(&detail), RRT_ERR_INTERNAL);
  EXPECT_EQ(std::string(detail.message), "rrt_context_create: host out of memory");
}

// Undo paths free under a persistent host out-of-memory, so a device free allocates nothing:
// the allocation table's erase, its quarantine and its evictions included (tested here, in
// the program that can fail every host allocation).
TEST(HostOutOfMemoryTest, AnAllocationTableErasesAndEvictsWithoutAllocating) {
  constexpr std::size_t kEntries = 4096;
  constexpr std::size_t kEntryBytes = 16;
  for (const std::size_t quarantine_bytes : {std::size_t{0}, 4 * kEntryBytes}) {
    SCOPED_TRACE(::testing::Message() << "quarantine of " << quarantine_bytes << " bytes");
    replayrt::AllocationTable table(quarantine_bytes);
    const auto base_of = [](std::size_t i) { return std::uintptr_t{0x100000} + i * 64; };
    for (std::size_t i = 0; i < kEntries; ++i) {
      std::uint64_t generation = 0;
      ASSERT_TRUE(table.insert(base_of(i), kEntryBytes, false, &generation).is_ok());
    }
    std::size_t failed = 0;
    std::size_t evicted = 0;
    {
      const HostAllocationFails failing;
      for (std::size_t i = 0; i < kEntries; ++i) {
        try {
          replayrt::AllocationInfo erased;
          failed += table.erase(base_of(i), &erased).is_ok() ? 0 : 1;
          replayrt::AllocationTable::Evicted released;
          while (table.pop_evicted(&released)) {
            ++evicted;
          }
        } catch (const std::bad_alloc &) {
          ++failed;
        }
      }
    }
    EXPECT_EQ(failed, 0u);
    EXPECT_EQ(table.live_count(), 0u);
    EXPECT_EQ(evicted, kEntries - quarantine_bytes / kEntryBytes);
    EXPECT_EQ(table.quarantined_bytes(), quarantine_bytes);
  }
}

// A caller free under a persistent host out-of-memory, on a context with no stream (so the
// free has no list of streams to make): every free succeeds, those that push earlier frees out
// of the device's quarantine included, since a free that could not list its evictions leaves
// them for a later free. No free reports a failure after its buffer was already forgotten.
TEST(HostOutOfMemoryTest, CallerFreesPastTheQuarantineSucceedWithoutHostMemory) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = replayrt::testing::test_platform();
  rrt_context_t ctx = nullptr;
  ASSERT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  // More than either backend's quarantine holds (64 MiB).
  constexpr std::size_t kBuffers = 80;
  constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  std::vector<void *> buffers(kBuffers, nullptr);
  for (void *&buffer : buffers) {
    ASSERT_EQ(rrt_device_alloc(ctx, kBufferBytes, &buffer), RRT_OK) << last_message();
  }
  std::vector<rrt_status_t> freed(kBuffers, RRT_OK);
  {
    const HostAllocationFails failing;
    for (std::size_t i = 0; i < kBuffers; ++i) {
      freed[i] = rrt_device_free(ctx, buffers[i]);
    }
  }
  for (std::size_t i = 0; i < kBuffers; ++i) {
    EXPECT_EQ(freed[i], RRT_OK) << "free " << i << ": " << last_message();
  }
  void *again = nullptr;
  ASSERT_EQ(rrt_device_alloc(ctx, kBufferBytes, &again), RRT_OK) << last_message();
  EXPECT_EQ(rrt_device_free(ctx, again), RRT_OK) << last_message();
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(HostOutOfMemoryTest, TheLibraryWorksOnceMemoryIsBack) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = replayrt::testing::test_platform();
  rrt_context_t ctx = nullptr;
  {
    const HostAllocationFails failing;
    EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_ERR_INTERNAL);
  }
  ASSERT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

// Whether `status` is what a call that ran out of host memory returns: RRT_ERR_INTERNAL, or on
// CUDA also RRT_ERR_OUT_OF_MEMORY, which is how the CUDA runtime answers a host allocation of its
// own that failed (cudaErrorMemoryAllocation).
bool is_host_out_of_memory(rrt_status_t status) {
  return status == RRT_ERR_INTERNAL ||
         (replayrt::testing::testing_on_cuda() && status == RRT_ERR_OUT_OF_MEMORY);
}

// Synchronizes `stream` after a call that returned `status` outside a capture, and returns what
// it reports beyond the call's own failure. On the simulator a failed enqueue never reached the
// stream. On CUDA a failed call leaves a failure on the stream (the Device contract: it is
// sticky; a launch's says which part of it failed), which one synchronize reports and clears.
rrt_status_t drain_after(rrt_stream_t stream, rrt_status_t status) {
  const rrt_status_t drained = rrt_stream_synchronize(stream);
  if (replayrt::testing::testing_on_cuda() && status != RRT_OK && drained != RRT_OK) {
    return rrt_stream_synchronize(stream);
  }
  return drained;
}

constexpr std::uint64_t kFloats = 64;
constexpr std::uint64_t kBytes = kFloats * sizeof(float);

// out = `factor` * in, computed by `doublings` scale-by-2 tasks into intermediates and an add
// of the input: factor = 2^doublings + 1.
class Doublings {
 public:
  Doublings(rrt_context_t ctx, rrt_bind_strategy_t bind, std::uint32_t doublings) {
    std::int32_t scale = -1;
    std::int32_t add = -1;
    EXPECT_EQ(rrt_kernel_lookup(ctx, "scale", &scale), RRT_OK);
    EXPECT_EQ(rrt_kernel_lookup(ctx, "add", &add), RRT_OK);
    rrt_tensor_desc_t tensor{};
    tensor.dtype = RRT_DTYPE_F32;
    tensor.ndim = 1;
    tensor.shape[0] = kFloats;
    params_[0] = tensor;
    params_[0].direction = RRT_DIR_IN;
    params_[1] = tensor;
    params_[1].direction = RRT_DIR_OUT;
    intermediates_.assign(doublings, tensor);
    operands_.resize(doublings + 1);
    const auto two = static_cast<std::uint32_t>(rrt_scalar_from_f32(2.0F));
    for (std::uint32_t i = 0; i < doublings; ++i) {
      const rrt_operand_t in = i == 0 ? rrt_operand_t{RRT_OPERAND_PARAM, 0}
                                      : rrt_operand_t{RRT_OPERAND_INTERMEDIATE, i - 1};
      operands_[i] = {in, {RRT_OPERAND_INTERMEDIATE, i}, {RRT_OPERAND_IMMEDIATE, two}};
      tasks_.push_back({scale, 3, operands_[i].data()});
    }
    operands_[doublings] = {rrt_operand_t{RRT_OPERAND_INTERMEDIATE, doublings - 1},
                            rrt_operand_t{RRT_OPERAND_PARAM, 0},
                            rrt_operand_t{RRT_OPERAND_PARAM, 1}};
    tasks_.push_back({add, 3, operands_[doublings].data()});
    desc_.struct_size = sizeof desc_;
    desc_.bind = bind;
    desc_.num_params = 2;
    desc_.params = params_;
    desc_.num_intermediates = doublings;
    desc_.intermediates = intermediates_.data();
    desc_.num_tasks = static_cast<std::uint32_t>(tasks_.size());
    desc_.tasks = tasks_.data();
    factor_ = static_cast<float>((1U << doublings) + 1U);
  }
  const rrt_callable_desc_t *desc() const { return &desc_; }
  float factor() const { return factor_; }

 private:
  rrt_tensor_desc_t params_[2]{};
  std::vector<rrt_tensor_desc_t> intermediates_;
  std::vector<std::vector<rrt_operand_t>> operands_;
  std::vector<rrt_task_desc_t> tasks_;
  rrt_callable_desc_t desc_{};
  float factor_ = 0.0F;
};

// A kernel-mode context, profiling on with the collector shape left to the first prepare,
// whose plan kernel-config fit sized for A (two tasks) and B (three). With `initialized`
// false, kernel init is left to the test (`config` holds the fitted config).
struct KernelContext {
  explicit KernelContext(rrt_bind_strategy_t bind, bool initialized = true) {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = replayrt::testing::test_platform();
    options.profiling = 1;
    EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
    a = std::make_unique<Doublings>(ctx, bind, 1);
    b = std::make_unique<Doublings>(ctx, bind, 2);
    const rrt_callable_desc_t *descs[] = {a->desc(), b->desc()};
    config.struct_size = sizeof config;
    EXPECT_EQ(rrt_kernel_config_fit(descs, 2, &config), RRT_OK);
    config.context_generation = 0;
    config.profiling_task_capacity = 0;
    if (initialized) {
      EXPECT_EQ(rrt_kernel_init(ctx, &config), RRT_OK);
    }
    EXPECT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
  }
  ~KernelContext() {
    EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
    EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
  }
  KernelContext(const KernelContext &) = delete;
  KernelContext &operator=(const KernelContext &) = delete;
  KernelContext(KernelContext &&) = delete;
  KernelContext &operator=(KernelContext &&) = delete;

  // B, then A, prepare and compute: everything the plan was fitted for still fits.
  void expect_both_prepare_and_compute() {
    std::int32_t b_id = -1;
    std::int32_t a_id = -1;
    ASSERT_EQ(rrt_callable_prepare(ctx, b->desc(), &b_id), RRT_OK) << last_message();
    ASSERT_EQ(rrt_callable_prepare(ctx, a->desc(), &a_id), RRT_OK) << last_message();
    expect_launch_computes(b_id, b->factor());
    expect_launch_computes(a_id, a->factor());
  }

  // Launches `id` on a ramp and checks out = factor * in.
  void expect_launch_computes(std::int32_t id, float factor) {
    std::vector<float> in(kFloats);
    std::vector<float> out(kFloats, -1.0F);
    for (std::uint64_t i = 0; i < kFloats; ++i) {
      in[i] = static_cast<float>(i);
    }
    const rrt_tensor_arg_t tensors[2] = {{in.data(), kBytes, RRT_SPACE_HOST},
                                         {out.data(), kBytes, RRT_SPACE_HOST}};
    rrt_run_args_t args{};
    args.struct_size = sizeof args;
    args.num_tensors = 2;
    args.tensors = tensors;
    ASSERT_EQ(rrt_kernel_launch(ctx, id, &args, stream), RRT_OK);
    ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
    for (std::uint64_t i = 0; i < kFloats; ++i) {
      EXPECT_EQ(out[i], factor * in[i]) << i;
    }
  }

  rrt_context_t ctx = nullptr;
  rrt_stream_t stream = nullptr;
  rrt_kernel_config_t config{};
  std::unique_ptr<Doublings> a;
  std::unique_ptr<Doublings> b;
};

// The statistics a failed call must leave as they were: live bytes, held allocations, and
// every region's capacity and use.
void expect_unchanged(const rrt_stats_t &before, const rrt_stats_t &after) {
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_EQ(after.device_alloc_calls - after.device_free_calls,
            before.device_alloc_calls - before.device_free_calls);
  for (int point = 0; point < RRT_GROWTH_POINT_COUNT; ++point) {
    EXPECT_EQ(after.regions[point].used_bytes, before.regions[point].used_bytes) << point;
    EXPECT_EQ(after.regions[point].capacity_bytes, before.regions[point].capacity_bytes) << point;
  }
}

// Every host allocation of a kernel-mode prepare of A fails in turn (alone, or with every one
// after it). A failed prepare returns an error, never terminates, and leaves the frozen
// capacity as it was, the collectors' first allocation included: B (larger) and then A
// prepare and compute, as the plan promised.
void sweep_prepare_host_allocations(rrt_bind_strategy_t bind, bool persists) {
  std::uint64_t allocations = 0;
  {
    KernelContext clean(bind);
    const HostAllocationCounter counted;
    std::int32_t id = -1;
    ASSERT_EQ(rrt_callable_prepare(clean.ctx, clean.a->desc(), &id), RRT_OK);
    allocations = counted.count();
  }
  ASSERT_GE(allocations, 4u);
  int failures = 0;
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing host allocation " << n << " of " << allocations);
    KernelContext k(bind);
    const rrt_stats_t before = stats_of(k.ctx);
    std::int32_t id = -1;
    rrt_status_t status = RRT_OK;
    {
      const NthHostAllocationFails failing(n, persists);
      status = rrt_callable_prepare(k.ctx, k.a->desc(), &id);
    }
    if (status == RRT_OK) {
      continue;  // the allocation was one whose failure the call absorbs
    }
    ++failures;
    // Host out of memory, or the simulator's device allocation (host memory too) failing.
    EXPECT_TRUE(status == RRT_ERR_INTERNAL || status == RRT_ERR_OUT_OF_MEMORY) << status;
    expect_unchanged(before, stats_of(k.ctx));
    k.expect_both_prepare_and_compute();
  }
  EXPECT_GE(failures, 4) << "too few host allocations of the prepare could fail";
}

TEST(HostOutOfMemoryTest, AKernelModePrepareThatRunsOutOfHostMemoryKeepsThePlanDeviceBuild) {
  sweep_prepare_host_allocations(RRT_BIND_DEVICE_BUILD, false);
}

TEST(HostOutOfMemoryTest, AKernelModePrepareThatRunsOutOfHostMemoryKeepsThePlanHostBuild) {
  sweep_prepare_host_allocations(RRT_BIND_HOST_BUILD, false);
}

TEST(HostOutOfMemoryTest, PersistentHostOutOfMemoryInAKernelModePrepareDeviceBuild) {
  sweep_prepare_host_allocations(RRT_BIND_DEVICE_BUILD, true);
}

TEST(HostOutOfMemoryTest, PersistentHostOutOfMemoryInAKernelModePrepareHostBuild) {
  sweep_prepare_host_allocations(RRT_BIND_HOST_BUILD, true);
}

// Every host allocation of rrt_kernel_init fails in turn (alone, or with every one after it).
// A failed init returns an error, never terminates, holds no device memory and keeps no claim
// on its context generation; the context then initializes with the same config (the same
// explicit generation when `first_generation` is not 0), and A and B prepare and compute.
void sweep_kernel_init_host_allocations(bool persists, std::uint64_t first_generation) {
  std::uint64_t allocations = 0;
  {
    KernelContext clean(RRT_BIND_DEVICE_BUILD, false);
    const HostAllocationCounter counted;
    ASSERT_EQ(rrt_kernel_init(clean.ctx, &clean.config), RRT_OK);
    allocations = counted.count();
  }
  ASSERT_GE(allocations, 1u);
  int failures = 0;
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing host allocation " << n << " of " << allocations);
    KernelContext k(RRT_BIND_DEVICE_BUILD, false);
    if (first_generation != 0) {
      k.config.context_generation = first_generation + n;
    }
    const rrt_stats_t before = stats_of(k.ctx);
    rrt_status_t status = RRT_OK;
    {
      const NthHostAllocationFails failing(n, persists);
      status = rrt_kernel_init(k.ctx, &k.config);
    }
    if (status == RRT_OK) {
      continue;  // the allocation was one whose failure the call absorbs
    }
    ++failures;
    EXPECT_TRUE(status == RRT_ERR_INTERNAL || status == RRT_ERR_OUT_OF_MEMORY) << status;
    expect_unchanged(before, stats_of(k.ctx));
    ASSERT_EQ(rrt_kernel_init(k.ctx, &k.config), RRT_OK) << last_message();
    k.expect_both_prepare_and_compute();
  }
  EXPECT_GE(failures, 1) << "no host allocation of kernel init could fail";
}

TEST(HostOutOfMemoryTest, AKernelInitThatRunsOutOfHostMemoryHoldsNothingAndCanBeRetried) {
  sweep_kernel_init_host_allocations(false, 0);
  sweep_kernel_init_host_allocations(true, 0);
}

TEST(HostOutOfMemoryTest, AKernelInitThatRunsOutOfHostMemoryKeepsNoClaimOnItsGeneration) {
  sweep_kernel_init_host_allocations(false, 0xab3000);
  sweep_kernel_init_host_allocations(true, 0xab4000);
}

// Host tensors over a ramp for Doublings, and the check of what a run wrote.
struct RampArgs {
  RampArgs() {
    for (std::uint64_t i = 0; i < kFloats; ++i) {
      in[i] = static_cast<float>(i);
    }
    args.struct_size = sizeof args;
    args.num_tensors = 2;
    args.tensors = tensors;
  }
  RampArgs(const RampArgs &) = delete;
  RampArgs &operator=(const RampArgs &) = delete;
  RampArgs(RampArgs &&) = delete;
  RampArgs &operator=(RampArgs &&) = delete;
  void expect_computed(float factor) const {
    for (std::uint64_t i = 0; i < kFloats; ++i) {
      ASSERT_EQ(out[i], factor * in[i]) << i;
    }
  }

  std::vector<float> in = std::vector<float>(kFloats);
  std::vector<float> out = std::vector<float>(kFloats, -1.0F);
  rrt_tensor_arg_t tensors[2] = {{in.data(), kBytes, RRT_SPACE_HOST},
                                 {out.data(), kBytes, RRT_SPACE_HOST}};
  rrt_run_args_t args{};
};

// Every host allocation of a kernel-mode launch fails in turn (alone, or with every one after
// it). A failed launch returns an error and never terminates; nothing published changes; the
// stream runs on, and both callables launch and compute. (Launches inside a capture:
// sweep_captured_launch_host_allocations.)
void sweep_launch_host_allocations(rrt_bind_strategy_t bind, bool persists) {
  std::uint64_t allocations = 0;
  {
    KernelContext clean(bind);
    std::int32_t id = -1;
    ASSERT_EQ(rrt_callable_prepare(clean.ctx, clean.b->desc(), &id), RRT_OK);
    ASSERT_EQ(rrt_callable_prepare(clean.ctx, clean.a->desc(), &id), RRT_OK);
    RampArgs ramp;
    const HostAllocationCounter counted;
    ASSERT_EQ(rrt_kernel_launch(clean.ctx, id, &ramp.args, clean.stream), RRT_OK);
    allocations = counted.count();
    ASSERT_EQ(rrt_stream_synchronize(clean.stream), RRT_OK);
  }
  ASSERT_GE(allocations, 1u);
  int failures = 0;
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing host allocation " << n << " of " << allocations);
    KernelContext k(bind);
    std::int32_t a_id = -1;
    std::int32_t b_id = -1;
    // B first: its task count becomes the collectors' shape.
    ASSERT_EQ(rrt_callable_prepare(k.ctx, k.b->desc(), &b_id), RRT_OK);
    ASSERT_EQ(rrt_callable_prepare(k.ctx, k.a->desc(), &a_id), RRT_OK);
    const rrt_stats_t before = stats_of(k.ctx);
    RampArgs ramp;
    rrt_status_t status = RRT_OK;
    {
      const NthHostAllocationFails failing(n, persists);
      status = rrt_kernel_launch(k.ctx, a_id, &ramp.args, k.stream);
    }
    ASSERT_EQ(drain_after(k.stream, status), RRT_OK) << last_message();
    if (status == RRT_OK) {
      continue;  // the allocation was one whose failure the call absorbs
    }
    ++failures;
    EXPECT_TRUE(is_host_out_of_memory(status)) << status;
    expect_unchanged(before, stats_of(k.ctx));
    k.expect_launch_computes(b_id, k.b->factor());
    k.expect_launch_computes(a_id, k.a->factor());
  }
  EXPECT_GE(failures, 1) << "no host allocation of the launch could fail";
}

TEST(HostOutOfMemoryTest, AKernelLaunchThatRunsOutOfHostMemoryChangesNothingDeviceBuild) {
  sweep_launch_host_allocations(RRT_BIND_DEVICE_BUILD, false);
  sweep_launch_host_allocations(RRT_BIND_DEVICE_BUILD, true);
}

TEST(HostOutOfMemoryTest, AKernelLaunchThatRunsOutOfHostMemoryChangesNothingHostBuild) {
  sweep_launch_host_allocations(RRT_BIND_HOST_BUILD, false);
  sweep_launch_host_allocations(RRT_BIND_HOST_BUILD, true);
}

// Every host allocation of a copy enqueued on a capturing stream fails in turn. Each failed
// copy spoils the capture (end_capture is RRT_ERR_INVALID_STATE and makes no graph), so no
// graph silently lacks it; the stream then captures and replays the copy correctly.
TEST(HostOutOfMemoryTest, ACapturedCopyThatRunsOutOfHostMemorySpoilsTheCapture) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = replayrt::testing::test_platform();
  rrt_context_t ctx = nullptr;
  ASSERT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  void *buffer = nullptr;
  ASSERT_EQ(rrt_device_alloc(ctx, kBytes, &buffer), RRT_OK);
  const std::vector<float> values(kFloats, 3.5F);
  const auto capture_copy = [&](rrt_stream_t stream, std::uint64_t failing, rrt_status_t *copied,
                                rrt_graph_t *graph) {
    ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK) << last_message();
    {
      const NthHostAllocationFails failure(failing, false);
      *copied = rrt_memcpy_h2d(ctx, buffer, values.data(), kBytes, stream);
    }
    *graph = nullptr;
    const rrt_status_t ended = rrt_stream_end_capture(stream, graph);
    if (*copied != RRT_OK) {
      EXPECT_EQ(ended, RRT_ERR_INVALID_STATE) << "a capture kept going without a failed copy";
      EXPECT_EQ(*graph, nullptr);
    }
  };
  std::uint64_t allocations = 0;
  {
    rrt_stream_t stream = nullptr;
    ASSERT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
    ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
    const HostAllocationCounter counted;
    ASSERT_EQ(rrt_memcpy_h2d(ctx, buffer, values.data(), kBytes, stream), RRT_OK);
    allocations = counted.count();
    rrt_graph_t graph = nullptr;
    ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
    EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
    EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
  }
  ASSERT_GE(allocations, 1u);
  int failures = 0;
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing host allocation " << n << " of " << allocations);
    rrt_stream_t stream = nullptr;
    ASSERT_EQ(rrt_stream_create(ctx, &stream), RRT_OK);
    rrt_status_t copied = RRT_OK;
    rrt_graph_t graph = nullptr;
    capture_copy(stream, n, &copied, &graph);
    failures += copied != RRT_OK ? 1 : 0;
    if (graph != nullptr) {
      EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
    }
    capture_copy(stream, 0, &copied, &graph);
    ASSERT_EQ(copied, RRT_OK) << last_message();
    ASSERT_NE(graph, nullptr);
    std::vector<float> zeros(kFloats, 0.0F);
    ASSERT_EQ(rrt_memcpy_h2d(ctx, buffer, zeros.data(), kBytes, nullptr), RRT_OK);
    ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_OK) << last_message();
    ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
    std::vector<float> back(kFloats, 0.0F);
    ASSERT_EQ(rrt_memcpy_d2h(ctx, back.data(), buffer, kBytes, nullptr), RRT_OK);
    EXPECT_EQ(back, values);
    EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
    EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
  }
  EXPECT_GE(failures, 1) << "no host allocation of the captured copy could fail";
  EXPECT_EQ(rrt_device_free(ctx, buffer), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

// Every host allocation of rrt_graph_replay of a captured kernel launch fails in turn (alone,
// or with every one after it). A failed replay returns an error and never terminates; nothing
// published changes; the stream runs on, and the same graph then replays with new inputs and
// computes.
void sweep_replay_host_allocations(rrt_bind_strategy_t bind, bool persists) {
  KernelContext k(bind);
  std::int32_t b_id = -1;
  std::int32_t a_id = -1;
  ASSERT_EQ(rrt_callable_prepare(k.ctx, k.b->desc(), &b_id), RRT_OK);
  ASSERT_EQ(rrt_callable_prepare(k.ctx, k.a->desc(), &a_id), RRT_OK);
  RampArgs ramp;
  ASSERT_EQ(rrt_stream_begin_capture(k.stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(k.ctx, a_id, &ramp.args, k.stream), RRT_OK) << last_message();
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(k.stream, &graph), RRT_OK) << last_message();
  const HostAllocationCounter counted;
  ASSERT_EQ(rrt_graph_replay(graph, k.stream), RRT_OK) << last_message();
  const std::uint64_t allocations = counted.count();
  ASSERT_EQ(rrt_stream_synchronize(k.stream), RRT_OK);
  ASSERT_NO_FATAL_FAILURE(ramp.expect_computed(k.a->factor()));
  int failures = 0;
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing host allocation " << n << " of " << allocations);
    const rrt_stats_t before = stats_of(k.ctx);
    rrt_status_t status = RRT_OK;
    {
      const NthHostAllocationFails failing(n, persists);
      status = rrt_graph_replay(graph, k.stream);
    }
    ASSERT_EQ(drain_after(k.stream, status), RRT_OK) << last_message();
    if (status != RRT_OK) {
      ++failures;
      EXPECT_TRUE(is_host_out_of_memory(status)) << status;
      expect_unchanged(before, stats_of(k.ctx));
    }
    for (std::uint64_t i = 0; i < kFloats; ++i) {
      ramp.in[i] = static_cast<float>(n + i);
    }
    ramp.out.assign(kFloats, -1.0F);
    ASSERT_EQ(rrt_graph_replay(graph, k.stream), RRT_OK) << last_message();
    ASSERT_EQ(rrt_stream_synchronize(k.stream), RRT_OK);
    ASSERT_NO_FATAL_FAILURE(ramp.expect_computed(k.a->factor()));
    k.expect_launch_computes(b_id, k.b->factor());
  }
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_GE(failures, 1) << "no host allocation of the replay could fail (" << allocations
                         << " counted)";
}

TEST(HostOutOfMemoryTest, AGraphReplayThatRunsOutOfHostMemoryChangesNothingDeviceBuild) {
  sweep_replay_host_allocations(RRT_BIND_DEVICE_BUILD, false);
  sweep_replay_host_allocations(RRT_BIND_DEVICE_BUILD, true);
}

TEST(HostOutOfMemoryTest, AGraphReplayThatRunsOutOfHostMemoryChangesNothingHostBuild) {
  sweep_replay_host_allocations(RRT_BIND_HOST_BUILD, false);
  sweep_replay_host_allocations(RRT_BIND_HOST_BUILD, true);
}

// The handles a stream or event call works on besides the context's own stream. Destroyed
// before the context (declare it after the KernelContext).
struct StreamCallHandles {
  StreamCallHandles() = default;
  ~StreamCallHandles() {
    if (graph != nullptr) {
      EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
    }
    for (rrt_event_t e : {event, made_event}) {
      if (e != nullptr) {
        EXPECT_EQ(rrt_event_destroy(e), RRT_OK);
      }
    }
    for (rrt_stream_t s : {other, made_stream}) {
      if (s != nullptr) {
        EXPECT_EQ(rrt_stream_destroy(s), RRT_OK);
      }
    }
  }
  StreamCallHandles(const StreamCallHandles &) = delete;
  StreamCallHandles &operator=(const StreamCallHandles &) = delete;
  StreamCallHandles(StreamCallHandles &&) = delete;
  StreamCallHandles &operator=(StreamCallHandles &&) = delete;

  rrt_event_t event = nullptr;         // made by `setup`
  rrt_stream_t other = nullptr;        // made by `setup`
  rrt_stream_t made_stream = nullptr;  // written only by a successful call
  rrt_event_t made_event = nullptr;    // written only by a successful call
  rrt_graph_t graph = nullptr;         // written only by a successful `finish`
};

// One stream or event call: `setup` makes what it needs, `call` makes the call, `finish` uses
// what a successful call made or began. `setup_again_on_cuda`, when set, is what the call needs
// again after it failed on CUDA past the point where the CUDA capture ends for good (inside
// rrt_stream_end_capture).
struct StreamCall {
  const char *name;
  std::function<void(KernelContext &, StreamCallHandles &)> setup;
  std::function<rrt_status_t(KernelContext &, StreamCallHandles &)> call;
  std::function<void(KernelContext &, StreamCallHandles &)> finish;
  std::function<void(KernelContext &, StreamCallHandles &)> setup_again_on_cuda = {};
};

void no_setup(KernelContext & /*k*/, StreamCallHandles & /*h*/) {}
void no_finish(KernelContext & /*k*/, StreamCallHandles & /*h*/) {}

std::vector<StreamCall> stream_calls() {
  return {
      {"rrt_stream_create", no_setup,
       [](KernelContext &k, StreamCallHandles &h) {
         return rrt_stream_create(k.ctx, &h.made_stream);
       },
       no_finish},
      {"rrt_event_create", no_setup,
       [](KernelContext &k, StreamCallHandles &h) {
         return rrt_event_create(k.ctx, &h.made_event);
       },
       no_finish},
      {"rrt_event_record",
       [](KernelContext &k, StreamCallHandles &h) {
         ASSERT_EQ(rrt_event_create(k.ctx, &h.event), RRT_OK);
       },
       [](KernelContext &k, StreamCallHandles &h) { return rrt_event_record(h.event, k.stream); },
       [](KernelContext & /*k*/, StreamCallHandles &h) {
         EXPECT_EQ(rrt_event_synchronize(h.event), RRT_OK);
       }},
      {"rrt_stream_wait_event",
       [](KernelContext &k, StreamCallHandles &h) {
         ASSERT_EQ(rrt_event_create(k.ctx, &h.event), RRT_OK);
         ASSERT_EQ(rrt_stream_create(k.ctx, &h.other), RRT_OK);
         ASSERT_EQ(rrt_event_record(h.event, k.stream), RRT_OK);
       },
       [](KernelContext & /*k*/, StreamCallHandles &h) {
         return rrt_stream_wait_event(h.other, h.event);
       },
       [](KernelContext & /*k*/, StreamCallHandles &h) {
         EXPECT_EQ(rrt_stream_synchronize(h.other), RRT_OK);
       }},
      {"rrt_stream_end_capture",
       [](KernelContext &k, StreamCallHandles &h) {
         ASSERT_EQ(rrt_event_create(k.ctx, &h.event), RRT_OK);
         ASSERT_EQ(rrt_stream_begin_capture(k.stream), RRT_OK);
         ASSERT_EQ(rrt_event_record(h.event, k.stream), RRT_OK);
       },
       [](KernelContext &k, StreamCallHandles &h) {
         return rrt_stream_end_capture(k.stream, &h.graph);
       },
       [](KernelContext &k, StreamCallHandles &h) {
         EXPECT_EQ(rrt_graph_replay(h.graph, k.stream), RRT_OK) << last_message();
         EXPECT_EQ(rrt_event_synchronize(h.event), RRT_OK) << last_message();
       },
       [](KernelContext &k, StreamCallHandles &h) {
         ASSERT_EQ(rrt_stream_begin_capture(k.stream), RRT_OK) << last_message();
         ASSERT_EQ(rrt_event_record(h.event, k.stream), RRT_OK) << last_message();
       }},
  };
}

// Every host allocation of one stream or event call fails in turn (alone, or with every one
// after it). A failed call returns an error, never terminates, writes no handle and holds no
// device memory; the same call then succeeds, and A and B prepare and compute.
void sweep_stream_call_host_allocations(const StreamCall &c, bool persists) {
  SCOPED_TRACE(c.name);
  std::uint64_t allocations = 0;
  {
    KernelContext clean(RRT_BIND_DEVICE_BUILD);
    StreamCallHandles h;
    c.setup(clean, h);
    const HostAllocationCounter counted;
    ASSERT_EQ(c.call(clean, h), RRT_OK) << last_message();
    allocations = counted.count();
    c.finish(clean, h);
  }
  ASSERT_GE(allocations, 1u) << "the call allocates no host memory: nothing to sweep";
  int failures = 0;
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing host allocation " << n << " of " << allocations);
    KernelContext k(RRT_BIND_DEVICE_BUILD);
    StreamCallHandles h;
    c.setup(k, h);
    const rrt_stats_t before = stats_of(k.ctx);
    rrt_status_t status = RRT_OK;
    {
      const NthHostAllocationFails failing(n, persists);
      status = c.call(k, h);
    }
    if (status == RRT_OK) {
      c.finish(k, h);
      continue;  // the allocation was one whose failure the call absorbs
    }
    ++failures;
    EXPECT_TRUE(is_host_out_of_memory(status)) << last_message();
    EXPECT_EQ(h.made_stream, nullptr) << "a failed call writes no handle";
    EXPECT_EQ(h.made_event, nullptr) << "a failed call writes no handle";
    EXPECT_EQ(h.graph, nullptr) << "a failed call writes no handle";
    expect_unchanged(before, stats_of(k.ctx));
    if (c.setup_again_on_cuda) {
      // The call ends a capture and enqueues nothing. A stream still capturing refuses to
      // synchronize: the failure came before the CUDA capture ended.
      if (replayrt::testing::testing_on_cuda() &&
          rrt_stream_synchronize(k.stream) != RRT_ERR_INVALID_STATE) {
        ASSERT_NO_FATAL_FAILURE(c.setup_again_on_cuda(k, h));
      }
    } else {
      for (rrt_stream_t stream : {k.stream, h.other}) {
        if (stream != nullptr) {
          ASSERT_EQ(drain_after(stream, status), RRT_OK) << last_message();
        }
      }
    }
    ASSERT_EQ(c.call(k, h), RRT_OK) << last_message();
    c.finish(k, h);
    ASSERT_EQ(rrt_stream_synchronize(k.stream), RRT_OK) << last_message();
    k.expect_both_prepare_and_compute();
  }
  EXPECT_GE(failures, 1) << "no host allocation of the call could fail";
}

TEST(HostOutOfMemoryTest, AStreamOrEventCallThatRunsOutOfHostMemoryChangesNothing) {
  for (const StreamCall &c : stream_calls()) {
    sweep_stream_call_host_allocations(c, false);
    sweep_stream_call_host_allocations(c, true);
  }
}

// What a graph holds: the ABI has no call that says, so this reads it through the handle.
std::size_t graph_operations(rrt_graph_t graph) {
  return graph->graph->operation_count();
}

// Every host allocation of an rrt_event_record inside a capture fails in turn (alone, or with
// every one after it). A failed record either spoils the capture (end_capture refuses) or
// leaves nothing of itself in it: the graph the capture becomes holds no operation, and the
// event is not held by it. A record that succeeds is captured and held: the event cannot be
// destroyed while its graph lives.
void sweep_captured_event_record_host_allocations(bool persists) {
  std::uint64_t allocations = 0;
  {
    KernelContext clean(RRT_BIND_DEVICE_BUILD);
    rrt_event_t event = nullptr;
    ASSERT_EQ(rrt_event_create(clean.ctx, &event), RRT_OK);
    ASSERT_EQ(rrt_stream_begin_capture(clean.stream), RRT_OK);
    const HostAllocationCounter counted;
    ASSERT_EQ(rrt_event_record(event, clean.stream), RRT_OK) << last_message();
    allocations = counted.count();
    rrt_graph_t graph = nullptr;
    ASSERT_EQ(rrt_stream_end_capture(clean.stream, &graph), RRT_OK) << last_message();
    EXPECT_EQ(graph_operations(graph), 1u);
    EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
    EXPECT_EQ(rrt_event_destroy(event), RRT_OK);
  }
  ASSERT_GE(allocations, 1u) << "the record allocates no host memory: nothing to sweep";
  int failures = 0;
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing host allocation " << n << " of " << allocations);
    KernelContext k(RRT_BIND_DEVICE_BUILD);
    rrt_event_t event = nullptr;
    ASSERT_EQ(rrt_event_create(k.ctx, &event), RRT_OK);
    ASSERT_EQ(rrt_stream_begin_capture(k.stream), RRT_OK);
    rrt_status_t status = RRT_OK;
    {
      const NthHostAllocationFails failing(n, persists);
      status = rrt_event_record(event, k.stream);
    }
    rrt_graph_t graph = nullptr;
    const rrt_status_t ended = rrt_stream_end_capture(k.stream, &graph);
    if (status == RRT_OK) {
      ASSERT_EQ(ended, RRT_OK) << last_message();
      EXPECT_EQ(graph_operations(graph), 1u);
      EXPECT_EQ(rrt_event_destroy(event), RRT_ERR_INVALID_STATE)
          << "the graph records the event but does not keep it alive";
      EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
      EXPECT_EQ(rrt_event_destroy(event), RRT_OK);
      continue;
    }
    ++failures;
    EXPECT_TRUE(is_host_out_of_memory(status)) << last_message();
    if (ended == RRT_OK) {
      EXPECT_EQ(graph_operations(graph), 0u) << "the failed record was captured";
      EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
    } else {
      EXPECT_EQ(ended, RRT_ERR_INVALID_STATE) << last_message();
      EXPECT_EQ(graph, nullptr);
    }
    EXPECT_EQ(rrt_event_destroy(event), RRT_OK) << "a failed record left a reference behind";
    k.expect_both_prepare_and_compute();
  }
  EXPECT_GE(failures, 1) << "no host allocation of the record could fail";
}

TEST(HostOutOfMemoryTest, ACapturedEventRecordThatRunsOutOfHostMemoryLeavesNothingInTheCapture) {
  sweep_captured_event_record_host_allocations(false);
  sweep_captured_event_record_host_allocations(true);
}

// Every host allocation of a profiled kernel-mode launch inside a capture fails in turn (alone,
// or with every one after it), the first launch the capture holds (its task-record count is
// new). A failed launch either spoils the capture or leaves nothing of itself in it; the
// context then prepares and computes both callables.
void sweep_captured_launch_host_allocations(rrt_bind_strategy_t bind, bool persists) {
  std::uint64_t allocations = 0;
  {
    KernelContext clean(bind);
    std::int32_t b_id = -1;
    std::int32_t id = -1;
    ASSERT_EQ(rrt_callable_prepare(clean.ctx, clean.b->desc(), &b_id), RRT_OK);
    ASSERT_EQ(rrt_callable_prepare(clean.ctx, clean.a->desc(), &id), RRT_OK);
    RampArgs ramp;
    ASSERT_EQ(rrt_stream_begin_capture(clean.stream), RRT_OK);
    const HostAllocationCounter counted;
    ASSERT_EQ(rrt_kernel_launch(clean.ctx, id, &ramp.args, clean.stream), RRT_OK) << last_message();
    allocations = counted.count();
    rrt_graph_t graph = nullptr;
    ASSERT_EQ(rrt_stream_end_capture(clean.stream, &graph), RRT_OK) << last_message();
    EXPECT_GE(graph_operations(graph), 1u);
    EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  }
  ASSERT_GE(allocations, 1u) << "the captured launch allocates no host memory: nothing to sweep";
  int failures = 0;
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing host allocation " << n << " of " << allocations);
    KernelContext k(bind);
    std::int32_t b_id = -1;
    std::int32_t id = -1;
    ASSERT_EQ(rrt_callable_prepare(k.ctx, k.b->desc(), &b_id), RRT_OK);
    ASSERT_EQ(rrt_callable_prepare(k.ctx, k.a->desc(), &id), RRT_OK);
    RampArgs ramp;
    ASSERT_EQ(rrt_stream_begin_capture(k.stream), RRT_OK);
    rrt_status_t status = RRT_OK;
    {
      const NthHostAllocationFails failing(n, persists);
      status = rrt_kernel_launch(k.ctx, id, &ramp.args, k.stream);
    }
    rrt_graph_t graph = nullptr;
    const rrt_status_t ended = rrt_stream_end_capture(k.stream, &graph);
    if (status == RRT_OK) {
      ASSERT_EQ(ended, RRT_OK) << last_message();
      EXPECT_GE(graph_operations(graph), 1u);
      EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
      continue;
    }
    ++failures;
    EXPECT_TRUE(status == RRT_ERR_INTERNAL || status == RRT_ERR_OUT_OF_MEMORY) << status;
    if (ended == RRT_OK) {
      EXPECT_EQ(graph_operations(graph), 0u) << "the failed launch was captured";
      EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
    } else {
      EXPECT_EQ(ended, RRT_ERR_INVALID_STATE) << last_message();
      EXPECT_EQ(graph, nullptr);
    }
    k.expect_launch_computes(b_id, k.b->factor());
    k.expect_launch_computes(id, k.a->factor());
  }
  EXPECT_GE(failures, 1) << "no host allocation of the captured launch could fail";
}

TEST(HostOutOfMemoryTest, ACapturedLaunchThatRunsOutOfHostMemoryLeavesNothingInTheCapture) {
  sweep_captured_launch_host_allocations(RRT_BIND_DEVICE_BUILD, false);
  sweep_captured_launch_host_allocations(RRT_BIND_DEVICE_BUILD, true);
  sweep_captured_launch_host_allocations(RRT_BIND_HOST_BUILD, false);
  sweep_captured_launch_host_allocations(RRT_BIND_HOST_BUILD, true);
}

// A program-mode context with A and B (prepared unless `prepared` is false), before any run.
struct ProgramContext {
  explicit ProgramContext(rrt_bind_strategy_t bind, bool prepared = true) {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = replayrt::testing::test_platform();
    EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
    EXPECT_EQ(rrt_program_init(ctx), RRT_OK);
    a = std::make_unique<Doublings>(ctx, bind, 1);
    b = std::make_unique<Doublings>(ctx, bind, 2);
    if (prepared) {
      prepare_both();
    }
  }
  ~ProgramContext() { EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK); }
  ProgramContext(const ProgramContext &) = delete;
  ProgramContext &operator=(const ProgramContext &) = delete;
  ProgramContext(ProgramContext &&) = delete;
  ProgramContext &operator=(ProgramContext &&) = delete;

  void prepare_both() {
    EXPECT_EQ(rrt_callable_prepare(ctx, a->desc(), &a_id), RRT_OK) << last_message();
    EXPECT_EQ(rrt_callable_prepare(ctx, b->desc(), &b_id), RRT_OK) << last_message();
  }

  rrt_context_t ctx = nullptr;
  std::unique_ptr<Doublings> a;
  std::unique_ptr<Doublings> b;
  std::int32_t a_id = -1;
  std::int32_t b_id = -1;
};

// Every host allocation of a program-mode rrt_callable_prepare fails in turn (alone, or with
// every one after it). A failed prepare returns an error, never terminates, changes no region
// and adds no callable; A and B then prepare, and both run and compute.
void sweep_program_prepare_host_allocations(rrt_bind_strategy_t bind, bool persists) {
  std::uint64_t allocations = 0;
  {
    ProgramContext clean(bind, false);
    const HostAllocationCounter counted;
    std::int32_t id = -1;
    ASSERT_EQ(rrt_callable_prepare(clean.ctx, clean.a->desc(), &id), RRT_OK);
    allocations = counted.count();
  }
  ASSERT_GE(allocations, 1u);
  int failures = 0;
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing host allocation " << n << " of " << allocations);
    ProgramContext p(bind, false);
    const rrt_stats_t before = stats_of(p.ctx);
    std::int32_t id = -1;
    rrt_status_t status = RRT_OK;
    {
      const NthHostAllocationFails failing(n, persists);
      status = rrt_callable_prepare(p.ctx, p.a->desc(), &id);
    }
    if (status == RRT_OK) {
      continue;  // the allocation was one whose failure the call absorbs
    }
    ++failures;
    EXPECT_TRUE(status == RRT_ERR_INTERNAL || status == RRT_ERR_OUT_OF_MEMORY) << status;
    expect_unchanged(before, stats_of(p.ctx));
    ASSERT_NO_FATAL_FAILURE(p.prepare_both());
    EXPECT_EQ(p.a_id, 0) << "the failed prepare kept a callable id";
    EXPECT_EQ(p.b_id, 1);
    RampArgs a_ramp;
    ASSERT_EQ(rrt_run(p.ctx, p.a_id, &a_ramp.args), RRT_OK) << last_message();
    ASSERT_NO_FATAL_FAILURE(a_ramp.expect_computed(p.a->factor()));
    RampArgs b_ramp;
    ASSERT_EQ(rrt_run(p.ctx, p.b_id, &b_ramp.args), RRT_OK) << last_message();
    ASSERT_NO_FATAL_FAILURE(b_ramp.expect_computed(p.b->factor()));
  }
  EXPECT_GE(failures, 1) << "no host allocation of the prepare could fail";
}

TEST(HostOutOfMemoryTest, AProgramModePrepareThatRunsOutOfHostMemoryAddsNothing) {
  for (const rrt_bind_strategy_t bind : {RRT_BIND_DEVICE_BUILD, RRT_BIND_HOST_BUILD}) {
    sweep_program_prepare_host_allocations(bind, false);
    sweep_program_prepare_host_allocations(bind, true);
  }
}

// Every host allocation of a program-mode rrt_run fails in turn (alone, or with every one after
// it), on the first run of the context (which sizes the slot's buffers) and on a later one. A
// failed run returns an error and never terminates, keeps no pipeline slot (A and B then hold
// both slots at once), and both callables then run and compute, more times than there are
// slots. Each region holds what it held before
// or, when the failure came after the run's prepare, what a successful run leaves.
void sweep_run_host_allocations(rrt_bind_strategy_t bind, bool persists, bool first_run) {
  std::uint64_t allocations = 0;
  rrt_stats_t clean_after{};
  {
    ProgramContext clean(bind);
    RampArgs ramp;
    if (!first_run) {
      ASSERT_EQ(rrt_run(clean.ctx, clean.a_id, &ramp.args), RRT_OK);
    }
    const HostAllocationCounter counted;
    ASSERT_EQ(rrt_run(clean.ctx, clean.a_id, &ramp.args), RRT_OK);
    allocations = counted.count();
    clean_after = stats_of(clean.ctx);
  }
  ASSERT_GE(allocations, 1u);
  int failures = 0;
  for (std::uint64_t n = 1; n <= allocations; ++n) {
    SCOPED_TRACE(::testing::Message() << "failing host allocation " << n << " of " << allocations);
    ProgramContext p(bind);
    RampArgs ramp;
    if (!first_run) {
      ASSERT_EQ(rrt_run(p.ctx, p.a_id, &ramp.args), RRT_OK);
    }
    const rrt_stats_t before = stats_of(p.ctx);
    rrt_status_t status = RRT_OK;
    {
      const NthHostAllocationFails failing(n, persists);
      status = rrt_run(p.ctx, p.a_id, &ramp.args);
    }
    if (status == RRT_OK) {
      continue;
    }
    ++failures;
    EXPECT_TRUE(status == RRT_ERR_INTERNAL || status == RRT_ERR_OUT_OF_MEMORY) << status;
    const rrt_stats_t after = stats_of(p.ctx);
    EXPECT_TRUE(after.live_bytes == before.live_bytes || after.live_bytes == clean_after.live_bytes)
        << after.live_bytes;
    for (int point = 0; point < RRT_GROWTH_POINT_COUNT; ++point) {
      const std::uint64_t capacity = after.regions[point].capacity_bytes;
      EXPECT_TRUE(capacity == before.regions[point].capacity_bytes ||
                  capacity == clean_after.regions[point].capacity_bytes)
          << point << ": " << capacity;
    }
    {
      // Both pipeline slots at once: a slot the failed run kept would refuse the second.
      RampArgs a_ramp;
      RampArgs b_ramp;
      rrt_run_t a_run = nullptr;
      rrt_run_t b_run = nullptr;
      ASSERT_EQ(rrt_run_prepare(p.ctx, p.a_id, &a_ramp.args, &a_run), RRT_OK) << last_message();
      ASSERT_EQ(rrt_run_prepare(p.ctx, p.b_id, &b_ramp.args, &b_run), RRT_OK) << last_message();
      ASSERT_EQ(rrt_run_launch(a_run, nullptr), RRT_OK) << last_message();
      ASSERT_EQ(rrt_run_launch(b_run, nullptr), RRT_OK) << last_message();
      EXPECT_EQ(rrt_run_finalize(a_run), RRT_OK) << last_message();
      EXPECT_EQ(rrt_run_finalize(b_run), RRT_OK) << last_message();
      ASSERT_NO_FATAL_FAILURE(a_ramp.expect_computed(p.a->factor()));
      ASSERT_NO_FATAL_FAILURE(b_ramp.expect_computed(p.b->factor()));
    }
    for (int round = 0; round < 3; ++round) {
      RampArgs b_ramp;
      ASSERT_EQ(rrt_run(p.ctx, p.b_id, &b_ramp.args), RRT_OK) << last_message();
      ASSERT_NO_FATAL_FAILURE(b_ramp.expect_computed(p.b->factor()));
      RampArgs a_ramp;
      ASSERT_EQ(rrt_run(p.ctx, p.a_id, &a_ramp.args), RRT_OK) << last_message();
      ASSERT_NO_FATAL_FAILURE(a_ramp.expect_computed(p.a->factor()));
    }
  }
  EXPECT_GE(failures, 1) << "no host allocation of the run could fail";
}

TEST(HostOutOfMemoryTest, AProgramRunThatRunsOutOfHostMemoryKeepsNoSlotDeviceBuild) {
  sweep_run_host_allocations(RRT_BIND_DEVICE_BUILD, false, true);
  sweep_run_host_allocations(RRT_BIND_DEVICE_BUILD, true, true);
  sweep_run_host_allocations(RRT_BIND_DEVICE_BUILD, false, false);
  sweep_run_host_allocations(RRT_BIND_DEVICE_BUILD, true, false);
}

TEST(HostOutOfMemoryTest, AProgramRunThatRunsOutOfHostMemoryKeepsNoSlotHostBuild) {
  sweep_run_host_allocations(RRT_BIND_HOST_BUILD, false, true);
  sweep_run_host_allocations(RRT_BIND_HOST_BUILD, true, true);
  sweep_run_host_allocations(RRT_BIND_HOST_BUILD, false, false);
  sweep_run_host_allocations(RRT_BIND_HOST_BUILD, true, false);
}

rrt::Context program_mode_context() {
  rrt::Context ctx;
  ctx.program_init();
  return ctx;
}

// A C++ stream owner of a program-mode context, capturing one event record.
struct CapturingCppStream {
  CapturingCppStream() {
    stream.begin_capture();
    stream.record(event);
  }
  rrt::Context ctx = program_mode_context();
  rrt::Stream stream = ctx.stream();
  const rrt::Event event = ctx.event();
};

// The C++ API's stream owner (replayrt.hpp) when rrt_stream_end_capture runs out of host
// memory: on the simulator the capture goes on, so the owner still counts itself capturing
// (it notes the events the capture records, and its destructor would end the capture), and a
// later end_capture() makes the graph.
TEST(HostOutOfMemoryTest, TheCppStreamOwnerStillCapturesAfterEndCaptureRanOutOfHostMemory) {
  CapturingCppStream capturing;
  rrt::Stream &stream = capturing.stream;
  const rrt::Event &event = capturing.event;
  rrt::Graph graph;
  int failures = 0;
  for (std::uint64_t n = 1; !graph && n < 256; ++n) {
    try {
      const NthHostAllocationFails failing(n, false);
      graph = stream.end_capture();
    } catch (const rrt::Error &error) {
      ++failures;
      EXPECT_EQ(error.code(), RRT_ERR_INTERNAL) << error.what();
      EXPECT_TRUE(stream.capturing()) << "after failure " << failures;
    }
  }
  ASSERT_TRUE(graph);
  EXPECT_GT(failures, 0);
  EXPECT_FALSE(stream.capturing());
  graph.replay(stream);
  stream.synchronize();
  EXPECT_TRUE(event.query());
}

// A discard whose end of the capture runs out of host memory leaves the capture going (on the
// simulator), so the owner still counts itself capturing: a later discard ends it, and the
// stream captures again.
TEST(HostOutOfMemoryTest, TheCppStreamOwnerStillCapturesAfterDiscardCaptureRanOutOfHostMemory) {
  CapturingCppStream capturing;
  rrt::Stream &stream = capturing.stream;
  const rrt::Event &event = capturing.event;
  int failures = 0;
  for (std::uint64_t n = 1; stream.capturing() && n < 256; ++n) {
    {
      const NthHostAllocationFails failing(n, false);
      stream.discard_capture();
    }
    if (stream.capturing()) {
      ++failures;
    }
  }
  EXPECT_GT(failures, 0);
  ASSERT_FALSE(stream.capturing());
  const rrt::Graph graph = stream.capture([&] { stream.record(event); });
  EXPECT_TRUE(graph);
}

// destroy() of a capturing owner whose end of the capture runs out of host memory throws and
// keeps the stream (a stream cannot be destroyed while it captures); a later destroy() ends
// the capture and destroys it.
TEST(HostOutOfMemoryTest, TheCppStreamOwnerKeepsItsStreamWhenDestroyCannotEndItsCapture) {
  CapturingCppStream capturing;
  rrt::Stream &stream = capturing.stream;
  int failures = 0;
  for (std::uint64_t n = 1; stream.handle() != nullptr && n < 256; ++n) {
    try {
      const NthHostAllocationFails failing(n, false);
      stream.destroy();
    } catch (const rrt::Error &error) {
      ++failures;
      EXPECT_EQ(error.code(), RRT_ERR_INTERNAL) << error.what();
      EXPECT_TRUE(stream.capturing()) << "after failure " << failures;
      EXPECT_NE(stream.handle(), nullptr) << "after failure " << failures;
    }
  }
  EXPECT_GT(failures, 0);
  EXPECT_EQ(stream.handle(), nullptr);
}

}  // namespace
