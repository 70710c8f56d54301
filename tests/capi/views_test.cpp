// Views and device values (ABI 1.2) through the public C ABI: weights in one parameter, a cache
// row chosen by a device-resident position across replays, prepare-time bounds checks and the
// run-time range check of a device-resident offset.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"

namespace {

using replayrt::testing::last_message;
using replayrt::testing::lookup_kernel;
using replayrt::testing::run_args;
using replayrt::testing::stats_of;

rrt_context_t make_context(unsigned workers) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_SIM;
  options.device_workers = workers;
  rrt_context_t ctx = nullptr;
  EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  return ctx;
}

rrt_tensor_desc_t tensor(rrt_dtype_t dtype, std::initializer_list<std::uint64_t> shape,
                         rrt_direction_t direction = RRT_DIR_IN) {
  rrt_tensor_desc_t desc{};
  desc.dtype = dtype;
  desc.ndim = static_cast<std::uint32_t>(shape.size());
  std::uint32_t d = 0;
  for (const std::uint64_t extent : shape) {
    desc.shape[d++] = extent;
  }
  desc.direction = direction;
  return desc;
}

rrt_view_desc_t view(rrt_operand_kind_t base_kind, std::uint32_t base,
                     std::initializer_list<std::uint64_t> shape, std::uint64_t offset,
                     std::int32_t offset_value = -1, std::uint64_t stride = 0,
                     std::uint64_t max = 0) {
  rrt_view_desc_t desc{};
  desc.base_kind = base_kind;
  desc.base_index = base;
  desc.ndim = static_cast<std::uint32_t>(shape.size());
  std::uint32_t d = 0;
  for (const std::uint64_t extent : shape) {
    desc.shape[d++] = extent;
  }
  desc.offset = offset;
  desc.offset_value = offset_value;
  desc.offset_stride = stride;
  desc.offset_value_max = max;
  return desc;
}

// A 1.2 callable descriptor owning its arrays.
class Desc {
 public:
  explicit Desc(rrt_bind_strategy_t bind) { desc_.bind = bind; }
  Desc &param(rrt_tensor_desc_t t) {
    params_.push_back(t);
    return *this;
  }
  Desc &intermediate(rrt_tensor_desc_t t) {
    intermediates_.push_back(t);
    return *this;
  }
  Desc &view(rrt_view_desc_t v) {
    views_.push_back(v);
    return *this;
  }
  Desc &device_value(rrt_operand_kind_t kind, std::uint32_t index, std::uint64_t element) {
    values_.push_back(rrt_device_value_desc_t{kind, index, element});
    return *this;
  }
  Desc &task(std::int32_t kernel_id, std::initializer_list<rrt_operand_t> operands) {
    operands_.emplace_back(operands);
    tasks_.push_back(rrt_task_desc_t{kernel_id, static_cast<std::uint32_t>(operands.size()),
                                     operands_.back().data()});
    return *this;
  }
  std::vector<rrt_view_desc_t> &views() { return views_; }
  std::vector<rrt_device_value_desc_t> &device_values() { return values_; }
  const rrt_callable_desc_t *desc() {
    desc_.struct_size = sizeof desc_;
    desc_.num_params = static_cast<std::uint32_t>(params_.size());
    desc_.params = params_.data();
    desc_.num_intermediates = static_cast<std::uint32_t>(intermediates_.size());
    desc_.intermediates = intermediates_.data();
    desc_.num_tasks = static_cast<std::uint32_t>(tasks_.size());
    desc_.tasks = tasks_.data();
    desc_.num_views = static_cast<std::uint32_t>(views_.size());
    desc_.views = views_.data();
    desc_.num_device_values = static_cast<std::uint32_t>(values_.size());
    desc_.device_values = values_.data();
    return &desc_;
  }

