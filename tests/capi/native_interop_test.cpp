// The native-interop ABI (native launchers, wrapped native streams, foreign device memory) on
// contexts that cannot use it, and rrt_context_create on RRT_PLATFORM_CUDA on a machine
// without a usable GPU. Through the public shared library only.
#include <cstring>
#include <string>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"

namespace {

using replayrt::testing::last_message;

rrt_context_options_t options_for(rrt_platform_t platform) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = platform;
  return options;
}

int native_noop(const rrt_kernel_args_t *, void *, void *) {
  return 0;
}

int host_noop(const rrt_kernel_args_t *, void *) {
  return 0;
}

class SimNativeInteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const rrt_context_options_t options = options_for(RRT_PLATFORM_SIM);
    ASSERT_EQ(rrt_context_create(&options, &ctx_), RRT_OK);
    ASSERT_EQ(rrt_stream_create(ctx_, &stream_), RRT_OK);
  }
  void TearDown() override {
    EXPECT_EQ(rrt_stream_destroy(stream_), RRT_OK);
    EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK);
  }
  rrt_context_t ctx_ = nullptr;
  rrt_stream_t stream_ = nullptr;
};

TEST_F(SimNativeInteropTest, NativeKernelRegistrationIsUnsupportedAndRegistersNothing) {
  std::int32_t id = -7;
  EXPECT_EQ(rrt_kernel_register_native(ctx_, "mine", &native_noop, nullptr, &id),
            RRT_ERR_UNSUPPORTED);
  EXPECT_NE(last_message().find("rrt_kernel_register"), std::string::npos) << last_message();
  EXPECT_EQ(id, -7);
  EXPECT_EQ(rrt_kernel_lookup(ctx_, "mine", &id), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_kernel_register(ctx_, "mine", &host_noop, nullptr, &id), RRT_OK)
      << "the name stayed free";
}

TEST_F(SimNativeInteropTest, NativeKernelRegistrationRejectsNullArguments) {
  std::int32_t id = -7;
  EXPECT_EQ(rrt_kernel_register_native(nullptr, "k", &native_noop, nullptr, &id),
            RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_kernel_register_native(ctx_, nullptr, &native_noop, nullptr, &id),
            RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_kernel_register_native(ctx_, "k", nullptr, nullptr, &id), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_kernel_register_native(ctx_, "k", &native_noop, nullptr, nullptr),
            RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(id, -7);
}

TEST_F(SimNativeInteropTest, SimStreamsHaveNoNativeHandleAndCannotWrapOne) {
  void *handle = &handle;
  EXPECT_EQ(rrt_stream_native_handle(stream_, &handle), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(handle, &handle) << "out is not written";
  EXPECT_EQ(rrt_stream_native_handle(stream_, nullptr), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_stream_native_handle(nullptr, &handle), RRT_ERR_INVALID_ARGUMENT);

  int fake_native = 0;
  rrt_stream_t wrapped = nullptr;
  EXPECT_EQ(rrt_stream_wrap_native(ctx_, &fake_native, &wrapped), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(wrapped, nullptr);
  EXPECT_EQ(rrt_stream_wrap_native(ctx_, &fake_native, nullptr), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_stream_wrap_native(nullptr, &fake_native, &wrapped), RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(SimNativeInteropTest, ForeignMemoryIsUnsupportedAndBadRangesAreRejected) {
  float host[16] = {};
  EXPECT_EQ(rrt_device_register(ctx_, host, sizeof host), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(rrt_device_unregister(ctx_, host), RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(rrt_device_register(ctx_, nullptr, 64), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_device_register(ctx_, host, 0), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_device_register(nullptr, host, 64), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_device_unregister(ctx_, nullptr), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_device_unregister(nullptr, host), RRT_ERR_INVALID_ARGUMENT);
}

TEST(CudaContextTest, WithoutAUsableGpuContextCreationIsUnsupportedAndSaysWhy) {
  const rrt_context_options_t options = options_for(RRT_PLATFORM_CUDA);
  rrt_context_t ctx = nullptr;
  const rrt_status_t status = rrt_context_create(&options, &ctx);
  if (status == RRT_OK) {
    EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
    GTEST_SKIP() << "this machine has a usable CUDA device";
  }
  EXPECT_EQ(status, RRT_ERR_UNSUPPORTED);
  EXPECT_EQ(ctx, nullptr);
  const std::string message = last_message();
#if defined(REPLAYRT_TEST_EXPECTS_CUDA)
  EXPECT_NE(message.find("cudaError"), std::string::npos) << "the CUDA error is named: " << message;
#else
  EXPECT_NE(message.find("built without CUDA"), std::string::npos) << message;
#endif
}

}  // namespace
