// rrt_last_error_message: the calling thread's last failure message, uncut, beside the
// detail's fixed field.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

namespace {

std::string full_last_message() {
  std::size_t length = 0;
  EXPECT_EQ(rrt_last_error_message(nullptr, 0, &length), RRT_OK);
  std::string message(length + 1, '\0');
  std::size_t again = 0;
  EXPECT_EQ(rrt_last_error_message(message.data(), message.size(), &again), RRT_OK);
  EXPECT_EQ(again, length);
  message.resize(length);
  return message;
}

class LastErrorMessageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rrt_context_options_t options{};
    options.struct_size = sizeof options;
    options.platform = RRT_PLATFORM_SIM;
    ASSERT_EQ(rrt_context_create(&options, &ctx_), RRT_OK);
  }
  void TearDown() override { EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK); }

  // Fails a kernel lookup whose message names a kernel of `name_length` characters.
  std::string fail_lookup(std::size_t name_length) {
    const std::string name(name_length, 'k');
    std::int32_t id = -1;
    EXPECT_EQ(rrt_kernel_lookup(ctx_, name.c_str(), &id), RRT_ERR_INVALID_ARGUMENT);
    return "rrt_kernel_lookup: no kernel named '" + name + "'";
  }

  rrt_context_t ctx_ = nullptr;
};

TEST_F(LastErrorMessageTest, ALongMessageComesUncutWhereTheDetailCutsIt) {
  const std::string expected = fail_lookup(400);
  rrt_error_detail_t detail{};
  ASSERT_EQ(rrt_last_error(&detail), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(std::strlen(detail.message), sizeof detail.message - 1);
  EXPECT_EQ(std::string(detail.message), expected.substr(0, sizeof detail.message - 1));
  EXPECT_EQ(full_last_message(), expected);
}

TEST_F(LastErrorMessageTest, ASmallBufferGetsTheStartAndTheFullLength) {
  const std::string expected = fail_lookup(300);
  char small[10];
  std::memset(small, 'x', sizeof small);
  std::size_t length = 0;
  ASSERT_EQ(rrt_last_error_message(small, sizeof small, &length), RRT_OK);
  EXPECT_EQ(length, expected.size());
  EXPECT_EQ(std::string(small), expected.substr(0, sizeof small - 1));
}

TEST_F(LastErrorMessageTest, AShortMessageIsTheDetailsMessage) {
  const std::string expected = fail_lookup(3);
  rrt_error_detail_t detail{};
  ASSERT_EQ(rrt_last_error(&detail), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(full_last_message(), std::string(detail.message));
  EXPECT_EQ(full_last_message(), expected);
}

TEST_F(LastErrorMessageTest, NullOutputsAreRefusedAndTheRecordedFailureStays) {
  const std::string expected = fail_lookup(280);
  char buffer[4];
  EXPECT_EQ(rrt_last_error_message(buffer, sizeof buffer, nullptr), RRT_ERR_INVALID_ARGUMENT);
  std::size_t length = 0;
  EXPECT_EQ(rrt_last_error_message(nullptr, 4, &length), RRT_ERR_INVALID_ARGUMENT);
  rrt_error_detail_t detail{};
  EXPECT_EQ(rrt_last_error(&detail), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(full_last_message(), expected);
}

TEST_F(LastErrorMessageTest, EachThreadHasItsOwnAndANewThreadHasNone) {
  const std::string expected = fail_lookup(260);
  std::string other_thread = "unset";
  std::thread([&] { other_thread = full_last_message(); }).join();
  EXPECT_EQ(other_thread, "");
  EXPECT_EQ(full_last_message(), expected);
}

}  // namespace
