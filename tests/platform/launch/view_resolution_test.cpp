// Resolution of view and device-value records (task-graph image version 2).
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "platform/launch/operand_resolution.h"
#include "task_records.h"

namespace replayrt {
namespace {

using testing::task_over;

void read_host(const void *address, void *out, std::size_t bytes) {
  std::memcpy(out, address, bytes);
}

OperandRecord operand(ImageOperandKind kind, std::uint32_t index) {
  return OperandRecord{static_cast<std::uint32_t>(kind), index, 0, 0};
}

// A payload whose tensor 0 is `cache_` (8 rows of 4 floats) and tensor 1 is `values_`.
class ViewResolutionTest : public ::testing::Test {
 protected:
  ViewResolutionTest() {
    addresses_ = {reinterpret_cast<std::uint64_t>(cache_.data()),
                  reinterpret_cast<std::uint64_t>(values_.data())};
    bytes_ = {cache_.size() * sizeof(float), values_.size() * sizeof(std::int32_t)};
    payload_.tensor_addresses = addresses_;
    payload_.tensor_bytes = bytes_;
  }

  // A view of one row of the cache whose row is device value 0 (max `max`).
  ViewRecord row_view(std::uint64_t max) const {
    ViewRecord view{};
    view.source = static_cast<std::uint32_t>(ImageTensorSource::kParam);
    view.index = 0;
    view.byte_offset = 0;
    view.bytes = 4 * sizeof(float);
    view.offset_value = 0;
    view.offset_stride_bytes = 4 * sizeof(float);
    view.offset_value_max = max;
    return view;
  }

  DeviceValueRecord value(std::uint64_t element, std::uint32_t dtype) const {
    DeviceValueRecord record{};
    record.source = static_cast<std::uint32_t>(ImageTensorSource::kParam);
    record.index = 1;
    record.element = element;
    record.dtype = dtype;
    return record;
  }

  OperandError resolve(const std::vector<OperandRecord> &operands, std::uint32_t tensors,
                       std::uint32_t scalars, DeviceMemoryReader reader = &read_host) {
    return resolve_task_operands(task_over(0, tensors, scalars),
                                 OperandSections{operands, views_, device_values_}, payload_,
                                 reader, &out_);
  }

