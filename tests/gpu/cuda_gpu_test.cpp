// The CUDA backend on a real GPU, through the public C ABI (ctest label gpu). Without a usable
// device every test skips with the reason, or fails when REPLAYRT_REQUIRE_GPU=1. The
// reference for numerics is the same callable run on a simulator context (the CPU kernels).
// The same file is built against the fake CUDA platform (cuda_gpu_fake_test, label
// no_hardware), where everything but the device code runs.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "capi/abi_queries.h"
#include "hidden_pointer_kernel.h"
#include "support/gpu_skip.h"

namespace {

using replayrt::testing::last_message;

rrt_context_t make_context(rrt_platform_t platform) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = platform;
  rrt_context_t ctx = nullptr;
  const rrt_status_t status = rrt_context_create(&options, &ctx);
  return status == RRT_OK ? ctx : nullptr;
}

std::int32_t kernel(rrt_context_t ctx, const char *name) {
  std::int32_t id = -1;
  EXPECT_EQ(rrt_kernel_lookup(ctx, name, &id), RRT_OK) << name;
  return id;
}

// One task of built-in `name` over params [0, tensors) with immediates `scalars`.
struct SingleTask {
  SingleTask(rrt_context_t ctx, const char *name, const std::vector<std::uint64_t> &param_floats,
             const std::vector<std::uint32_t> &scalars, rrt_bind_strategy_t bind) {
    for (std::size_t i = 0; i < param_floats.size(); ++i) {
      rrt_tensor_desc_t desc{};
      desc.dtype = RRT_DTYPE_F32;
      desc.ndim = 1;
      desc.shape[0] = param_floats[i];
      desc.direction = i + 1 == param_floats.size() ? RRT_DIR_OUT : RRT_DIR_IN;
      params.push_back(desc);
      operands.push_back({RRT_OPERAND_PARAM, static_cast<std::uint32_t>(i)});
    }
    for (std::uint32_t s : scalars) {
      operands.push_back({RRT_OPERAND_IMMEDIATE, s});
    }
    task = {kernel(ctx, name), static_cast<std::uint32_t>(operands.size()), operands.data()};
    desc.struct_size = sizeof desc;
    desc.bind = bind;
    desc.num_params = static_cast<std::uint32_t>(params.size());
    desc.params = params.data();
    desc.num_tasks = 1;
    desc.tasks = &task;
  }
  std::vector<rrt_tensor_desc_t> params;
  std::vector<rrt_operand_t> operands;
  rrt_task_desc_t task{};
  rrt_callable_desc_t desc{};
};

class CudaGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = make_context(RRT_PLATFORM_CUDA);
    if (ctx_ == nullptr) {
      const std::string why = last_message();
      if (replayrt::testing_support::gpu_required()) {
        FAIL() << "REPLAYRT_REQUIRE_GPU=1 but no CUDA context: " << why;
      }
      GTEST_SKIP() << "no usable CUDA device: " << why;
    }
    ASSERT_EQ(rrt_stream_create(ctx_, &stream_), RRT_OK);
  }
  void TearDown() override {
    if (ctx_ == nullptr) {
      return;
    }
    for (rrt_graph_t graph : graphs_) {
      EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
    }
    EXPECT_EQ(rrt_stream_destroy(stream_), RRT_OK);
    for (void *buffer : buffers_) {
      (void)rrt_device_free(ctx_, buffer);
    }
    EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK);
  }

  void kernel_init(const rrt_callable_desc_t &desc) {
    rrt_kernel_config_t config{};
    config.struct_size = sizeof config;
    config.context_generation = 0;  // the runtime picks a process-unique one
    ASSERT_EQ(rrt_capacity_plan_fit(&desc, &config.capacity), RRT_OK) << last_message();
    ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
  }

  void *buffer(std::size_t floats) {
    void *ptr = nullptr;
    EXPECT_EQ(rrt_device_alloc(ctx_, floats * sizeof(float), &ptr), RRT_OK) << last_message();
    buffers_.push_back(ptr);
    return ptr;
  }

  void write(void *device, const std::vector<float> &host) {
    ASSERT_EQ(rrt_memcpy_h2d(ctx_, device, host.data(), host.size() * 4, nullptr), RRT_OK);
  }
  std::vector<float> read(const void *device, std::size_t floats) {
    std::vector<float> host(floats);
    EXPECT_EQ(rrt_memcpy_d2h(ctx_, host.data(), device, floats * 4, nullptr), RRT_OK);
    return host;
  }

  rrt_stats_t stats() {
    rrt_stats_t out{};
    out.struct_size = sizeof out;
    EXPECT_EQ(rrt_context_stats(ctx_, &out), RRT_OK);
    return out;
  }

  rrt_context_t ctx_ = nullptr;
  rrt_stream_t stream_ = nullptr;
  std::vector<rrt_graph_t> graphs_;
  std::vector<void *> buffers_;
};

