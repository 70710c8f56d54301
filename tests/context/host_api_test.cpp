#include "context/host_api.h"

#include <gtest/gtest.h>

namespace replayrt {
namespace {

struct FakeRunner {
  bool kernel = false;
  GrowthContext seen;
  int retained_calls = 0;
};

Status fake_retained_begin(void *runner, GrowthContext growth, int, std::uint64_t) {
  auto *fake = static_cast<FakeRunner *>(runner);
  fake->seen = growth;
  ++fake->retained_calls;
  return Status::ok();
}

bool fake_is_kernel(void *runner) {
  return static_cast<FakeRunner *>(runner)->kernel;
}

TEST(HostApiTest, ATableWithoutIsKernelModeReadsAsProgramMode) {
  // Built with designated initializers, as test fakes are: the last entry is left out.
  const HostApiOps ops{.retained_begin = &fake_retained_begin};
  FakeRunner runner;
  runner.kernel = true;
  const HostApi api(&ops, &runner, 0, 0, false);
  EXPECT_FALSE(api.is_kernel_mode());
  ASSERT_TRUE(api.retained_begin(1024).is_ok());
  EXPECT_EQ(runner.seen.mode, ExecutionMode::kProgram);
}

TEST(HostApiTest, IsKernelModeIsAQueryOfTheRunner) {
  const HostApiOps ops{.retained_begin = &fake_retained_begin, .is_kernel_mode = &fake_is_kernel};
  FakeRunner runner;
  const HostApi api(&ops, &runner, 1, 1, true);
  EXPECT_FALSE(api.is_kernel_mode());
  runner.kernel = true;
  EXPECT_TRUE(api.is_kernel_mode());
  ASSERT_TRUE(api.retained_begin(1024).is_ok());
  EXPECT_EQ(runner.seen.mode, ExecutionMode::kKernel);
  EXPECT_TRUE(runner.seen.in_launch);
  EXPECT_EQ(api.slot(), 1);
  EXPECT_EQ(api.bank(), 1);
}

TEST(HostApiTest, MissingOperationsAreUnsupportedOrEmpty) {
  const HostApiOps ops{};
  FakeRunner runner;
  const HostApi api(&ops, &runner, 0, 0, false);
  void *ptr = nullptr;
  EXPECT_EQ(api.device_malloc(64, &ptr).code(), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(api.device_free(&runner).code(), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(api.copy_to_device(&runner, &runner, 1).code(), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(api.copy_from_device(&runner, &runner, 1).code(), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(api.retained_begin(1).code(), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(api.setup_static_arena(BankRequest{}).code(), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(api.retained_acquire(1), nullptr);
  EXPECT_EQ(api.pooled_bases(), BankBases{});
  PrebuiltImageCache::Entry entry;
  EXPECT_FALSE(api.lookup_prebuilt_image(1, &entry));
  api.store_prebuilt_image(entry);
  EXPECT_FALSE(api.is_kernel_mode());
}

}  // namespace
}  // namespace replayrt