 private:
  rrt_callable_desc_t desc_{};
  std::vector<rrt_tensor_desc_t> params_;
  std::vector<rrt_tensor_desc_t> intermediates_;
  std::vector<rrt_view_desc_t> views_;
  std::vector<rrt_device_value_desc_t> values_;
  std::deque<std::vector<rrt_operand_t>> operands_;
  std::vector<rrt_task_desc_t> tasks_;
};

// Built-in kernel ids (rrt_kernel_lookup agrees, checked where a context exists).
constexpr std::int32_t kFill = 0, kCopy = 1, kScale = 4, kMatmul = 5;

constexpr rrt_operand_t param_op(std::uint32_t i) {
  return {RRT_OPERAND_PARAM, i};
}
constexpr rrt_operand_t inter_op(std::uint32_t i) {
  return {RRT_OPERAND_INTERMEDIATE, i};
}
constexpr rrt_operand_t view_op(std::uint32_t i) {
  return {RRT_OPERAND_VIEW, i};
}
constexpr rrt_operand_t value_op(std::uint32_t i) {
  return {RRT_OPERAND_DEVICE_VALUE, i};
}
constexpr rrt_operand_t imm(std::uint32_t v) {
  return {RRT_OPERAND_IMMEDIATE, v};
}

// out[n] = sum_k x[k] * w[k * N + n] for one row.
std::vector<float> row_times(const std::vector<float> &x, const float *w, std::size_t n) {
  std::vector<float> out(n, 0.0F);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t k = 0; k < x.size(); ++k) {
      out[j] += x[k] * w[k * n + j];
    }
  }
  return out;
}

class ViewsTest : public ::testing::TestWithParam<rrt_bind_strategy_t> {
 protected:
  void TearDown() override {
    for (rrt_graph_t graph : graphs_) {
      EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
    }
    if (stream_ != nullptr) {
      EXPECT_EQ(rrt_stream_destroy(stream_), RRT_OK);
    }
    for (void *buffer : buffers_) {
      EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
    }
    if (ctx_ != nullptr) {
      EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK);
    }
  }

  void program_context(unsigned workers = 1) {
    ctx_ = make_context(workers);
    ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  }

  void kernel_context(const rrt_callable_desc_t *desc, unsigned workers = 1) {
    ctx_ = make_context(workers);
    rrt_kernel_config_t config{};
    config.struct_size = sizeof config;
    config.context_generation = 0;
    ASSERT_EQ(rrt_capacity_plan_fit(desc, &config.capacity), RRT_OK);
    config.capacity.runtime_pool_bytes *= 2;
    config.capacity.graph_definition_bytes *= 2;
    ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK);
    ASSERT_EQ(rrt_stream_create(ctx_, &stream_), RRT_OK);
  }

  void *upload(const void *data, std::size_t bytes) {
    void *buffer = nullptr;
    EXPECT_EQ(rrt_device_alloc(ctx_, bytes, &buffer), RRT_OK);
    buffers_.push_back(buffer);
    if (data != nullptr) {
      EXPECT_EQ(rrt_memcpy_h2d(ctx_, buffer, data, bytes, nullptr), RRT_OK);
    }
    return buffer;
  }
  template <class T>
  void *upload(const std::vector<T> &values) {
    return upload(values.data(), values.size() * sizeof(T));
  }
  template <class T>
  std::vector<T> download(const void *buffer, std::size_t count) {
    std::vector<T> values(count);
    EXPECT_EQ(rrt_memcpy_d2h(ctx_, values.data(), buffer, count * sizeof(T), nullptr), RRT_OK);
    return values;
  }

  rrt_context_t ctx_ = nullptr;
  rrt_stream_t stream_ = nullptr;
  std::vector<void *> buffers_;
  std::vector<rrt_graph_t> graphs_;
};

