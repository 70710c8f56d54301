#include "common/growth_point.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace replayrt {
namespace {

TEST(GrowthPointTest, RegistryCoversEveryIdOfTheCEnumInOrder) {
  const auto registry = growth_point_registry();
  ASSERT_EQ(registry.size(), static_cast<std::size_t>(RRT_GROWTH_POINT_COUNT));
  std::set<std::string> names;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    EXPECT_EQ(growth_point_index(registry[i].point), static_cast<int>(i));
    EXPECT_TRUE(names.insert(registry[i].name).second) << registry[i].name;
    EXPECT_STRNE(registry[i].upstream, "");
    EXPECT_STRNE(registry[i].buffer, "");
  }
}

TEST(GrowthPointTest, NamesMatchTheRegistry) {
  EXPECT_STREQ(growth_point_name(GrowthPoint::kArenaGmHeap), "gm_heap");
  EXPECT_STREQ(growth_point_name(GrowthPoint::kLaunchAllocation), "launch_allocation");
  EXPECT_STREQ(growth_point_name(GrowthPoint::kNone), "none");
  EXPECT_STREQ(growth_point_name(static_cast<GrowthPoint>(99)), "none");
}

TEST(GrowthPointTest, ValuesArePinnedToTheCAbi) {
  static_assert(RRT_GROWTH_NONE == -1);
  static_assert(RRT_GROWTH_ARENA_GM_HEAP == 0);
  static_assert(RRT_GROWTH_ARENA_GM_SM == 1);
  static_assert(RRT_GROWTH_ARENA_RUNTIME_POOL == 2);
  static_assert(RRT_GROWTH_RETAINED_STAGING == 3);
  static_assert(RRT_GROWTH_GRAPH_DEFINITION == 4);
  static_assert(RRT_GROWTH_HOST_STAGING == 5);
  static_assert(RRT_GROWTH_DFX_COLLECTORS == 6);
  static_assert(RRT_GROWTH_LAUNCH_ALLOCATION == 7);
  SUCCEED();
}

}  // namespace
}  // namespace replayrt
