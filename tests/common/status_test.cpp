#include "common/status.h"

#include <gtest/gtest.h>

namespace replayrt {
namespace {

Status fails_with(rrt_status_t code) {
  return Status::error(code, "inner");
}

Status forwards(rrt_status_t code) {
  RRT_RETURN_IF_ERROR(fails_with(code));
  return Status::error(RRT_ERR_INTERNAL, "not reached");
}

TEST(StatusTest, DefaultIsOkWithoutDetail) {
  const Status status;
  EXPECT_TRUE(status.is_ok());
  EXPECT_EQ(status.code(), RRT_OK);
  EXPECT_TRUE(status.message().empty());
  EXPECT_FALSE(status.is_capacity_refusal());
  EXPECT_EQ(status.growth_point(), GrowthPoint::kNone);
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  const Status status = Status::error(RRT_ERR_INVALID_ARGUMENT, "bad size");
  EXPECT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "bad size");
  EXPECT_FALSE(status.is_capacity_refusal());
}

TEST(StatusTest, CapacityRefusalIsInternalWithDetail) {
  const Status status = Status::capacity_refusal(GrowthPoint::kHostStaging, 10, 5, "no");
  EXPECT_EQ(status.code(), RRT_ERR_INTERNAL);
  EXPECT_TRUE(status.is_capacity_refusal());
  EXPECT_EQ(status.growth_point(), GrowthPoint::kHostStaging);
  EXPECT_EQ(status.requested_bytes(), 10u);
  EXPECT_EQ(status.capacity_bytes(), 5u);
}

TEST(StatusTest, CopiesAreDeepAndIndependent) {
  Status original = Status::capacity_refusal(GrowthPoint::kArenaGmHeap, 2, 1, "msg");
  const Status copy = original;
  original = Status::ok();
  EXPECT_EQ(copy.code(), RRT_ERR_INTERNAL);
  EXPECT_EQ(copy.message(), "msg");
  EXPECT_EQ(copy.growth_point(), GrowthPoint::kArenaGmHeap);
}

TEST(StatusTest, WithContextPrefixesAndKeepsDetail) {
  const Status status =
      Status::capacity_refusal(GrowthPoint::kArenaGmSm, 2, 1, "refused").with_context("bind");
  EXPECT_EQ(status.message(), "bind: refused");
  EXPECT_EQ(status.growth_point(), GrowthPoint::kArenaGmSm);
  EXPECT_TRUE(Status::ok().with_context("bind").message().empty());
}

TEST(StatusTest, ReturnIfErrorForwardsFailures) {
  const Status status = forwards(RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(status.code(), RRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(status.message(), "inner");
}

}  // namespace
}  // namespace replayrt