rrt_run_args_t args_of(const std::vector<rrt_tensor_arg_t> &tensors) {
  rrt_run_args_t args{};
  args.struct_size = sizeof args;
  args.num_tensors = static_cast<std::uint32_t>(tensors.size());
  args.tensors = tensors.data();
  return args;
}

TEST_F(CudaGpuTest, HostFunctionKernelsAreUnsupportedOnCuda) {
  std::int32_t id = -1;
  EXPECT_EQ(rrt_kernel_register(
                ctx_, "host", [](const rrt_kernel_args_t *, void *) { return 0; }, nullptr, &id),
            RRT_ERR_UNSUPPORTED);
  void *handle = nullptr;
  EXPECT_EQ(rrt_stream_native_handle(stream_, &handle), RRT_OK);
  EXPECT_NE(handle, nullptr);
}

// Kernel mode, both binds: capture one launch, replay it with new input data, and no replay
// calls the allocator.
void capture_and_replay(CudaGpuTest *test, rrt_context_t ctx, rrt_stream_t stream,
                        rrt_bind_strategy_t bind) {
  (void)test;
  constexpr std::uint64_t kN = 4096;
  SingleTask scale(ctx, "scale", {kN, kN}, {static_cast<std::uint32_t>(rrt_scalar_from_f32(3.0F))},
                   bind);
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = 0;  // the runtime picks a process-unique one
  ASSERT_EQ(rrt_capacity_plan_fit(&scale.desc, &config.capacity), RRT_OK) << last_message();
  ASSERT_EQ(rrt_kernel_init(ctx, &config), RRT_OK) << last_message();
  std::int32_t callable = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, &scale.desc, &callable), RRT_OK) << last_message();
  void *in = nullptr;
  void *out = nullptr;
  ASSERT_EQ(rrt_device_alloc(ctx, kN * 4, &in), RRT_OK);
  ASSERT_EQ(rrt_device_alloc(ctx, kN * 4, &out), RRT_OK);
  const std::vector<rrt_tensor_arg_t> tensors = {{in, kN * 4, RRT_SPACE_DEVICE},
                                                 {out, kN * 4, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = args_of(tensors);
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx, callable, &args, stream), RRT_OK) << last_message();
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK) << last_message();
  rrt_stats_t before{};
  before.struct_size = sizeof before;
  ASSERT_EQ(rrt_context_stats(ctx, &before), RRT_OK);
  for (int replay = 0; replay < 3; ++replay) {
    std::vector<float> host(kN, static_cast<float>(replay + 1));
    ASSERT_EQ(rrt_memcpy_h2d(ctx, in, host.data(), kN * 4, nullptr), RRT_OK);
    ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_OK) << last_message();
    ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK) << last_message();
    std::vector<float> result(kN);
    ASSERT_EQ(rrt_memcpy_d2h(ctx, result.data(), out, kN * 4, nullptr), RRT_OK);
    EXPECT_EQ(result[0], 3.0F * static_cast<float>(replay + 1));
    EXPECT_EQ(result[kN - 1], 3.0F * static_cast<float>(replay + 1));
  }
  rrt_stats_t after{};
  after.struct_size = sizeof after;
  ASSERT_EQ(rrt_context_stats(ctx, &after), RRT_OK);
  EXPECT_EQ(after.device_alloc_calls, before.device_alloc_calls) << "0 allocator calls per replay";
  EXPECT_EQ(after.device_free_calls, before.device_free_calls);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_device_free(ctx, in), RRT_OK);
  EXPECT_EQ(rrt_device_free(ctx, out), RRT_OK);
}

TEST_F(CudaGpuTest, DeviceBuildCaptureReplaysWithNewDataAndNoAllocation) {
  capture_and_replay(this, ctx_, stream_, RRT_BIND_DEVICE_BUILD);
}

TEST_F(CudaGpuTest, HostBuildCaptureReplaysWithNewDataAndNoAllocation) {
  capture_and_replay(this, ctx_, stream_, RRT_BIND_HOST_BUILD);
}

