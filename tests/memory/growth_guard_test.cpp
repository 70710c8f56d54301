#include "memory/growth_guard.h"

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
  ZeroRequest zero;
  GrowthDecision expected;
};

constexpr auto P = ExecutionMode::kProgram;
constexpr auto K = ExecutionMode::kKernel;
constexpr auto Keeps = ZeroRequest::kKeeps;
constexpr auto Releases = ZeroRequest::kReleases;
using D = GrowthDecision;

const GuardCase kCases[] = {
    {"ProgramEmptyFirstAllocates", P, false, false, 0, 100, Keeps, D::kFirstAllocate},
    {"ProgramFitsKeeps", P, false, true, 100, 100, Keeps, D::kKeep},
    {"ProgramSmallerKeeps", P, false, true, 100, 1, Keeps, D::kKeep},
    {"ProgramLargerGrows", P, false, true, 100, 101, Keeps, D::kGrow},
    {"ProgramZeroKeepsWhenZeroKeeps", P, false, true, 100, 0, Keeps, D::kKeep},
    {"ProgramZeroReleasesRegion", P, false, true, 100, 0, Releases, D::kRelease},
    {"ProgramZeroOnEmptyRegionKeeps", P, false, false, 0, 0, Releases, D::kKeep},
    {"ProgramIgnoresLaunchFlag", P, true, true, 100, 101, Keeps, D::kGrow},
    {"KernelEmptyFirstAllocates", K, false, false, 0, 100, Keeps, D::kFirstAllocate},
    {"KernelFitsKeeps", K, false, true, 100, 100, Keeps, D::kKeep},
    {"KernelSmallerKeeps", K, false, true, 100, 99, Keeps, D::kKeep},
    {"KernelOneByteOverRefuses", K, false, true, 100, 101, Keeps, D::kRefuse},
    {"KernelReleaseOfPublishedRefuses", K, false, true, 100, 0, Releases, D::kRefuse},
    {"KernelZeroKeepsWhenZeroKeeps", K, false, true, 100, 0, Keeps, D::kKeep},
    {"KernelZeroOnEmptyRegionKeeps", K, false, false, 0, 0, Releases, D::kKeep},
    {"KernelFirstAllocationInLaunchRefuses", K, true, false, 0, 100, Keeps, D::kRefuse},
    {"KernelFitInLaunchKeeps", K, true, true, 100, 100, Keeps, D::kKeep},
    {"KernelGrowthInLaunchRefuses", K, true, true, 100, 101, Keeps, D::kRefuse},
};

class GrowthGuardTest : public ::testing::TestWithParam<GuardCase> {};

TEST_P(GrowthGuardTest, Decides) {
  const GuardCase &c = GetParam();
  const GrowthRequest request{GrowthPoint::kRetainedStaging,
                              {c.mode, c.in_launch},
                              c.published,
                              c.capacity,
                              c.required,
                              c.zero};
  EXPECT_EQ(growth_decision_name(decide_growth(request)), growth_decision_name(c.expected));
}

INSTANTIATE_TEST_SUITE_P(Table, GrowthGuardTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<GuardCase> &info) {
                           return std::string(info.param.name);
                         });

TEST(GrowthGuardRefusalTest, NamesThePointRequestAndCapacity) {
  const GrowthRequest request{GrowthPoint::kArenaGmSm, {K, false}, true, 4096, 8192, Releases};
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

TEST(GrowthGuardRefusalTest, ReleaseRefusalSaysRelease) {
  const GrowthRequest request{GrowthPoint::kArenaRuntimePool, {K, false}, true, 4096, 0, Releases};
  const Status refusal = refuse_growth(request);
  EXPECT_EQ(refusal.growth_point(), GrowthPoint::kArenaRuntimePool);
  EXPECT_NE(refusal.message().find("releasing"), std::string::npos) << refusal.message();
}

TEST(GrowthGuardRefusalTest, FirstAllocationDuringLaunchIsChargedToLaunchAllocation) {
  const GrowthRequest request{GrowthPoint::kRetainedStaging, {K, true}, false, 0, 2048, Keeps};
  const Status refusal = refuse_growth(request);
  EXPECT_EQ(refusal.growth_point(), GrowthPoint::kLaunchAllocation);
  EXPECT_EQ(refusal.requested_bytes(), 2048u);
  EXPECT_NE(refusal.message().find("retained_staging"), std::string::npos) << refusal.message();
}

}  // namespace
}  // namespace replayrt
