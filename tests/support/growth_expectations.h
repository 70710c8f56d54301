// Growth contexts and status expectations the memory-object tests share.
#pragma once

#include <cstddef>
#include <cstdint>

#include <gtest/gtest.h>

#include "common/status.h"
#include "memory/growth_guard.h"

namespace replayrt::testing {

inline constexpr GrowthContext kProgram{ExecutionMode::kProgram, false};
inline constexpr GrowthContext kKernel{ExecutionMode::kKernel, false};
inline constexpr GrowthContext kLaunch{ExecutionMode::kKernel, true};

inline std::byte *byte_at(void *base, std::uint64_t offset) {
  return static_cast<std::byte *>(base) + offset;
}

// Checks that `status` is the guard's capacity refusal for `point` with the given sizes.
inline void expect_refusal(const Status &status, GrowthPoint point, std::uint64_t requested,
                           std::uint64_t capacity) {
  EXPECT_EQ(status.code(), RRT_ERR_INTERNAL) << status.message();
  EXPECT_TRUE(status.is_capacity_refusal());
  EXPECT_EQ(status.growth_point(), point);
  EXPECT_EQ(status.requested_bytes(), requested);
  EXPECT_EQ(status.capacity_bytes(), capacity);
}

// Checks that two statuses agree field by field, message included.
inline void expect_same_status(const Status &actual, const Status &expected) {
  EXPECT_EQ(actual.code(), expected.code());
  EXPECT_EQ(actual.is_capacity_refusal(), expected.is_capacity_refusal());
  EXPECT_EQ(actual.growth_point(), expected.growth_point());
  EXPECT_EQ(actual.requested_bytes(), expected.requested_bytes());
  EXPECT_EQ(actual.capacity_bytes(), expected.capacity_bytes());
  EXPECT_EQ(actual.message(), expected.message());
}

}  // namespace replayrt::testing