  std::vector<float> cache_ = std::vector<float>(32);
  std::vector<std::int32_t> values_ = {3, -1, 0x3f800000, 9};
  std::vector<std::uint64_t> addresses_;
  std::vector<std::uint64_t> bytes_;
  InvocationPayloadView payload_;
  std::vector<ViewRecord> views_;
  std::vector<DeviceValueRecord> device_values_;
  ResolvedOperands out_;
};

TEST_F(ViewResolutionTest, AFixedViewIsItsBasePlusItsOffsetWithItsOwnSize) {
  ViewRecord view{};
  view.source = static_cast<std::uint32_t>(ImageTensorSource::kBaked);
  view.address = 0x10000;
  view.base_bytes = 256;
  view.byte_offset = 64;
  view.bytes = 128;
  view.offset_value = -1;
  views_ = {view};
  ASSERT_EQ(resolve({operand(ImageOperandKind::kView, 0)}, 1, 0), OperandError::kNone);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(out_.addresses[0]), 0x10040U);
  EXPECT_EQ(out_.sizes[0], 128U);
}

TEST_F(ViewResolutionTest, ADynamicViewMovesByTheDeviceValueTimesItsStride) {
  views_ = {row_view(7)};
  device_values_ = {value(0, RRT_DTYPE_I32)};
  ASSERT_EQ(resolve({operand(ImageOperandKind::kView, 0)}, 1, 0), OperandError::kNone);
  EXPECT_EQ(out_.addresses[0], static_cast<void *>(cache_.data() + std::ptrdiff_t{3} * 4));
  EXPECT_EQ(out_.sizes[0], 16U);
  values_[0] = 6;  // read when resolved, not before
  ASSERT_EQ(resolve({operand(ImageOperandKind::kView, 0)}, 1, 0), OperandError::kNone);
  EXPECT_EQ(out_.addresses[0], static_cast<void *>(cache_.data() + std::ptrdiff_t{6} * 4));
}

TEST_F(ViewResolutionTest, AnOffsetAboveItsMaximumOrNegativeFailsNamingTheView) {
  views_ = {row_view(2)};
  device_values_ = {value(0, RRT_DTYPE_I32), value(1, RRT_DTYPE_I32)};
  ASSERT_EQ(resolve({operand(ImageOperandKind::kView, 0)}, 1, 0),
            OperandError::kViewOffsetOutOfRange);
  EXPECT_EQ(out_.failed_operand, 0U);
  EXPECT_EQ(out_.failed_view, 0U);
  EXPECT_EQ(out_.failed_value, 3);
  EXPECT_EQ(out_.failed_max, 2U);
  views_[0].offset_value = 1;  // -1
  ASSERT_EQ(resolve({operand(ImageOperandKind::kView, 0)}, 1, 0),
            OperandError::kViewOffsetOutOfRange);
  EXPECT_EQ(out_.failed_value, -1);
}

TEST_F(ViewResolutionTest, AViewReachingPastItsBaseIsRefusedEvenWithinItsMaximum) {
  views_ = {row_view(100)};                    // a corrupted maximum
  device_values_ = {value(3, RRT_DTYPE_I32)};  // 9: row 9 of 8
  EXPECT_EQ(resolve({operand(ImageOperandKind::kView, 0)}, 1, 0), OperandError::kBadView);
  views_[0].offset_value = 5;  // no such device value
  EXPECT_EQ(resolve({operand(ImageOperandKind::kView, 0)}, 1, 0), OperandError::kBadDeviceValue);
  EXPECT_EQ(resolve({operand(ImageOperandKind::kView, 1)}, 1, 0), OperandError::kBadView);
}

TEST_F(ViewResolutionTest, DeviceValueScalarsAreSignExtendedOrCarryTheirFloatBits) {
  device_values_ = {value(1, RRT_DTYPE_I32), value(2, RRT_DTYPE_F32)};
  ASSERT_EQ(resolve({operand(ImageOperandKind::kDeviceValue, 0),
                     operand(ImageOperandKind::kDeviceValue, 1)},
                    0, 2),
            OperandError::kNone);
  EXPECT_EQ(out_.scalars[0], ~std::uint64_t{0});
  EXPECT_EQ(rrt_scalar_to_f32(out_.scalars[1]), 1.0F);
}

TEST_F(ViewResolutionTest, ADeviceValueOutsideItsSourceIsRefused) {
  device_values_ = {value(4, RRT_DTYPE_I32)};
  EXPECT_EQ(resolve({operand(ImageOperandKind::kDeviceValue, 0)}, 0, 1),
            OperandError::kBadDeviceValue);
  device_values_ = {value(1, RRT_DTYPE_I64)};  // 8 bytes from element 1 of 2 64-bit values
  EXPECT_EQ(resolve({operand(ImageOperandKind::kDeviceValue, 0)}, 0, 1), OperandError::kNone);
  device_values_ = {value(2, RRT_DTYPE_I64)};
  EXPECT_EQ(resolve({operand(ImageOperandKind::kDeviceValue, 0)}, 0, 1),
            OperandError::kBadDeviceValue);
}

TEST_F(ViewResolutionTest, WithoutAReaderDeviceValuesBecomeDeviceOperandsTheWorkReads) {
  views_ = {row_view(7)};
  device_values_ = {value(0, RRT_DTYPE_I32), value(2, RRT_DTYPE_F32)};
  ASSERT_EQ(
      resolve({operand(ImageOperandKind::kView, 0), operand(ImageOperandKind::kDeviceValue, 1)}, 1,
              1, nullptr),
      OperandError::kNone);
  EXPECT_EQ(out_.addresses[0], static_cast<void *>(cache_.data())) << "the view at offset 0";
  EXPECT_EQ(out_.sizes[0], 16U);
  EXPECT_EQ(out_.scalars[0], 0U);
  ASSERT_EQ(out_.num_device_operands, 2U);
  const rrt_device_operand_t &offset = out_.device_operands[0];
  EXPECT_EQ(offset.kind, RRT_DEVICE_OPERAND_VIEW_OFFSET);
  EXPECT_EQ(offset.index, 0U);
  EXPECT_EQ(offset.value, static_cast<const void *>(values_.data()));
  EXPECT_EQ(offset.dtype, static_cast<std::uint32_t>(RRT_DTYPE_I32));
  EXPECT_EQ(offset.stride_bytes, 16U);
  EXPECT_EQ(offset.value_max, 7U);
  const rrt_device_operand_t &scalar = out_.device_operands[1];
  EXPECT_EQ(scalar.kind, RRT_DEVICE_OPERAND_SCALAR);
  EXPECT_EQ(scalar.index, 0U);
  EXPECT_EQ(scalar.value, static_cast<const void *>(values_.data() + 2));
  const rrt_kernel_args_t args = out_.args();
  EXPECT_EQ(args.num_device_operands, 2U);
  EXPECT_EQ(args.device_operands, out_.device_operands.data());
  EXPECT_EQ(resolve({operand(ImageOperandKind::kView, 0)}, 1, 0), OperandError::kNone);
  EXPECT_EQ(out_.num_device_operands, 0U) << "with a reader nothing is left to the work";
  EXPECT_EQ(out_.args().device_operands, nullptr);
}

TEST_F(ViewResolutionTest, WithoutAReaderEveryAdmissibleOffsetMustStayInsideTheBase) {
  views_ = {row_view(8)};  // rows 0..8 of a cache of 8 rows: the last one reaches past it
  device_values_ = {value(0, RRT_DTYPE_I32)};
  EXPECT_EQ(resolve({operand(ImageOperandKind::kView, 0)}, 1, 0, nullptr), OperandError::kBadView);
  views_[0].offset_value_max = 7;
  EXPECT_EQ(resolve({operand(ImageOperandKind::kView, 0)}, 1, 0, nullptr), OperandError::kNone);
}

TEST_F(ViewResolutionTest, BakedAddressesAreRelativeToTheSectionsBakedBase) {
  ViewRecord view{};
  view.source = static_cast<std::uint32_t>(ImageTensorSource::kBaked);
  view.address = 0x40;
  view.base_bytes = 256;
  view.byte_offset = 16;
  view.bytes = 32;
  view.offset_value = -1;
  views_ = {view};
  OperandRecord baked = operand(ImageOperandKind::kBaked, 0);
  baked.value = 0x100;
  baked.bytes = 64;
  const std::vector<OperandRecord> operands = {baked, operand(ImageOperandKind::kView, 0)};
  ASSERT_EQ(resolve_task_operands(task_over(0, 2, 0),
                                  OperandSections{operands, views_, device_values_, 0x10000},
                                  payload_, &read_host, &out_),
            OperandError::kNone);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(out_.addresses[0]), 0x10100U);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(out_.addresses[1]), 0x10050U);
}

TEST_F(ViewResolutionTest, ViewsAndDeviceValuesHaveTheirPositions) {
  views_ = {row_view(7)};
  device_values_ = {value(0, RRT_DTYPE_I32)};
  EXPECT_EQ(resolve({operand(ImageOperandKind::kDeviceValue, 0)}, 1, 0),
            OperandError::kWrongKindForPosition);
  EXPECT_EQ(resolve({operand(ImageOperandKind::kView, 0)}, 0, 1),
            OperandError::kWrongKindForPosition);
}

}  // namespace
}  // namespace replayrt