TEST_F(CudaGpuTest, ReplayAfterAFreeIsStaleAndSoIsANewAllocationAtTheSameBase) {
  constexpr std::uint64_t kN = 256;
  SingleTask fill(ctx_, "fill", {kN}, {static_cast<std::uint32_t>(rrt_scalar_from_f32(5.0F))},
                  RRT_BIND_DEVICE_BUILD);
  kernel_init(fill.desc);
  std::int32_t callable = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &fill.desc, &callable), RRT_OK) << last_message();
  void *out = nullptr;
  ASSERT_EQ(rrt_device_alloc(ctx_, kN * 4, &out), RRT_OK);
  const std::vector<rrt_tensor_arg_t> tensors = {{out, kN * 4, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = args_of(tensors);
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, callable, &args, stream_), RRT_OK) << last_message();
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK) << last_message();
  graphs_.push_back(graph);
  ASSERT_EQ(rrt_graph_replay(graph, stream_), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  ASSERT_EQ(rrt_device_free(ctx_, out), RRT_OK);
  EXPECT_EQ(rrt_graph_replay(graph, stream_), RRT_ERR_STALE_ADDRESS);
  // Whether cudaMalloc hands the base out again is up to CUDA; try a few times.
  void *reused = nullptr;
  for (int i = 0; i < 64 && reused == nullptr; ++i) {
    void *candidate = buffer(kN);
    if (candidate == out) {
      reused = candidate;
    }
  }
  EXPECT_EQ(rrt_graph_replay(graph, stream_), RRT_ERR_STALE_ADDRESS)
      << (reused != nullptr ? "ABA: same base, new allocation" : "base not reused");
  EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
}

TEST_F(CudaGpuTest, HostStagingIsCapturedAndReplayedWithNewHostData) {
  constexpr std::uint64_t kN = 1024;
  SingleTask copy(ctx_, "copy", {kN, kN}, {}, RRT_BIND_DEVICE_BUILD);
  kernel_init(copy.desc);
  std::int32_t callable = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &copy.desc, &callable), RRT_OK) << last_message();
  std::vector<float> in(kN, 1.0F);
  std::vector<float> out(kN, 0.0F);
  const std::vector<rrt_tensor_arg_t> tensors = {{in.data(), kN * 4, RRT_SPACE_HOST},
                                                 {out.data(), kN * 4, RRT_SPACE_HOST}};
  const rrt_run_args_t args = args_of(tensors);
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, callable, &args, stream_), RRT_OK) << last_message();
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK) << last_message();
  graphs_.push_back(graph);
  for (float value : {2.0F, -7.5F}) {
    std::fill(in.begin(), in.end(), value);
    ASSERT_EQ(rrt_graph_replay(graph, stream_), RRT_OK) << last_message();
    ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
    EXPECT_EQ(out[0], value);
    EXPECT_EQ(out[kN - 1], value);
  }
}