// Two matmuls whose weights are views into one parameter holding both matrices.
TEST_P(ViewsTest, ACallableTakesAllItsWeightsAsOneParamThroughViews) {
  constexpr std::uint64_t K = 4, N = 3;
  program_context();
  ASSERT_EQ(lookup_kernel(ctx_, "matmul"), kMatmul);
  const std::int32_t matmul = kMatmul;
  Desc d(GetParam());
  d.param(tensor(RRT_DTYPE_F32, {K * N + N * N}))  // both weights
      .param(tensor(RRT_DTYPE_F32, {1, K}))
      .param(tensor(RRT_DTYPE_F32, {1, N}, RRT_DIR_OUT))
      .intermediate(tensor(RRT_DTYPE_F32, {1, N}))
      .view(view(RRT_OPERAND_PARAM, 0, {K, N}, 0))
      .view(view(RRT_OPERAND_PARAM, 0, {N, N}, K * N))
      .task(matmul, {param_op(1), view_op(0), inter_op(0), imm(1), imm(K), imm(N)})
      .task(matmul, {inter_op(0), view_op(1), param_op(2), imm(1), imm(N), imm(N)});
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, d.desc(), &id), RRT_OK) << last_message();

  std::vector<float> weights(K * N + N * N);
  for (std::size_t i = 0; i < weights.size(); ++i) {
    weights[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  }
  const std::vector<float> x = {1, 2, -1, 3};
  const std::vector<float> expected =
      row_times(row_times(x, weights.data(), N), weights.data() + K * N, N);
  for (const rrt_address_space_t space : {RRT_SPACE_DEVICE, RRT_SPACE_HOST}) {
    void *w = space == RRT_SPACE_DEVICE ? upload(weights) : weights.data();
    std::vector<float> y(N, -7.0F);
    void *y_addr = space == RRT_SPACE_DEVICE ? upload(y) : y.data();
    const rrt_tensor_arg_t tensors[3] = {{w, weights.size() * 4, space},
                                         {const_cast<float *>(x.data()), K * 4, RRT_SPACE_HOST},
                                         {y_addr, N * 4, space}};
    const rrt_run_args_t args = run_args(tensors);
    ASSERT_EQ(rrt_run(ctx_, id, &args), RRT_OK) << last_message();
    const std::vector<float> got = space == RRT_SPACE_DEVICE ? download<float>(y_addr, N) : y;
    EXPECT_EQ(got, expected) << "space " << space;
  }
}

// cache[pos] = x @ W, with pos a device tensor: one capture, replays with pos changed.
class CacheRowCallable {
 public:
  static constexpr std::uint64_t K = 4, N = 4, kRows = 6;

  explicit CacheRowCallable(rrt_bind_strategy_t bind, std::uint64_t max = kRows - 1) : desc_(bind) {
    desc_.param(tensor(RRT_DTYPE_F32, {1, K}))
        .param(tensor(RRT_DTYPE_F32, {K, N}))
        .param(tensor(RRT_DTYPE_I32, {1}))
        .param(tensor(RRT_DTYPE_F32, {kRows, N}, RRT_DIR_INOUT))
        .device_value(RRT_OPERAND_PARAM, 2, 0)
        .view(view(RRT_OPERAND_PARAM, 3, {1, N}, 0, 0, N, max))
        .task(kMatmul, {param_op(0), param_op(1), view_op(0), imm(1), imm(K), imm(N)});
  }
  const rrt_callable_desc_t *desc() { return desc_.desc(); }
  Desc &builder() { return desc_; }

 private:
  Desc desc_;
};

