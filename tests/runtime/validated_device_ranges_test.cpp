#include "runtime/validated_device_ranges.h"

#include <array>
#include <cstddef>
#include <vector>

#include <gtest/gtest.h>

namespace replayrt {
namespace {

std::array<std::byte, 256> memory{};

TensorArg device(std::size_t offset, std::uint64_t bytes) {
  return TensorArg{&memory[offset], bytes, RRT_SPACE_DEVICE};
}

TensorArg host(std::size_t offset, std::uint64_t bytes) {
  return TensorArg{&memory[offset], bytes, RRT_SPACE_HOST};
}

TEST(ValidatedDeviceRangesTest, CoversNothingBeforeItRemembers) {
  const ValidatedDeviceRanges validated;
  const std::vector<TensorArg> tensors{device(0, 16)};
  EXPECT_FALSE(validated.covers(tensors, 0));
  EXPECT_FALSE(validated.covers({}, 0));
}

TEST(ValidatedDeviceRangesTest, CoversTheSameDeviceRangesAtTheSameEpoch) {
  ValidatedDeviceRanges validated;
  const std::vector<TensorArg> tensors{device(0, 16), host(32, 8), device(64, 32)};
  validated.remember(tensors, 7);
  EXPECT_TRUE(validated.covers(tensors, 7));
  const std::vector<TensorArg> other_host{device(0, 16), host(128, 4), device(64, 32)};
  EXPECT_TRUE(validated.covers(other_host, 7)) << "HOST tensors are not part of the record";
}

TEST(ValidatedDeviceRangesTest, AnAdvancedEpochCoversNothing) {
  ValidatedDeviceRanges validated;
  const std::vector<TensorArg> tensors{device(0, 16)};
  validated.remember(tensors, 7);
  EXPECT_FALSE(validated.covers(tensors, 8));
}

TEST(ValidatedDeviceRangesTest, AnotherAddressSizeOrCountIsNotCovered) {
  ValidatedDeviceRanges validated;
  validated.remember(std::vector<TensorArg>{device(0, 16), device(64, 32)}, 3);
  EXPECT_FALSE(validated.covers(std::vector<TensorArg>{device(8, 16), device(64, 32)}, 3));
  EXPECT_FALSE(validated.covers(std::vector<TensorArg>{device(0, 16), device(64, 48)}, 3));
  EXPECT_FALSE(validated.covers(std::vector<TensorArg>{device(0, 16)}, 3));
  EXPECT_FALSE(
      validated.covers(std::vector<TensorArg>{device(0, 16), device(64, 32), device(128, 8)}, 3));
  EXPECT_FALSE(validated.covers(std::vector<TensorArg>{device(64, 32), device(0, 16)}, 3));
}

TEST(ValidatedDeviceRangesTest, AnUntrackedEpochIsNeverCovered) {
  ValidatedDeviceRanges validated;
  const std::vector<TensorArg> tensors{device(0, 16)};
  validated.remember(tensors, Device::kUntrackedFreeEpoch);
  EXPECT_FALSE(validated.covers(tensors, Device::kUntrackedFreeEpoch));
}

TEST(ValidatedDeviceRangesTest, MoreDeviceTensorsThanItsCapacityAreForgotten) {
  ValidatedDeviceRanges validated;
  const std::vector<TensorArg> few{device(0, 16)};
  validated.remember(few, 1);
  std::vector<TensorArg> many;
  for (std::size_t i = 0; i <= ValidatedDeviceRanges::kCapacity; ++i) {
    many.push_back(device(i, 1));
  }
  validated.remember(many, 1);
  EXPECT_FALSE(validated.covers(many, 1));
  EXPECT_FALSE(validated.covers(few, 1)) << "the earlier record is forgotten too";
  many.pop_back();
  validated.remember(many, 1);
  EXPECT_TRUE(validated.covers(many, 1)) << "exactly kCapacity ranges are remembered";
}

TEST(ValidatedDeviceRangesTest, ForgetCoversNothing) {
  ValidatedDeviceRanges validated;
  const std::vector<TensorArg> tensors{device(0, 16)};
  validated.remember(tensors, 2);
  validated.forget();
  EXPECT_FALSE(validated.covers(tensors, 2));
}

}  // namespace
}  // namespace replayrt