TEST_F(CudaGpuTest, EventsInGraphsOrderReplaysOnAnotherStreamAndInterleavedGraphs) {
  constexpr std::uint64_t kN = 1 << 20;
  SingleTask add(ctx_, "add", {kN, kN, kN}, {}, RRT_BIND_DEVICE_BUILD);
  SingleTask scale(ctx_, "scale", {kN, kN}, {static_cast<std::uint32_t>(rrt_scalar_from_f32(2.0F))},
                   RRT_BIND_DEVICE_BUILD);
  // Kernel mode holds both images side by side.
  const rrt_callable_desc_t *both[] = {&add.desc, &scale.desc};
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = 0;  // the runtime picks a process-unique one
  ASSERT_EQ(rrt_capacity_plan_fit_all(both, 2, &config.capacity), RRT_OK) << last_message();
  ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
  std::int32_t add_id = -1;
  std::int32_t scale_id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &add.desc, &add_id), RRT_OK) << last_message();
  ASSERT_EQ(rrt_callable_prepare(ctx_, &scale.desc, &scale_id), RRT_OK) << last_message();
  void *x = buffer(kN);
  void *y = buffer(kN);
  write(x, std::vector<float>(kN, 1.0F));
  write(y, std::vector<float>(kN, 0.0F));
  rrt_stream_t other = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &other), RRT_OK);
  rrt_event_t done = nullptr;
  ASSERT_EQ(rrt_event_create(ctx_, &done), RRT_OK);
  // Graph A: y = x + x, then record `done`. Graph B: wait on `done`, then y = y * 2.
  const std::vector<rrt_tensor_arg_t> add_tensors = {
      {x, kN * 4, RRT_SPACE_DEVICE}, {x, kN * 4, RRT_SPACE_DEVICE}, {y, kN * 4, RRT_SPACE_DEVICE}};
  const std::vector<rrt_tensor_arg_t> scale_tensors = {{y, kN * 4, RRT_SPACE_DEVICE},
                                                       {y, kN * 4, RRT_SPACE_DEVICE}};
  const rrt_run_args_t add_args = args_of(add_tensors);
  const rrt_run_args_t scale_args = args_of(scale_tensors);
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, add_id, &add_args, stream_), RRT_OK) << last_message();
  ASSERT_EQ(rrt_event_record(done, stream_), RRT_OK) << last_message();
  rrt_graph_t a = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream_, &a), RRT_OK) << last_message();
  ASSERT_EQ(rrt_stream_begin_capture(other), RRT_OK);
  ASSERT_EQ(rrt_stream_wait_event(other, done), RRT_OK) << last_message();
  ASSERT_EQ(rrt_kernel_launch(ctx_, scale_id, &scale_args, other), RRT_OK) << last_message();
  rrt_graph_t b = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(other, &b), RRT_OK) << last_message();
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(rrt_graph_replay(a, stream_), RRT_OK) << last_message();
    ASSERT_EQ(rrt_graph_replay(b, other), RRT_OK) << last_message();
  }
  ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(other), RRT_OK);
  const std::vector<float> result = read(y, kN);
  EXPECT_EQ(result[0], 4.0F) << "B waited for A's record in each round";
  EXPECT_EQ(result[kN - 1], 4.0F);
  // A replayed on the other stream.
  ASSERT_EQ(rrt_graph_replay(a, other), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(other), RRT_OK);
  EXPECT_EQ(read(y, 1)[0], 2.0F);
  EXPECT_EQ(rrt_graph_destroy(a), RRT_OK);
  EXPECT_EQ(rrt_graph_destroy(b), RRT_OK);
  EXPECT_EQ(rrt_event_destroy(done), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(other), RRT_OK);
}

TEST_F(CudaGpuTest, ALauncherHidingAPointerInAByValueStructIsCaughtByTheAudit) {
  constexpr std::uint64_t kN = 512;
  void *hidden = buffer(kN);
  write(hidden, std::vector<float>(kN, 1.5F));
  std::int32_t kernel_id = -1;
  ASSERT_EQ(
      rrt_kernel_register_native(ctx_, "hidden_add", &hidden_pointer_launcher, hidden, &kernel_id),
      RRT_OK)
      << last_message();
  rrt_tensor_desc_t param{};
  param.dtype = RRT_DTYPE_F32;
  param.ndim = 1;
  param.shape[0] = kN;
  param.direction = RRT_DIR_INOUT;
  const rrt_operand_t operand{RRT_OPERAND_PARAM, 0};
  const rrt_task_desc_t task{kernel_id, 1, &operand};
  rrt_callable_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.bind = RRT_BIND_DEVICE_BUILD;
  desc.num_params = 1;
  desc.params = &param;
  desc.num_tasks = 1;
  desc.tasks = &task;
  kernel_init(desc);
  std::int32_t callable = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &desc, &callable), RRT_OK) << last_message();
  void *data = buffer(kN);
  write(data, std::vector<float>(kN, 1.0F));
  // The launcher contract: load a kernel's module before the first capture that launches it.
  ASSERT_EQ(warm_hidden_pointer_kernel(), 0);
  const std::vector<rrt_tensor_arg_t> tensors = {{data, kN * 4, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = args_of(tensors);
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, callable, &args, stream_), RRT_OK) << last_message();
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK) << last_message();
  graphs_.push_back(graph);
  ASSERT_EQ(rrt_graph_replay(graph, stream_), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  EXPECT_EQ(read(data, 1)[0], 2.5F);
  std::erase(buffers_, hidden);
  ASSERT_EQ(rrt_device_free(ctx_, hidden), RRT_OK);
  EXPECT_EQ(rrt_graph_replay(graph, stream_), RRT_ERR_STALE_ADDRESS)
      << "the audit recorded the undeclared pointer; " << last_message();
}

