// The decoder built-ins through the public C ABI on the simulator: one program-mode run of a
// token step's front (embedding of a token id held in a tensor, then a linear layer on
// bf16 [out, in] weights), and a bad id failing the run with the kernel and code named.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"

namespace {

using replayrt::testing::last_message;
using replayrt::testing::run_args;

rrt_tensor_desc_t tensor(rrt_dtype_t dtype, std::uint64_t elements, rrt_direction_t direction) {
  rrt_tensor_desc_t desc{};
  desc.dtype = dtype;
  desc.ndim = 1;
  desc.shape[0] = elements;
  desc.direction = direction;
  return desc;
}

constexpr std::uint64_t kVocab = 5;
constexpr std::uint64_t kDim = 4;
constexpr std::uint64_t kOut = 3;

// embedding(table f32 [V, D], ids [1]) -> h [1, D]; linear(h, w bf16 [OUT, D]) -> y [1, OUT].
class DecoderBuiltinsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = RRT_PLATFORM_SIM;
    ASSERT_EQ(rrt_context_create(&options, &ctx_), RRT_OK) << last_message();
    ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
    std::int32_t embedding = -1;
    std::int32_t linear = -1;
    ASSERT_EQ(rrt_kernel_lookup(ctx_, "embedding", &embedding), RRT_OK);
    ASSERT_EQ(rrt_kernel_lookup(ctx_, "linear", &linear), RRT_OK);
    params_ = {
        tensor(RRT_DTYPE_F32, kVocab * kDim, RRT_DIR_IN), tensor(RRT_DTYPE_I32, 1, RRT_DIR_IN),
        tensor(RRT_DTYPE_BF16, kOut * kDim, RRT_DIR_IN), tensor(RRT_DTYPE_F32, kOut, RRT_DIR_OUT)};
    hidden_ = tensor(RRT_DTYPE_F32, kDim, RRT_DIR_INOUT);
    embedding_operands_ = {{RRT_OPERAND_PARAM, 0},
                           {RRT_OPERAND_PARAM, 1},
                           {RRT_OPERAND_INTERMEDIATE, 0},
                           {RRT_OPERAND_IMMEDIATE, kVocab},
                           {RRT_OPERAND_IMMEDIATE, kDim},
                           {RRT_OPERAND_IMMEDIATE, 1},
                           {RRT_OPERAND_IMMEDIATE, RRT_DTYPE_F32}};
    linear_operands_ = {{RRT_OPERAND_INTERMEDIATE, 0},
                        {RRT_OPERAND_PARAM, 2},
                        {RRT_OPERAND_PARAM, 3},
                        {RRT_OPERAND_IMMEDIATE, 1},
                        {RRT_OPERAND_IMMEDIATE, kDim},
                        {RRT_OPERAND_IMMEDIATE, kOut},
                        {RRT_OPERAND_IMMEDIATE, RRT_DTYPE_BF16}};
    tasks_[0] = {embedding, static_cast<std::uint32_t>(embedding_operands_.size()),
                 embedding_operands_.data()};
    tasks_[1] = {linear, static_cast<std::uint32_t>(linear_operands_.size()),
                 linear_operands_.data()};
    desc_.struct_size = sizeof desc_;
    desc_.bind = RRT_BIND_DEVICE_BUILD;
    desc_.num_params = static_cast<std::uint32_t>(params_.size());
    desc_.params = params_.data();
    desc_.num_intermediates = 1;
    desc_.intermediates = &hidden_;
    desc_.num_tasks = 2;
    desc_.tasks = tasks_;
    ASSERT_EQ(rrt_callable_prepare(ctx_, &desc_, &callable_), RRT_OK) << last_message();
    for (std::uint32_t i = 0; i < kVocab * kDim; ++i) {
      table_[i] = static_cast<float>(i);
    }
    // bf16 weights: row r is (1, 0.5, 0.25, 2) * 2^r (r added to the bf16 exponent).
    const std::uint16_t ones[kDim] = {0x3F80, 0x3F00, 0x3E80, 0x4000};
    for (std::uint32_t r = 0; r < kOut; ++r) {
      for (std::uint32_t c = 0; c < kDim; ++c) {
        weights_[r * kDim + c] = static_cast<std::uint16_t>(ones[c] + (r << 7U));
      }
    }
  }
  void TearDown() override {
    if (ctx_ != nullptr) {
      EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK);
    }
  }

  rrt_status_t run_with_id(std::int32_t id) {
    std::vector<rrt_tensor_arg_t> tensors = {{table_, sizeof table_, RRT_SPACE_HOST},
                                             {&id, sizeof id, RRT_SPACE_HOST},
                                             {weights_, sizeof weights_, RRT_SPACE_HOST},
                                             {y_, sizeof y_, RRT_SPACE_HOST}};
    const rrt_run_args_t args = run_args(tensors);
    return rrt_run(ctx_, callable_, &args);
  }

  rrt_context_t ctx_ = nullptr;
  std::vector<rrt_tensor_desc_t> params_;
  rrt_tensor_desc_t hidden_{};
  std::vector<rrt_operand_t> embedding_operands_;
  std::vector<rrt_operand_t> linear_operands_;
  rrt_task_desc_t tasks_[2]{};
  rrt_callable_desc_t desc_{};
  std::int32_t callable_ = -1;
  float table_[kVocab * kDim]{};
  std::uint16_t weights_[kOut * kDim]{};
  float y_[kOut] = {-1.0F, -1.0F, -1.0F};
};

TEST_F(DecoderBuiltinsTest, AnEmbeddingRowFeedsALinearLayerOnBf16Weights) {
  ASSERT_EQ(run_with_id(3), RRT_OK) << last_message();
  // Row 3 of the table is (12, 13, 14, 15); 12 + 6.5 + 3.5 + 30 = 52, times 2^r.
  EXPECT_EQ(y_[0], 52.0F);
  EXPECT_EQ(y_[1], 104.0F);
  EXPECT_EQ(y_[2], 208.0F);
}

TEST_F(DecoderBuiltinsTest, AnIdOutsideTheVocabularyFailsTheRunNamingKernelAndCode) {
  EXPECT_EQ(run_with_id(static_cast<std::int32_t>(kVocab)), RRT_ERR_KERNEL_FAILED);
  const std::string message = last_message();
  EXPECT_NE(message.find("'embedding'"), std::string::npos) << message;
  EXPECT_NE(message.find("code 8"), std::string::npos) << message;
  EXPECT_EQ(y_[0], -1.0F) << "the output was not written";
  ASSERT_EQ(run_with_id(0), RRT_OK) << "the context runs on: " << last_message();
  EXPECT_EQ(y_[0], 0.0F + 0.5F + 0.5F + 6.0F);
}

}  // namespace