TEST_P(ViewsTest, ACapturedMatmulWritesTheCacheRowThatADeviceValueNamesAtEachReplay) {
  using C = CacheRowCallable;
  CacheRowCallable callable(GetParam());
  kernel_context(callable.desc());
  ASSERT_EQ(lookup_kernel(ctx_, "matmul"), kMatmul);
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, callable.desc(), &id), RRT_OK) << last_message();

  std::vector<float> w(C::K * C::N);
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = static_cast<float>(i % 5);
  }
  void *x = upload(std::vector<float>(C::K, 0.0F));
  void *weights = upload(w);
  const std::int32_t zero = 0;
  void *pos = upload(&zero, sizeof zero);
  void *cache = upload(std::vector<float>(C::kRows * C::N, 0.0F));
  const rrt_tensor_arg_t tensors[4] = {{x, C::K * 4, RRT_SPACE_DEVICE},
                                       {weights, w.size() * 4, RRT_SPACE_DEVICE},
                                       {pos, 4, RRT_SPACE_DEVICE},
                                       {cache, C::kRows * C::N * 4, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = run_args(tensors);
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, id, &args, stream_), RRT_OK) << last_message();
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK);
  graphs_.push_back(graph);

  std::vector<float> expected(C::kRows * C::N, 0.0F);
  const std::int32_t positions[] = {2, 0, 5, 3};
  for (std::int32_t step = 0; step < 4; ++step) {
    const std::int32_t p = positions[step];
    const std::vector<float> input = {static_cast<float>(step + 1), 1.0F, -2.0F,
                                      static_cast<float>(p)};
    ASSERT_EQ(rrt_memcpy_h2d(ctx_, x, input.data(), C::K * 4, nullptr), RRT_OK);
    ASSERT_EQ(rrt_memcpy_h2d(ctx_, pos, &p, sizeof p, nullptr), RRT_OK);
    ASSERT_EQ(rrt_graph_replay(graph, stream_), RRT_OK);
    ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK) << last_message();
    const std::vector<float> row = row_times(input, w.data(), C::N);
    std::copy(row.begin(), row.end(), expected.begin() + static_cast<std::ptrdiff_t>(p * C::N));
    EXPECT_EQ(download<float>(cache, C::kRows * C::N), expected) << "after step " << step;
  }
}

TEST_P(ViewsTest, ADeviceValueScalarIsReadAtEachReplay) {
  constexpr std::uint64_t kN = 8;
  Desc d(GetParam());
  d.param(tensor(RRT_DTYPE_F32, {kN}))
      .param(tensor(RRT_DTYPE_F32, {2}))
      .param(tensor(RRT_DTYPE_F32, {kN}, RRT_DIR_OUT))
      .device_value(RRT_OPERAND_PARAM, 1, 1)
      .task(kScale, {param_op(0), param_op(2), value_op(0)});  // out = in * factor
  kernel_context(d.desc());
  ASSERT_EQ(lookup_kernel(ctx_, "scale"), kScale);
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, d.desc(), &id), RRT_OK) << last_message();
  void *in = upload(std::vector<float>(kN, 3.0F));
  void *factor = upload(std::vector<float>{0.0F, 2.0F});
  void *out = upload(std::vector<float>(kN, 0.0F));
  const rrt_tensor_arg_t tensors[3] = {{in, kN * 4, RRT_SPACE_DEVICE},
                                       {factor, 8, RRT_SPACE_DEVICE},
                                       {out, kN * 4, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = run_args(tensors);
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, id, &args, stream_), RRT_OK);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK);
  graphs_.push_back(graph);
  for (const float f : {2.0F, -0.5F}) {
    ASSERT_EQ(rrt_memcpy_h2d(ctx_, static_cast<float *>(factor) + 1, &f, 4, nullptr), RRT_OK);
    ASSERT_EQ(rrt_graph_replay(graph, stream_), RRT_OK);
    ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK) << last_message();
    EXPECT_EQ(download<float>(out, kN), std::vector<float>(kN, 3.0F * f));
  }
}

