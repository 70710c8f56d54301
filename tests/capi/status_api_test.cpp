// The error table of the public header: values pinned, names complete.
#include <cstdint>
#include <string>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

namespace {

struct PinnedCode {
  rrt_status_t code;
  int value;
  const char *name;
};

constexpr PinnedCode kTable[] = {
    {RRT_OK, 0, "RRT_OK"},
    {RRT_ERR_INTERNAL, -1000, "RRT_ERR_INTERNAL"},
    {RRT_ERR_UNSUPPORTED, -1001, "RRT_ERR_UNSUPPORTED"},
    {RRT_ERR_PREPARED_INCOMPATIBLE, -1002, "RRT_ERR_PREPARED_INCOMPATIBLE"},
    {RRT_ERR_INVALID_STATE, -1003, "RRT_ERR_INVALID_STATE"},
    {RRT_ERR_INVALID_ARGUMENT, -1004, "RRT_ERR_INVALID_ARGUMENT"},
    {RRT_ERR_CALLABLE_COUNT_EXCEEDED, -1005, "RRT_ERR_CALLABLE_COUNT_EXCEEDED"},
    {RRT_ERR_CALLABLE_BYTES_EXCEEDED, -1006, "RRT_ERR_CALLABLE_BYTES_EXCEEDED"},
    {RRT_ERR_CALLABLE_NOT_RESIDENT, -1007, "RRT_ERR_CALLABLE_NOT_RESIDENT"},
    {RRT_ERR_OUT_OF_MEMORY, -1008, "RRT_ERR_OUT_OF_MEMORY"},
    {RRT_ERR_STALE_ADDRESS, -1009, "RRT_ERR_STALE_ADDRESS"},
    {RRT_ERR_KERNEL_FAILED, -1010, "RRT_ERR_KERNEL_FAILED"},
};

TEST(StatusApiTest, ValuesArePinned) {
  for (const PinnedCode &entry : kTable) {
    EXPECT_EQ(entry.code, entry.value) << entry.name;
  }
  EXPECT_EQ(RRT_ABI_VERSION, 1);
  EXPECT_EQ(RRT_ABI_VERSION_MAJOR, 1);
  EXPECT_EQ(RRT_ABI_VERSION_MINOR, 5);
  EXPECT_EQ(RRT_GROWTH_POINT_COUNT, 8);
  EXPECT_EQ(sizeof(rrt_stats_t::refusals), 8 * sizeof(uint64_t));
}

// The compile-time test a caller makes for what a minor version added.
#if RRT_ABI_VERSION_MAJOR != 1 || RRT_ABI_VERSION_MINOR < 5
#error "this suite needs the ABI version 1.5 header"
#endif

TEST(StatusApiTest, TheLibraryReportsTheVersionOfItsHeader) {
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  ASSERT_EQ(rrt_abi_version(&major, &minor), RRT_OK);
  EXPECT_EQ(major, static_cast<std::uint32_t>(RRT_ABI_VERSION_MAJOR));
  EXPECT_EQ(minor, static_cast<std::uint32_t>(RRT_ABI_VERSION_MINOR));
}

TEST(StatusApiTest, TheVersionQueryRefusesNullOutputsAndWritesNothing) {
  std::uint32_t major = 77;
  std::uint32_t minor = 77;
  EXPECT_EQ(rrt_abi_version(nullptr, &minor), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minor, 77u);
  EXPECT_EQ(rrt_abi_version(&major, nullptr), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(major, 77u);
  rrt_error_detail_t detail{};
  EXPECT_EQ(rrt_last_error(&detail), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(detail.message), "rrt_abi_version: minor is null");
}

TEST(StatusApiTest, EveryCodeHasItsName) {
  for (const PinnedCode &entry : kTable) {
    EXPECT_STREQ(rrt_status_name(entry.code), entry.name);
  }
}

TEST(StatusApiTest, UnknownCodesHaveTheUnknownName) {
  for (const rrt_status_t code : {1, -1, -999, -1011, -2000}) {
    const char *name = rrt_status_name(code);
    ASSERT_NE(name, nullptr);
    EXPECT_STREQ(name, "RRT_ERR_UNKNOWN");
  }
}

TEST(StatusApiTest, ModeValuesArePinned) {
  EXPECT_EQ(RRT_MODE_PROGRAM, 0);
  EXPECT_EQ(RRT_MODE_KERNEL, 1);
}

TEST(StatusApiTest, EveryGrowthPointHasItsEnumeratorName) {
  struct Named {
    rrt_growth_point_t point;
    const char *name;
  };
  constexpr Named kGrowthPoints[] = {
      {RRT_GROWTH_NONE, "RRT_GROWTH_NONE"},
      {RRT_GROWTH_ARENA_GM_HEAP, "RRT_GROWTH_ARENA_GM_HEAP"},
      {RRT_GROWTH_ARENA_GM_SM, "RRT_GROWTH_ARENA_GM_SM"},
      {RRT_GROWTH_ARENA_RUNTIME_POOL, "RRT_GROWTH_ARENA_RUNTIME_POOL"},
      {RRT_GROWTH_RETAINED_STAGING, "RRT_GROWTH_RETAINED_STAGING"},
      {RRT_GROWTH_GRAPH_DEFINITION, "RRT_GROWTH_GRAPH_DEFINITION"},
      {RRT_GROWTH_HOST_STAGING, "RRT_GROWTH_HOST_STAGING"},
      {RRT_GROWTH_DFX_COLLECTORS, "RRT_GROWTH_DFX_COLLECTORS"},
      {RRT_GROWTH_LAUNCH_ALLOCATION, "RRT_GROWTH_LAUNCH_ALLOCATION"},
  };
  static_assert(sizeof kGrowthPoints / sizeof kGrowthPoints[0] == RRT_GROWTH_POINT_COUNT + 1);
  for (const Named &entry : kGrowthPoints) {
    EXPECT_STREQ(rrt_growth_point_name(entry.point), entry.name);
  }
}

TEST(StatusApiTest, UnknownGrowthPointsHaveTheUnknownName) {
  for (const int value : {-2, RRT_GROWTH_POINT_COUNT, 100}) {
    const char *name = rrt_growth_point_name(static_cast<rrt_growth_point_t>(value));
    ASSERT_NE(name, nullptr);
    EXPECT_STREQ(name, "RRT_GROWTH_UNKNOWN");
  }
}

}  // namespace