// Built-in numerics against the simulator's CPU kernels on the same random inputs: fill,
// copy, add, mul, scale and matmul bit for bit, the others within a relative error of 1e-6.
struct NumericsCase {
  const char *name;
  std::vector<std::uint64_t> floats;  // per tensor, the output last
  std::vector<std::uint32_t> scalars;
  bool exact;
};

std::vector<float> run_on(rrt_platform_t platform, const NumericsCase &c,
                          const std::vector<std::vector<float>> &inputs, std::string *error) {
  rrt_context_t ctx = make_context(platform);
  if (ctx == nullptr) {
    *error = last_message();
    return {};
  }
  EXPECT_EQ(rrt_program_init(ctx), RRT_OK);
  SingleTask task(ctx, c.name, c.floats, c.scalars, RRT_BIND_DEVICE_BUILD);
  std::int32_t callable = -1;
  EXPECT_EQ(rrt_callable_prepare(ctx, &task.desc, &callable), RRT_OK) << last_message();
  std::vector<std::vector<float>> host = inputs;
  host.emplace_back(c.floats.back(), std::nanf(""));  // a poisoned output
  std::vector<rrt_tensor_arg_t> tensors;
  for (auto &tensor : host) {
    tensors.push_back({tensor.data(), tensor.size() * 4, RRT_SPACE_HOST});
  }
  const rrt_run_args_t args = args_of(tensors);
  EXPECT_EQ(rrt_run(ctx, callable, &args), RRT_OK) << c.name << ": " << last_message();
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
  return host.back();
}

TEST_F(CudaGpuTest, BuiltinNumericsMatchTheCpuKernels) {
  const auto two = static_cast<std::uint32_t>(rrt_scalar_from_f32(2.5F));
  const auto eps = static_cast<std::uint32_t>(rrt_scalar_from_f32(1e-5F));
  const std::vector<NumericsCase> cases = {
      {"fill", {4099}, {two}, true},
      {"copy", {4099, 4099}, {}, true},
      {"add", {4099, 4099, 4099}, {}, true},
      {"mul", {4099, 4099, 4099}, {}, true},
      {"scale", {4099, 4099}, {two}, true},
      {"matmul", {37ULL * 53, 53ULL * 29, 37ULL * 29}, {37, 53, 29}, true},
      {"softmax", {64ULL * 300, 64ULL * 300}, {300}, false},
      {"rmsnorm", {64ULL * 300, 300, 64ULL * 300}, {300, eps}, false},
      {"silu", {4099, 4099}, {}, false},
      {"gelu", {4099, 4099}, {}, false},
  };
  std::mt19937 random(1234);
  std::uniform_real_distribution<float> values(-4.0F, 4.0F);
  for (const NumericsCase &c : cases) {
    std::vector<std::vector<float>> inputs;
    for (std::size_t t = 0; t + 1 < c.floats.size(); ++t) {
      inputs.emplace_back(c.floats[t]);
      for (float &v : inputs.back()) {
        v = values(random);
      }
    }
    std::string error;
    const std::vector<float> cpu = run_on(RRT_PLATFORM_SIM, c, inputs, &error);
    const std::vector<float> gpu = run_on(RRT_PLATFORM_CUDA, c, inputs, &error);
    ASSERT_EQ(gpu.size(), cpu.size()) << c.name << ": " << error;
    if (c.exact) {
      EXPECT_EQ(std::memcmp(gpu.data(), cpu.data(), gpu.size() * 4), 0) << c.name << " bit-exact";
      continue;
    }
    double diff = 0.0;
    double norm = 0.0;
    for (std::size_t i = 0; i < cpu.size(); ++i) {
      diff += (static_cast<double>(gpu[i]) - cpu[i]) * (static_cast<double>(gpu[i]) - cpu[i]);
      norm += static_cast<double>(cpu[i]) * cpu[i];
    }
    EXPECT_LT(std::sqrt(diff / norm), 1e-6) << c.name;
  }
}

// The decoder built-ins on CUDA against the simulator's CPU kernels on the same inputs. Every
// tensor starts with given contents and the last one (written) is INOUT, so rope's rotation in
// place and kv_store's untouched cache rows are compared too. embedding and kv_store copy and
// match bit for bit; linear, rope and attention match within a relative error of 1e-5.
struct DecoderCase {
  const char *name;
  std::vector<std::vector<float>> tensors;
  std::vector<std::uint32_t> scalars;
  bool exact;
};

