// The host-build bind through the public C ABI: captured and replayed, interleaved with the
// device-build bind, and giving the same results.
#include <bit>
#include <cmath>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"
#include "test_platform.h"

namespace {

using replayrt::testing::run_args;
using replayrt::testing::stats_of;

constexpr std::uint32_t kRows = 4;
constexpr std::uint32_t kCols = 64;
constexpr std::uint64_t kHostBuildFloats = std::uint64_t{kRows} * kCols;
constexpr std::uint64_t kWeightFloats = std::uint64_t{kCols} * kCols;

// out = softmax(x * w) + x, with w a [cols, cols] matrix: matmul, softmax, add.
class SoftmaxStep {
 public:
  SoftmaxStep(rrt_context_t ctx, rrt_bind_strategy_t bind) {
    auto tensor = [](std::uint64_t a, std::uint64_t b, rrt_direction_t direction) {
      rrt_tensor_desc_t desc{};
      desc.dtype = RRT_DTYPE_F32;
      desc.ndim = 2;
      desc.shape[0] = a;
      desc.shape[1] = b;
      desc.direction = direction;
      return desc;
    };
    params_[0] = tensor(kRows, kCols, RRT_DIR_IN);
    params_[1] = tensor(kCols, kCols, RRT_DIR_IN);
    params_[2] = tensor(kRows, kCols, RRT_DIR_OUT);
    inters_[0] = tensor(kRows, kCols, RRT_DIR_INOUT);
    inters_[1] = tensor(kRows, kCols, RRT_DIR_INOUT);
    matmul_[0] = {RRT_OPERAND_PARAM, 0};
    matmul_[1] = {RRT_OPERAND_PARAM, 1};
    matmul_[2] = {RRT_OPERAND_INTERMEDIATE, 0};
    matmul_[3] = {RRT_OPERAND_IMMEDIATE, kRows};
    matmul_[4] = {RRT_OPERAND_IMMEDIATE, kCols};
    matmul_[5] = {RRT_OPERAND_IMMEDIATE, kCols};
    softmax_[0] = {RRT_OPERAND_INTERMEDIATE, 0};
    softmax_[1] = {RRT_OPERAND_INTERMEDIATE, 1};
    softmax_[2] = {RRT_OPERAND_IMMEDIATE, kCols};
    add_[0] = {RRT_OPERAND_INTERMEDIATE, 1};
    add_[1] = {RRT_OPERAND_PARAM, 0};
    add_[2] = {RRT_OPERAND_PARAM, 2};
    tasks_[0] = {id(ctx, "matmul"), 6, matmul_};
    tasks_[1] = {id(ctx, "softmax"), 3, softmax_};
    tasks_[2] = {id(ctx, "add"), 3, add_};
    desc_.struct_size = sizeof desc_;
    desc_.bind = bind;
    desc_.num_params = 3;
    desc_.params = params_;
    desc_.num_intermediates = 2;
    desc_.intermediates = inters_;
    desc_.num_tasks = 3;
    desc_.tasks = tasks_;
  }
  const rrt_callable_desc_t *desc() const { return &desc_; }

 private:
  static std::int32_t id(rrt_context_t ctx, const char *name) {
    std::int32_t kernel = -1;
    EXPECT_EQ(rrt_kernel_lookup(ctx, name, &kernel), RRT_OK);
    return kernel;
  }
  rrt_tensor_desc_t params_[3];
  rrt_tensor_desc_t inters_[2];
  rrt_operand_t matmul_[6];
  rrt_operand_t softmax_[3];
  rrt_operand_t add_[3];
  rrt_task_desc_t tasks_[3];
  rrt_callable_desc_t desc_{};
};

std::vector<float> weights() {
  std::vector<float> w(kWeightFloats);
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = static_cast<float>((i * 7919) % 97) / 97.0F - 0.5F;
  }
  return w;
}

std::vector<float> input(int step) {
  std::vector<float> x(kHostBuildFloats);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>((i * 31 + static_cast<std::size_t>(step) * 17) % 113) / 50.0F - 1.0F;
  }
  return x;
}