// Two tasks fill the halves of an intermediate through views, a third copies it whole: the
// copy depends on both (a view touches its whole base), also with two device workers.
TEST_P(ViewsTest, ATaskReadingABaseWaitsForTheTasksWritingItThroughViews) {
  constexpr std::uint64_t kHalf = 4096;
  program_context(2);
  Desc d(GetParam());
  d.param(tensor(RRT_DTYPE_F32, {2 * kHalf}, RRT_DIR_OUT))
      .intermediate(tensor(RRT_DTYPE_F32, {2 * kHalf}))
      .view(view(RRT_OPERAND_INTERMEDIATE, 0, {kHalf}, 0))
      .view(view(RRT_OPERAND_INTERMEDIATE, 0, {kHalf}, kHalf))
      .task(kFill, {view_op(0), imm(static_cast<std::uint32_t>(rrt_scalar_from_f32(1.0F)))})
      .task(kFill, {view_op(1), imm(static_cast<std::uint32_t>(rrt_scalar_from_f32(2.0F)))})
      .task(kCopy, {inter_op(0), param_op(0)});
  ASSERT_EQ(lookup_kernel(ctx_, "copy"), kCopy);
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, d.desc(), &id), RRT_OK) << last_message();
  std::vector<float> expected(2 * kHalf, 1.0F);
  std::fill(expected.begin() + kHalf, expected.end(), 2.0F);
  for (int round = 0; round < 20; ++round) {
    std::vector<float> out(2 * kHalf, 0.0F);
    const rrt_tensor_arg_t tensors[1] = {{out.data(), out.size() * 4, RRT_SPACE_HOST}};
    const rrt_run_args_t args = run_args(tensors);
    ASSERT_EQ(rrt_run(ctx_, id, &args), RRT_OK) << last_message();
    ASSERT_EQ(out, expected) << "round " << round;
  }
}

TEST_P(ViewsTest, ViewAndDeviceValueErrorsAreRefusedAtPrepareWithNothingChanged) {
  using C = CacheRowCallable;
  CacheRowCallable probe(GetParam());
  kernel_context(probe.desc());
  ASSERT_EQ(lookup_kernel(ctx_, "fill"), kFill);
  const rrt_stats_t before = stats_of(ctx_);
  struct Case {
    const char *what;
    void (*spoil)(Desc &);
    const char *names;
  };
  const Case cases[] = {
      {"max reaches past the base", [](Desc &d) { d.views()[0].offset_value_max = C::kRows; },
       "view 0"},
      {"fixed offset past the base", [](Desc &d) { d.views()[0].offset = 3; }, "view 0"},
      {"stride times max overflows",
       [](Desc &d) {
         d.views()[0].offset_stride = std::uint64_t{1} << 62;
         d.views()[0].offset_value_max = 8;
       },
       "view 0"},
      {"offset overflows", [](Desc &d) { d.views()[0].offset = ~std::uint64_t{0} - 1; }, "view 0"},
      {"more elements than the base", [](Desc &d) { d.views()[0].shape[0] = C::kRows + 1; },
       "view 0"},
      {"a zero dimension", [](Desc &d) { d.views()[0].shape[1] = 0; }, "view 0"},
      {"no dimensions", [](Desc &d) { d.views()[0].ndim = 0; }, "view 0"},
      {"base out of range", [](Desc &d) { d.views()[0].base_index = 4; }, "view 0"},
      {"base of a scalar kind", [](Desc &d) { d.views()[0].base_kind = RRT_OPERAND_SCALAR; },
       "view 0"},
      {"offset value out of range", [](Desc &d) { d.views()[0].offset_value = 1; }, "view 0"},
      {"offset value below -1", [](Desc &d) { d.views()[0].offset_value = -2; }, "view 0"},
      {"an F32 offset value", [](Desc &d) { d.device_values()[0].source_index = 1; }, "view 0"},
      {"a device value element outside its source",
       [](Desc &d) { d.device_values()[0].element = 1; }, "device value 0"},
      {"a device value source out of range", [](Desc &d) { d.device_values()[0].source_index = 9; },
       "device value 0"},
      {"a device value of an intermediate that does not exist",
       [](Desc &d) { d.device_values()[0].source_kind = RRT_OPERAND_INTERMEDIATE; },
       "device value 0"},
      {"a device value of dtype U8",
       [](Desc &d) {
         d.param(tensor(RRT_DTYPE_U8, {4}));
         d.device_values()[0].source_index = 4;
       },
       "device value 0"},
  };
  for (const Case &c : cases) {
    CacheRowCallable callable(GetParam());
    c.spoil(callable.builder());
    std::int32_t id = -1;
    EXPECT_EQ(rrt_callable_prepare(ctx_, callable.desc(), &id), RRT_ERR_INVALID_ARGUMENT) << c.what;
    EXPECT_NE(last_message().find(c.names), std::string::npos) << c.what << ": " << last_message();
    rrt_capacity_plan_t plan{};
    EXPECT_EQ(rrt_capacity_plan_fit(callable.desc(), &plan), RRT_ERR_INVALID_ARGUMENT) << c.what;
    EXPECT_EQ(id, -1) << c.what;
  }
  {
    CacheRowCallable callable(GetParam());
    callable.builder().task(kFill, {view_op(1), imm(0)});
    std::int32_t id = -1;
    EXPECT_EQ(rrt_callable_prepare(ctx_, callable.desc(), &id), RRT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last_message().find("task 1 operand 0: view 1"), std::string::npos) << last_message();
  }
  const rrt_stats_t after = stats_of(ctx_);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_EQ(after.device_alloc_calls, before.device_alloc_calls);
  EXPECT_EQ(after.regions[RRT_GROWTH_ARENA_RUNTIME_POOL].used_bytes,
            before.regions[RRT_GROWTH_ARENA_RUNTIME_POOL].used_bytes);
  EXPECT_EQ(after.regions[RRT_GROWTH_GRAPH_DEFINITION].used_bytes,
            before.regions[RRT_GROWTH_GRAPH_DEFINITION].used_bytes);
  // The unspoiled callable still prepares.
  CacheRowCallable good(GetParam());
  std::int32_t id = -1;
  EXPECT_EQ(rrt_callable_prepare(ctx_, good.desc(), &id), RRT_OK) << last_message();
}

