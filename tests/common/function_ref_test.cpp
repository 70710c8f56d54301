#include "common/function_ref.h"

#include <type_traits>

#include <gtest/gtest.h>

namespace replayrt {
namespace {

TEST(FunctionRefTest, CallsTheCallableItRefersToWithItsState) {
  int calls = 0;
  auto add = [&calls](int a, int b) {
    ++calls;
    return a + b;
  };
  const FunctionRef<int(int, int)> ref = add;
  EXPECT_TRUE(ref);
  EXPECT_EQ(ref(2, 3), 5);
  EXPECT_EQ(ref(4, 4), 8);
  EXPECT_EQ(calls, 2);
}

TEST(FunctionRefTest, RefersToAConstCallable) {
  const auto twice = [](int value) { return 2 * value; };
  const FunctionRef<int(int)> ref = twice;
  EXPECT_EQ(ref(21), 42);
}

TEST(FunctionRefTest, IsEmptyWhenMadeFromNothing) {
  const FunctionRef<void()> made_empty;
  const FunctionRef<void()> made_from_null = nullptr;
  EXPECT_FALSE(made_empty);
  EXPECT_TRUE(made_empty == nullptr);
  EXPECT_FALSE(made_from_null);
  auto noop = [] {};
  EXPECT_FALSE(FunctionRef<void()>(noop) == nullptr);
}

TEST(FunctionRefTest, TakesNoTemporaryCallable) {
  using Lambda = decltype([](int) { return 0; });
  EXPECT_TRUE((std::is_constructible_v<FunctionRef<int(int)>, Lambda &>));
  EXPECT_FALSE((std::is_constructible_v<FunctionRef<int(int)>, Lambda &&>));
  EXPECT_FALSE((std::is_constructible_v<FunctionRef<int(int)>, int &>));
}

}  // namespace
}  // namespace replayrt