std::vector<float> reference(const std::vector<float> &x, const std::vector<float> &w) {
  std::vector<float> out(kHostBuildFloats);
  for (std::uint32_t r = 0; r < kRows; ++r) {
    std::vector<double> row(kCols, 0.0);
    for (std::uint32_t k = 0; k < kCols; ++k) {
      for (std::uint32_t j = 0; j < kCols; ++j) {
        row[j] += static_cast<double>(x[r * kCols + k]) * w[k * kCols + j];
      }
    }
    double max = row[0];
    for (const double v : row) {
      max = std::max(max, v);
    }
    double sum = 0.0;
    for (double &v : row) {
      v = std::exp(v - max);
      sum += v;
    }
    for (std::uint32_t j = 0; j < kCols; ++j) {
      out[r * kCols + j] = static_cast<float>(row[j] / sum) + x[r * kCols + j];
    }
  }
  return out;
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) {
      return false;
    }
  }
  return a.size() == b.size();
}

void expect_close(const std::vector<float> &got, const std::vector<float> &want) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4F) << "element " << i;
  }
}

class HostBuildKernelModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = replayrt::testing::test_platform();
    ASSERT_EQ(rrt_context_create(&options, &ctx_), RRT_OK);
    SoftmaxStep host(ctx_, RRT_BIND_HOST_BUILD);
    SoftmaxStep device(ctx_, RRT_BIND_DEVICE_BUILD);
    const rrt_callable_desc_t *both[] = {host.desc(), device.desc()};
    rrt_kernel_config_t config{};
    config.struct_size = sizeof config;
    config.context_generation = 0;  // the runtime picks a process-unique one
    ASSERT_EQ(rrt_capacity_plan_fit_all(both, 2, &config.capacity), RRT_OK);
    EXPECT_GT(config.capacity.graph_definition_bytes, 0u);
    EXPECT_GT(config.capacity.host_staging_bytes, 0u);
    ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK);
    ASSERT_EQ(rrt_callable_prepare(ctx_, host.desc(), &host_id_), RRT_OK);
    ASSERT_EQ(rrt_callable_prepare(ctx_, device.desc(), &device_id_), RRT_OK);
    ASSERT_EQ(rrt_stream_create(ctx_, &stream_), RRT_OK);
    w_ = weights();
    for (void **buffer : {&x_, &w_dev_, &out_host_, &out_device_}) {
      ASSERT_EQ(rrt_device_alloc(ctx_, kWeightFloats * 4, buffer), RRT_OK);
    }
    ASSERT_EQ(rrt_memcpy_h2d(ctx_, w_dev_, w_.data(), w_.size() * 4, nullptr), RRT_OK);
  }

  void TearDown() override {
    EXPECT_EQ(rrt_stream_destroy(stream_), RRT_OK);
    for (void *buffer : {x_, w_dev_, out_host_, out_device_}) {
      EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
    }
    EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK);
  }

  rrt_graph_t capture(std::int32_t id, void *out) {
    const rrt_tensor_arg_t tensors[3] = {{x_, kHostBuildFloats * 4, RRT_SPACE_DEVICE},
                                         {w_dev_, kWeightFloats * 4, RRT_SPACE_DEVICE},
                                         {out, kHostBuildFloats * 4, RRT_SPACE_DEVICE}};
    const rrt_run_args_t args = run_args(tensors);
    EXPECT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
    EXPECT_EQ(rrt_kernel_launch(ctx_, id, &args, stream_), RRT_OK);
    rrt_graph_t graph = nullptr;
    EXPECT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK);
    return graph;
  }

  std::vector<float> read(const void *device) {
    std::vector<float> host(kHostBuildFloats);
    EXPECT_EQ(rrt_memcpy_d2h(ctx_, host.data(), device, kHostBuildFloats * 4, nullptr), RRT_OK);
    return host;
  }

  rrt_context_t ctx_ = nullptr;
  rrt_stream_t stream_ = nullptr;
  std::int32_t host_id_ = -1;
  std::int32_t device_id_ = -1;
  std::vector<float> w_;
  void *x_ = nullptr;
  void *w_dev_ = nullptr;
  void *out_host_ = nullptr;
  void *out_device_ = nullptr;
};

