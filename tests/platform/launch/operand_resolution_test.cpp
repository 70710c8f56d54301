#include "platform/launch/operand_resolution.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "task_records.h"

namespace replayrt {
namespace {

using testing::task_over;

OperandRecord record(ImageOperandKind kind, std::uint32_t index, std::uint64_t value = 0,
                     std::uint64_t bytes = 0) {
  return OperandRecord{static_cast<std::uint32_t>(kind), index, value, bytes};
}

class OperandResolutionTest : public ::testing::Test {
 protected:
  OperandResolutionTest() {
    payload_.tensor_addresses = addresses_;
    payload_.tensor_bytes = bytes_;
    payload_.scalars = scalars_;
  }

  std::vector<std::uint64_t> addresses_ = {0x1000, 0x2000};
  std::vector<std::uint64_t> bytes_ = {64, 128};
  std::vector<std::uint64_t> scalars_ = {7};
  InvocationPayloadView payload_;
  ResolvedOperands out_;
};

TEST_F(OperandResolutionTest, ResolvesParamsBakedTensorsScalarsAndImmediates) {
  const std::vector<OperandRecord> operands = {
      record(ImageOperandKind::kImmediate, 0, 99),  // another task's operand
      record(ImageOperandKind::kParam, 1),         record(ImageOperandKind::kBaked, 0, 0x3000, 256),
      record(ImageOperandKind::kScalar, 0),        record(ImageOperandKind::kImmediate, 0, 42),
  };
  ASSERT_EQ(resolve_task_operands(task_over(1, 2, 2), operands, payload_, &out_),
            OperandError::kNone);
  const rrt_kernel_args_t args = out_.args();
  ASSERT_EQ(args.num_tensors, 2U);
  ASSERT_EQ(args.num_scalars, 2U);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(args.tensors[0]), 0x2000U);
  EXPECT_EQ(args.tensor_bytes[0], 128U);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(args.tensors[1]), 0x3000U);
  EXPECT_EQ(args.tensor_bytes[1], 256U);
  EXPECT_EQ(args.scalars[0], 7U);
  EXPECT_EQ(args.scalars[1], 42U);
}

TEST_F(OperandResolutionTest, ARangeThatWrapsAroundIsOutsideTheImage) {
  const std::vector<OperandRecord> operands = {record(ImageOperandKind::kParam, 0)};
  EXPECT_EQ(resolve_task_operands(task_over(0xFFFFFFFFU, 2, 0), operands, payload_, &out_),
            OperandError::kRangeOutsideImage);
  EXPECT_EQ(resolve_task_operands(task_over(1, 1, 0), operands, payload_, &out_),
            OperandError::kRangeOutsideImage);
}

TEST_F(OperandResolutionTest, TooManyOperandsAreRefused) {
  const std::vector<OperandRecord> tensors(kMaxTaskTensors + 1,
                                           record(ImageOperandKind::kParam, 0));
  EXPECT_EQ(resolve_task_operands(task_over(0, kMaxTaskTensors + 1, 0), tensors, payload_, &out_),
            OperandError::kTooManyOperands);
  const std::vector<OperandRecord> scalars(kMaxTaskScalars + 1,
                                           record(ImageOperandKind::kImmediate, 0, 5));
  EXPECT_EQ(resolve_task_operands(task_over(0, 0, kMaxTaskScalars + 1), scalars, payload_, &out_),
            OperandError::kTooManyOperands);
}

TEST_F(OperandResolutionTest, ATaskAtBothLimitsResolvesEveryOperand) {
  std::vector<OperandRecord> operands;
  for (std::uint32_t i = 0; i < kMaxTaskTensors; ++i) {
    operands.push_back(record(ImageOperandKind::kBaked, 0, 0x10000 + 0x100 * i, 8 + i));
  }
  for (std::uint32_t i = 0; i < kMaxTaskScalars; ++i) {
    operands.push_back(record(ImageOperandKind::kImmediate, 0, 1000 + i));
  }
  ASSERT_EQ(resolve_task_operands(task_over(0, kMaxTaskTensors, kMaxTaskScalars), operands,
                                  payload_, &out_),
            OperandError::kNone);
  const rrt_kernel_args_t args = out_.args();
  ASSERT_EQ(args.num_tensors, kMaxTaskTensors);
  ASSERT_EQ(args.num_scalars, kMaxTaskScalars);
  for (std::uint32_t i = 0; i < kMaxTaskTensors; ++i) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(args.tensors[i]), 0x10000U + 0x100U * i);
    EXPECT_EQ(args.tensor_bytes[i], 8U + i);
  }
  for (std::uint32_t i = 0; i < kMaxTaskScalars; ++i) {
    EXPECT_EQ(args.scalars[i], 1000U + i);
  }
}

TEST_F(OperandResolutionTest, PayloadIndicesAreCheckedAgainstThePayload) {
  const std::vector<OperandRecord> params = {record(ImageOperandKind::kParam, 2)};
  EXPECT_EQ(resolve_task_operands(task_over(0, 1, 0), params, payload_, &out_),
            OperandError::kParamOutOfRange);
  const std::vector<OperandRecord> scalars = {record(ImageOperandKind::kScalar, 1)};
  EXPECT_EQ(resolve_task_operands(task_over(0, 0, 1), scalars, payload_, &out_),
            OperandError::kScalarOutOfRange);
}

TEST_F(OperandResolutionTest, AScalarRecordInATensorPositionIsRefused) {
  const std::vector<OperandRecord> operands = {record(ImageOperandKind::kScalar, 0),
                                               record(ImageOperandKind::kParam, 0)};
  EXPECT_EQ(resolve_task_operands(task_over(0, 1, 0), operands, payload_, &out_),
            OperandError::kWrongKindForPosition);
  EXPECT_EQ(resolve_task_operands(task_over(1, 0, 1), operands, payload_, &out_),
            OperandError::kWrongKindForPosition);
}

TEST_F(OperandResolutionTest, AnUnknownKindIsRefused) {
  const std::vector<OperandRecord> operands = {OperandRecord{9, 0, 0, 0}};
  EXPECT_EQ(resolve_task_operands(task_over(0, 1, 0), operands, payload_, &out_),
            OperandError::kUnknownKind);
}

}  // namespace
}  // namespace replayrt
