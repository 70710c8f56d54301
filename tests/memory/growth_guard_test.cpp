#include "memory/growth_guard.h"

#include <string>

#include <gtest/gtest.h>

namespace replayrt {
namespace {

struct GuardCase {
  const char *name;
  ExecutionMode mode;
  bool in_launch;
  bool published;
  std::uint64_t capacity;
  std::uint64_t required;
  GrowthDecision expected;
};

constexpr auto P = ExecutionMode::kProgram;
constexpr auto K = ExecutionMode::kKernel;
using D = GrowthDecision;

const GuardCase kCases[] = {
    {"ProgramEmptyFirstAllocates", P, false, false, 0, 100, D::kFirstAllocate},
    {"ProgramFitsKeeps", P, false, true, 100, 100, D::kKeep},
    {"ProgramSmallerKeeps", P, false, true, 100, 1, D::kKeep},
    {"ProgramLargerGrows", P, false, true, 100, 101, D::kGrow},
    {"ProgramZeroOnPublishedKeeps", P, false, true, 100, 0, D::kKeep},
    {"ProgramZeroOnEmptyKeeps", P, false, false, 0, 0, D::kKeep},
    {"ProgramIgnoresLaunchFlag", P, true, true, 100, 101, D::kGrow},
    {"ProgramIgnoresLaunchFlagOnFirstAllocation", P, true, false, 0, 100, D::kFirstAllocate},
    {"KernelEmptyFirstAllocates", K, false, false, 0, 100, D::kFirstAllocate},
    {"KernelFitsKeeps", K, false, true, 100, 100, D::kKeep},
    {"KernelSmallerKeeps", K, false, true, 100, 99, D::kKeep},
    {"KernelOneByteOverRefuses", K, false, true, 100, 101, D::kRefuse},
    {"KernelZeroOnPublishedKeeps", K, false, true, 100, 0, D::kKeep},
    {"KernelZeroOnEmptyKeeps", K, false, false, 0, 0, D::kKeep},
    {"KernelFirstAllocationInLaunchRefuses", K, true, false, 0, 100, D::kRefuse},
    {"KernelZeroInLaunchKeeps", K, true, false, 0, 0, D::kKeep},
    {"KernelFitInLaunchKeeps", K, true, true, 100, 100, D::kKeep},
    {"KernelGrowthInLaunchRefuses", K, true, true, 100, 101, D::kRefuse},
};

class GrowthGuardTest : public ::testing::TestWithParam<GuardCase> {};

TEST_P(GrowthGuardTest, Decides) {
  const GuardCase &c = GetParam();
  const GrowthRequest request{
      GrowthPoint::kRetainedStaging, {c.mode, c.in_launch}, c.published, c.capacity, c.required};
  EXPECT_EQ(growth_decision_name(decide_growth(request)), growth_decision_name(c.expected));
}

INSTANTIATE_TEST_SUITE_P(Table, GrowthGuardTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<GuardCase> &info) {
                           return std::string(info.param.name);
                         });

TEST(GrowthGuardRefusalTest, NamesThePointRequestAndCapacity) {
  const GrowthRequest request{GrowthPoint::kArenaGmSm, {K, false}, true, 4096, 8192};
  const Status refusal = refuse_growth(request);
  EXPECT_EQ(refusal.code(), RRT_ERR_INTERNAL);
  EXPECT_TRUE(refusal.is_capacity_refusal());
  EXPECT_EQ(refusal.growth_point(), GrowthPoint::kArenaGmSm);
  EXPECT_EQ(refusal.requested_bytes(), 8192u);
  EXPECT_EQ(refusal.capacity_bytes(), 4096u);
  EXPECT_NE(refusal.message().find("gm_sm"), std::string::npos) << refusal.message();
  EXPECT_NE(refusal.message().find("8192"), std::string::npos) << refusal.message();
  EXPECT_NE(refusal.message().find("4096"), std::string::npos) << refusal.message();
}

TEST(GrowthGuardRefusalTest, FirstAllocationDuringLaunchIsChargedToLaunchAllocation) {
  const GrowthRequest request{GrowthPoint::kRetainedStaging, {K, true}, false, 0, 2048};
  const Status refusal = refuse_growth(request);
  EXPECT_EQ(refusal.growth_point(), GrowthPoint::kLaunchAllocation);
  EXPECT_EQ(refusal.requested_bytes(), 2048u);
  EXPECT_EQ(refusal.capacity_bytes(), 0u);
  EXPECT_NE(refusal.message().find("retained_staging"), std::string::npos) << refusal.message();
}

TEST(GrowthGuardRefusalTest, GrowthDuringLaunchIsChargedToTheBuffersOwnPoint) {
  const GrowthRequest request{GrowthPoint::kHostStaging, {K, true}, true, 1024, 2048};
  const Status refusal = refuse_growth(request);
  EXPECT_EQ(refusal.growth_point(), GrowthPoint::kHostStaging);
  EXPECT_EQ(refusal.requested_bytes(), 2048u);
  EXPECT_EQ(refusal.capacity_bytes(), 1024u);
}

TEST(GrowthGuardNameTest, EveryDecisionHasAName) {
  EXPECT_STREQ(growth_decision_name(D::kKeep), "keep");
  EXPECT_STREQ(growth_decision_name(D::kFirstAllocate), "first_allocate");
  EXPECT_STREQ(growth_decision_name(D::kGrow), "grow");
  EXPECT_STREQ(growth_decision_name(D::kRefuse), "refuse");
}

}  // namespace
}  // namespace replayrt