// The offset's maximum (3) is below what the cache allows (5): a position of 4 fits the cache
// but not the view's declared range, and fails the task all the same.
TEST_P(ViewsTest, ADeviceValueOutsideTheViewsRangeFailsTheRunAndWritesNothing) {
  using C = CacheRowCallable;
  CacheRowCallable callable(GetParam(), 3);
  kernel_context(callable.desc());
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx_, callable.desc(), &id), RRT_OK) << last_message();
  void *x = upload(std::vector<float>(C::K, 1.0F));
  void *weights = upload(std::vector<float>(C::K * C::N, 1.0F));
  const std::int32_t zero = 0;
  void *pos = upload(&zero, sizeof zero);
  void *cache = upload(std::vector<float>(C::kRows * C::N, 0.0F));
  const rrt_tensor_arg_t tensors[4] = {{x, C::K * 4, RRT_SPACE_DEVICE},
                                       {weights, C::K * C::N * 4, RRT_SPACE_DEVICE},
                                       {pos, 4, RRT_SPACE_DEVICE},
                                       {cache, C::kRows * C::N * 4, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = run_args(tensors);
  ASSERT_EQ(rrt_stream_begin_capture(stream_), RRT_OK);
  ASSERT_EQ(rrt_kernel_launch(ctx_, id, &args, stream_), RRT_OK);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream_, &graph), RRT_OK);
  graphs_.push_back(graph);
  for (const std::int32_t p : {4, -1}) {
    ASSERT_EQ(rrt_memcpy_h2d(ctx_, pos, &p, sizeof p, nullptr), RRT_OK);
    ASSERT_EQ(rrt_graph_replay(graph, stream_), RRT_OK);
    EXPECT_EQ(rrt_stream_synchronize(stream_), RRT_ERR_KERNEL_FAILED) << "pos " << p;
    const std::string message = last_message();
    EXPECT_NE(message.find("task 0"), std::string::npos) << message;
    EXPECT_NE(message.find("view 0"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(p) + ", outside [0, 3]"), std::string::npos) << message;
    EXPECT_EQ(download<float>(cache, C::kRows * C::N), std::vector<float>(C::kRows * C::N, 0.0F));
  }
  // The failure was reported once; an in-range position runs again.
  const std::int32_t three = 3;
  ASSERT_EQ(rrt_memcpy_h2d(ctx_, pos, &three, sizeof three, nullptr), RRT_OK);
  ASSERT_EQ(rrt_graph_replay(graph, stream_), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK) << last_message();
  EXPECT_EQ(download<float>(cache, C::kRows * C::N)[3 * C::N], 4.0F);
}