TEST_F(HostBuildKernelModeTest, AThousandReplaysInterleavedWithADeviceBuildGraphMatchTheReference) {
  rrt_graph_t host_graph = capture(host_id_, out_host_);
  rrt_graph_t device_graph = capture(device_id_, out_device_);
  const rrt_stats_t before = stats_of(ctx_);
  for (int step = 0; step < 1000; ++step) {
    const std::vector<float> x = input(step);
    ASSERT_EQ(rrt_memcpy_h2d(ctx_, x_, x.data(), kHostBuildFloats * 4, nullptr), RRT_OK);
    ASSERT_EQ(rrt_graph_replay(host_graph, stream_), RRT_OK);
    ASSERT_EQ(rrt_graph_replay(device_graph, stream_), RRT_OK);
    ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
    const std::vector<float> from_host_build = read(out_host_);
    const std::vector<float> from_device_build = read(out_device_);
    if (step % 50 == 0) {
      expect_close(from_host_build, reference(x, w_));
    }
    // Both binds run the same kernels in the same order: the same values, bit for bit.
    ASSERT_TRUE(same_bits(from_host_build, from_device_build)) << "step " << step;
  }
  const rrt_stats_t after = stats_of(ctx_);
  EXPECT_EQ(after.device_alloc_calls, before.device_alloc_calls);
  EXPECT_EQ(after.device_free_calls, before.device_free_calls);
  EXPECT_EQ(after.replays - before.replays, 2000u);
  EXPECT_EQ(rrt_graph_destroy(host_graph), RRT_OK);
  EXPECT_EQ(rrt_graph_destroy(device_graph), RRT_OK);
}

TEST_F(HostBuildKernelModeTest, HostTensorsAreStagedThroughTheFrozenRegion) {
  std::vector<float> x = input(3);
  std::vector<float> out(kHostBuildFloats, 0.0F);
  const rrt_tensor_arg_t tensors[3] = {{x.data(), kHostBuildFloats * 4, RRT_SPACE_HOST},
                                       {w_dev_, kWeightFloats * 4, RRT_SPACE_DEVICE},
                                       {out.data(), kHostBuildFloats * 4, RRT_SPACE_HOST}};
  const rrt_run_args_t args = run_args(tensors);
  ASSERT_EQ(rrt_kernel_launch(ctx_, host_id_, &args, stream_), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK);
  expect_close(out, reference(x, w_));
}

TEST(HostBuildProgramModeTest, BothBindsGiveTheSameResultsEagerly) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = replayrt::testing::test_platform();
  rrt_context_t ctx = nullptr;
  ASSERT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  SoftmaxStep host(ctx, RRT_BIND_HOST_BUILD);
  SoftmaxStep device(ctx, RRT_BIND_DEVICE_BUILD);
  std::int32_t host_id = -1;
  std::int32_t device_id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, host.desc(), &host_id), RRT_OK);
  ASSERT_EQ(rrt_callable_prepare(ctx, device.desc(), &device_id), RRT_OK);
  const std::vector<float> w = weights();
  std::uint64_t warm_allocations = 0;
  for (int step = 0; step < 20; ++step) {
    if (step == 1) {
      warm_allocations = stats_of(ctx).device_alloc_calls;
    }
    std::vector<float> x = input(step);
    std::vector<float> out_host(kHostBuildFloats);
    std::vector<float> out_device(kHostBuildFloats);
    for (const auto &[id, out] :
         {std::pair{host_id, &out_host}, std::pair{device_id, &out_device}}) {
      const rrt_tensor_arg_t tensors[3] = {
          {x.data(), kHostBuildFloats * 4, RRT_SPACE_HOST},
          {const_cast<float *>(w.data()), w.size() * 4, RRT_SPACE_HOST},
          {out->data(), kHostBuildFloats * 4, RRT_SPACE_HOST}};
      const rrt_run_args_t args = run_args(tensors);
      ASSERT_EQ(rrt_run(ctx, id, &args), RRT_OK);
    }
    expect_close(out_host, reference(x, w));
    ASSERT_TRUE(same_bits(out_host, out_device));
  }
  // Program-mode host staging is kept per slot like retained staging: after the first step,
  // alternating the two binds with HOST tensors allocates nothing.
  EXPECT_EQ(stats_of(ctx).device_alloc_calls, warm_allocations);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

}  // namespace