std::vector<float> run_decoder_on(rrt_platform_t platform, const DecoderCase &c,
                                  rrt_status_t *status, std::string *error) {
  rrt_context_t ctx = make_context(platform);
  if (ctx == nullptr) {
    *error = last_message();
    *status = RRT_ERR_UNSUPPORTED;
    return {};
  }
  EXPECT_EQ(rrt_program_init(ctx), RRT_OK);
  std::vector<std::uint64_t> sizes;
  for (const auto &tensor : c.tensors) {
    sizes.push_back(tensor.size());
  }
  SingleTask task(ctx, c.name, sizes, c.scalars, RRT_BIND_DEVICE_BUILD);
  task.params.back().direction = RRT_DIR_INOUT;
  std::int32_t callable = -1;
  EXPECT_EQ(rrt_callable_prepare(ctx, &task.desc, &callable), RRT_OK) << last_message();
  std::vector<std::vector<float>> host = c.tensors;
  std::vector<rrt_tensor_arg_t> tensors;
  for (auto &tensor : host) {
    tensors.push_back({tensor.data(), tensor.size() * 4, RRT_SPACE_HOST});
  }
  const rrt_run_args_t args = args_of(tensors);
  *status = rrt_run(ctx, callable, &args);
  *error = last_message();
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
  return host.back();
}

std::vector<float> random_values(std::size_t count, std::mt19937 *random) {
  std::uniform_real_distribution<float> values(-1.0F, 1.0F);
  std::vector<float> out(count);
  for (float &v : out) {
    v = values(*random);
  }
  return out;
}

// `count` (even) finite f16 or bf16 weights, two to a float of storage.
std::vector<float> random_halves(std::size_t count, rrt_dtype_t dtype, std::mt19937 *random) {
  std::vector<std::uint16_t> halves(count);
  for (std::uint16_t &half : halves) {
    const auto mantissa = static_cast<std::uint16_t>((*random)() % 128);
    const auto sign = static_cast<std::uint16_t>(((*random)() % 2) << 15U);
    // Exponents around one: f16 biased 12..16, bf16 biased 124..128.
    const auto exponent = static_cast<std::uint16_t>((*random)() % 5);
    half = dtype == RRT_DTYPE_F16
               ? static_cast<std::uint16_t>(sign | ((12U + exponent) << 10U) | (mantissa << 3U))
               : static_cast<std::uint16_t>(sign | ((124U + exponent) << 7U) | mantissa);
  }
  std::vector<float> storage(count / 2);
  std::memcpy(storage.data(), halves.data(), count * 2);
  return storage;
}

std::vector<float> int32_storage(const std::vector<std::int32_t> &values) {
  std::vector<float> storage(values.size());
  std::memcpy(storage.data(), values.data(), values.size() * 4);
  return storage;
}

double relative_l2(const std::vector<float> &actual, const std::vector<float> &expected) {
  double diff = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double d = static_cast<double>(actual[i]) - expected[i];
    diff += d * d;
    norm += static_cast<double>(expected[i]) * expected[i];
  }
  return std::sqrt(diff / norm);
}