INSTANTIATE_TEST_SUITE_P(Binds, ViewsTest,
                         ::testing::Values(RRT_BIND_DEVICE_BUILD, RRT_BIND_HOST_BUILD),
                         [](const ::testing::TestParamInfo<rrt_bind_strategy_t> &info) {
                           return info.param == RRT_BIND_DEVICE_BUILD ? std::string("device_build")
                                                                      : std::string("host_build");
                         });

// A desc of the ABI 1.1 size is read as 1.1: the appended fields are never read, and the view
// and device-value operand kinds are unknown to it.
TEST(ViewsAbi11Test, AnAbi11SizeDescIsReadWithoutTheAppendedFields) {
  rrt_context_t ctx = make_context(1);
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  const rrt_tensor_desc_t tensors[2] = {tensor(RRT_DTYPE_F32, {4}),
                                        tensor(RRT_DTYPE_F32, {4}, RRT_DIR_OUT)};
  rrt_operand_t ops[2] = {param_op(0), param_op(1)};
  const rrt_task_desc_t task = {kCopy, 2, ops};
  rrt_callable_desc_t desc{};
  desc.struct_size = offsetof(rrt_callable_desc_t, num_views);
  desc.bind = RRT_BIND_DEVICE_BUILD;
  desc.num_params = 2;
  desc.params = tensors;
  desc.num_tasks = 1;
  desc.tasks = &task;
  // Past the 1.1 size: garbage a 1.1 caller's memory may hold there.
  desc.num_views = 77;
  desc.views = reinterpret_cast<const rrt_view_desc_t *>(std::uintptr_t{8});
  desc.num_device_values = 99;
  std::int32_t id = -1;
  ASSERT_EQ(rrt_callable_prepare(ctx, &desc, &id), RRT_OK) << last_message();
  rrt_capacity_plan_t plan{};
  EXPECT_EQ(rrt_capacity_plan_fit(&desc, &plan), RRT_OK);
  std::vector<float> in = {1, 2, 3, 4};
  std::vector<float> out(4, 0.0F);
  const rrt_tensor_arg_t args_tensors[2] = {{in.data(), 16, RRT_SPACE_HOST},
                                            {out.data(), 16, RRT_SPACE_HOST}};
  const rrt_run_args_t args = run_args(args_tensors);
  ASSERT_EQ(rrt_run(ctx, id, &args), RRT_OK) << last_message();
  EXPECT_EQ(out, in);

  ops[0] = view_op(0);
  EXPECT_EQ(rrt_callable_prepare(ctx, &desc, &id), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("unknown operand kind 4"), std::string::npos) << last_message();
  ops[0] = param_op(0);
  ops[1] = value_op(0);
  EXPECT_EQ(rrt_callable_prepare(ctx, &desc, &id), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("unknown operand kind 5"), std::string::npos) << last_message();
  desc.struct_size = offsetof(rrt_callable_desc_t, num_views) - 4;
  ops[1] = param_op(1);
  EXPECT_EQ(rrt_callable_prepare(ctx, &desc, &id), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

}  // namespace