std::vector<DecoderCase> decoder_cases() {
  std::mt19937 random(4321);
  const auto theta = static_cast<std::uint32_t>(rrt_scalar_from_f32(10000.0F));
  std::vector<DecoderCase> cases;
  constexpr std::size_t kM = 3;
  constexpr std::size_t kK = 516;
  constexpr std::size_t kN = 37;
  cases.push_back({"linear",
                   {random_values(kM * kK, &random), random_values(kN * kK, &random),
                    std::vector<float>(kM * kN, 0.0F)},
                   {kM, kK, kN, RRT_DTYPE_F32},
                   false});
  for (const rrt_dtype_t dtype : {RRT_DTYPE_F16, RRT_DTYPE_BF16}) {
    cases.push_back({"linear",
                     {random_values(kM * kK, &random), random_halves(kN * kK, dtype, &random),
                      std::vector<float>(kM * kN, 0.0F)},
                     {kM, kK, kN, static_cast<std::uint32_t>(dtype)},
                     false});
    cases.push_back({"embedding",
                     {random_halves(50ULL * 64, dtype, &random), int32_storage({0, 49, 7}),
                      std::vector<float>(3ULL * 64, 0.0F)},
                     {50, 64, 3, static_cast<std::uint32_t>(dtype)},
                     true});
  }
  cases.push_back({"embedding",
                   {random_values(50ULL * 64, &random), int32_storage({0, 49, 7}),
                    std::vector<float>(3ULL * 64, 0.0F)},
                   {50, 64, 3, RRT_DTYPE_F32},
                   true});
  cases.push_back({"rope",
                   {int32_storage({17}), random_values(2ULL * 4 * 64, &random)},
                   {2, 4, 64, theta},
                   false});
  cases.push_back(
      {"kv_store",
       {random_values(2ULL * 64, &random), int32_storage({5}), random_values(16ULL * 64, &random)},
       {2, 64, 16},
       true});
  // 300 cache rows: more than one block's worth of weights at a time.
  cases.push_back({"attention",
                   {random_values(2ULL * 8 * 64, &random), random_values(300ULL * 2 * 64, &random),
                    random_values(300ULL * 2 * 64, &random), int32_storage({290}),
                    std::vector<float>(2ULL * 8 * 64, 0.0F)},
                   {2, 8, 2, 64, 300},
                   false});
  // A decode step of a 32-head model at position 4000 of 4096: the split over KV positions.
  cases.push_back({"attention",
                   {random_values(32ULL * 128, &random), random_values(4096ULL * 8 * 128, &random),
                    random_values(4096ULL * 8 * 128, &random), int32_storage({4000}),
                    std::vector<float>(32ULL * 128, 0.0F)},
                   {1, 32, 8, 128, 4096},
                   false});
  return cases;
}

TEST_F(CudaGpuTest, DecoderBuiltinsMatchTheCpuKernels) {
  for (const DecoderCase &c : decoder_cases()) {
    SCOPED_TRACE(c.name);
    rrt_status_t cpu_status = RRT_OK;
    rrt_status_t gpu_status = RRT_OK;
    std::string error;
    const std::vector<float> cpu = run_decoder_on(RRT_PLATFORM_SIM, c, &cpu_status, &error);
    ASSERT_EQ(cpu_status, RRT_OK) << error;
    const std::vector<float> gpu = run_decoder_on(RRT_PLATFORM_CUDA, c, &gpu_status, &error);
    ASSERT_EQ(gpu_status, RRT_OK) << error;
    ASSERT_EQ(gpu.size(), cpu.size());
    if (c.exact) {
      EXPECT_EQ(std::memcmp(gpu.data(), cpu.data(), gpu.size() * 4), 0) << "bit-exact";
    } else {
      EXPECT_LT(relative_l2(gpu, cpu), 1e-5);
    }
  }
}

TEST_F(CudaGpuTest, DeviceResidentValuesOutOfRangeWriteNanOrNothingOnCuda) {
  std::mt19937 random(99);
  const DecoderCase embedding{
      "embedding",
      {random_values(4ULL * 8, &random), int32_storage({1, 4}), std::vector<float>(2ULL * 8, 0.0F)},
      {4, 8, 2, RRT_DTYPE_F32},
      true};
  rrt_status_t status = RRT_OK;
  std::string error;
  std::vector<float> out = run_decoder_on(RRT_PLATFORM_CUDA, embedding, &status, &error);
  ASSERT_EQ(status, RRT_OK) << error;
  for (std::size_t d = 0; d < 8; ++d) {
    EXPECT_EQ(out[d], embedding.tensors[0][8 + d]) << "id 1 gathers its row";
    EXPECT_TRUE(std::isnan(out[8 + d])) << "id 4 of 4 writes NaN";
  }
  const DecoderCase kv_store{
      "kv_store",
      {random_values(2ULL * 8, &random), int32_storage({3}), std::vector<float>(4ULL * 8, 0.5F)},
      {2, 8, 4},
      true};
  out = run_decoder_on(RRT_PLATFORM_CUDA, kv_store, &status, &error);
  ASSERT_EQ(status, RRT_OK) << error;
  EXPECT_EQ(out, kv_store.tensors.back()) << "pos + T > S writes nothing";
  const DecoderCase attention{
      "attention",
      {random_values(8, &random), random_values(16, &random), random_values(16, &random),
       int32_storage({4}), std::vector<float>(8, 0.0F)},
      {1, 2, 1, 4, 4},
      false};
  out = run_decoder_on(RRT_PLATFORM_CUDA, attention, &status, &error);
  ASSERT_EQ(status, RRT_OK) << error;
  for (const float value : out) {
    EXPECT_TRUE(std::isnan(value)) << "pos >= S writes NaN";
  }
}

}  // namespace
