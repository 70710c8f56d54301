// The C++ API's native interop: Context::wrap_stream, Stream::native_handle and
// Context::register_foreign (DeviceRegistration). Built twice: in cpp_api_test over the shared
// library, where the platform is the simulator and each call throws RRT_ERR_UNSUPPORTED, and in
// cpp_api_cuda_fake_test against the fake CUDA platform, where they run on CUDA contexts.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <replayrt/replayrt.hpp>

#include <gtest/gtest.h>

namespace {

constexpr std::uint64_t kNativeInteropFloats = 32;
constexpr std::size_t kNativeInteropBytes = kNativeInteropFloats * sizeof(float);

#if defined(REPLAYRT_TEST_ON_FAKE_CUDA)
constexpr rrt_platform_t kPlatform = RRT_PLATFORM_CUDA;
#else
constexpr rrt_platform_t kPlatform = RRT_PLATFORM_SIM;
#endif

rrt::ContextOptions options() {
  rrt::ContextOptions options;
  options.platform = kPlatform;
  return options;
}

// The code `call` throws as rrt::Error; RRT_OK when it throws nothing.
template <typename Call>
rrt_status_t code_of(Call &&call, std::string *message = nullptr) {
  try {
    std::forward<Call>(call)();
  } catch (const rrt::Error &error) {
    if (message != nullptr) {
      *message = error.what();
    }
    return error.code();
  }
  return RRT_OK;
}

#if !defined(REPLAYRT_TEST_ON_FAKE_CUDA)

TEST(CppNativeInteropTest, TheSimulatorHasNoNativeStreamsAndAdmitsNoForeignMemory) {
  rrt::Context ctx(options());
  rrt::Stream stream = ctx.stream();
  EXPECT_EQ(code_of([&] { (void)stream.native_handle(); }), RRT_ERR_UNSUPPORTED);
  int native = 0;
  EXPECT_EQ(code_of([&] { (void)ctx.wrap_stream(&native); }), RRT_ERR_UNSUPPORTED);
  std::vector<float> host(kNativeInteropFloats);
  std::string message;
  EXPECT_EQ(
      code_of([&] { (void)ctx.register_foreign(host.data(), kNativeInteropBytes); }, &message),
      RRT_ERR_UNSUPPORTED);
  EXPECT_NE(message.find("foreign"), std::string::npos) << message;
}

TEST(CppNativeInteropTest, AnEmptyRegistrationOwnerHoldsNothingAndUnregistersNothing) {
  rrt::DeviceRegistration registration;
  EXPECT_FALSE(registration);
  EXPECT_EQ(registration.data(), nullptr);
  EXPECT_EQ(registration.size(), 0U);
  registration.unregister();  // nothing to end
}

#else

// y = x * factor over kNativeInteropFloats floats: one task.
rrt::CallableBuilder scale(float factor) {
  rrt::CallableBuilder b;
  const rrt::Operand x = b.param("x", RRT_DTYPE_F32, {kNativeInteropFloats}, RRT_DIR_IN);
  const rrt::Operand y = b.param("y", RRT_DTYPE_F32, {kNativeInteropFloats}, RRT_DIR_OUT);
  b.task("scale", {x, y, rrt::Operand::immediate_f32(factor)});
  return b;
}

std::vector<float> native_interop_ramp(float start) {
  std::vector<float> values(kNativeInteropFloats);
  for (std::size_t i = 0; i < kNativeInteropFloats; ++i) {
    values[i] = start + static_cast<float>(i);
  }
  return values;
}

// Two contexts on the one fake device: the consumer registers a buffer the producer allocated.
class CppNativeInteropCudaTest : public ::testing::Test {
 protected:
  rrt::Context producer{options()};
  rrt::Context consumer{options()};
};

TEST_F(CppNativeInteropCudaTest, AnotherContextsBufferIsAdmittedAndAKernelWritesIt) {
  rrt::DeviceBuffer foreign = producer.allocate(kNativeInteropBytes);
  rrt::CallableBuilder step = scale(3.0F);
  consumer.kernel_init(consumer.fit_kernel_config({&step}));
  const rrt::CallableId id = consumer.prepare(step);
  rrt::DeviceBuffer x = consumer.allocate(kNativeInteropBytes);
  x.upload(native_interop_ramp(1.0F));

  rrt::DeviceRegistration y = consumer.register_foreign(foreign.data(), foreign.size());
  ASSERT_TRUE(y);
  EXPECT_EQ(y.data(), foreign.data());
  EXPECT_EQ(y.size(), kNativeInteropBytes);
  rrt::Stream stream = consumer.stream();
  rrt::Args args;
  args.device(x).device(y);
  consumer.launch(id, args, stream);
  stream.synchronize();

  // The producer reads what the consumer's kernel wrote, and so does a copy through the
  // registration.
  std::vector<float> through_producer(kNativeInteropFloats);
  foreign.download(through_producer);
  std::vector<float> through_registration(kNativeInteropFloats);
  y.download(through_registration);
  for (std::size_t i = 0; i < kNativeInteropFloats; ++i) {
    ASSERT_EQ(through_producer[i], 3.0F * (1.0F + static_cast<float>(i))) << i;
  }
  EXPECT_EQ(through_registration, through_producer);
  // A queued copy into the registered memory lands in the producer's buffer.
  const std::vector<float> values = native_interop_ramp(-5.0F);
  stream.upload(y, values.data(), kNativeInteropBytes);
  stream.synchronize();
  foreign.download(through_producer);
  EXPECT_EQ(through_producer, values);
}

TEST_F(CppNativeInteropCudaTest, MemoryTheContextAlreadyTracksIsRefused) {
  rrt::DeviceBuffer foreign = producer.allocate(kNativeInteropBytes);
  rrt::DeviceBuffer own = consumer.allocate(kNativeInteropBytes);
  std::string message;
  EXPECT_EQ(code_of([&] { (void)consumer.register_foreign(own.data(), own.size()); }),
            RRT_ERR_INVALID_ARGUMENT)
      << "the context allocated it itself";
  rrt::DeviceRegistration first = consumer.register_foreign(foreign.data(), kNativeInteropBytes);
  EXPECT_EQ(code_of([&] { (void)consumer.register_foreign(foreign.data(), kNativeInteropBytes); },
                    &message),
            RRT_ERR_INVALID_ARGUMENT)
      << "registered already";
  EXPECT_FALSE(message.empty());
  first.unregister();
  EXPECT_FALSE(first);
  rrt::DeviceRegistration again = consumer.register_foreign(foreign.data(), kNativeInteropBytes);
  EXPECT_TRUE(again);
}

TEST_F(CppNativeInteropCudaTest, EndingTheRegistrationMakesAGraphThatCapturedItStale) {
  rrt::DeviceBuffer foreign = producer.allocate(kNativeInteropBytes);
  rrt::CallableBuilder step = scale(2.0F);
  consumer.kernel_init(consumer.fit_kernel_config({&step}));
  const rrt::CallableId id = consumer.prepare(step);
  rrt::DeviceBuffer x = consumer.allocate(kNativeInteropBytes);
  x.upload(native_interop_ramp(0.0F));
  rrt::Stream stream = consumer.stream();
  rrt::Graph graph;
  {
    rrt::DeviceRegistration y = consumer.register_foreign(foreign.data(), kNativeInteropBytes);
    // Moved, the registration goes with the new owner; the old one ends nothing.
    rrt::DeviceRegistration moved = std::move(y);
    EXPECT_FALSE(y);  // NOLINT(bugprone-use-after-move): a moved-from owner is empty
    rrt::Args args;
    args.device(x).device(moved);
    graph = stream.capture([&] { consumer.launch(id, args, stream); });
    graph.replay(stream);
    stream.synchronize();
  }  // the destructor unregisters
  EXPECT_EQ(code_of([&] { graph.replay(stream); }), RRT_ERR_STALE_ADDRESS);
  std::vector<float> written(kNativeInteropFloats);
  foreign.download(written);
  EXPECT_EQ(written[kNativeInteropFloats - 1], 2.0F * static_cast<float>(kNativeInteropFloats - 1));
  EXPECT_EQ(consumer.stats().stale_address_refusals, 1U);
}

TEST_F(CppNativeInteropCudaTest, AWrappedStreamRunsWorkOnTheNativeStreamAndLeavesItAlive) {
  rrt::Stream owner = producer.stream();
  void *native = owner.native_handle();
  ASSERT_NE(native, nullptr);
  rrt::CallableBuilder step = scale(0.5F);
  consumer.kernel_init(consumer.fit_kernel_config({&step}));
  const rrt::CallableId id = consumer.prepare(step);
  rrt::DeviceBuffer x = consumer.allocate(kNativeInteropBytes);
  rrt::DeviceBuffer y = consumer.allocate(kNativeInteropBytes);
  x.upload(native_interop_ramp(2.0F));
  {
    rrt::Stream wrapped = consumer.wrap_stream(native);
    EXPECT_EQ(wrapped.native_handle(), native);
    rrt::Args args;
    args.device(x).device(y);
    rrt::Graph graph = wrapped.capture([&] { consumer.launch(id, args, wrapped); });
    graph.replay(wrapped);
    wrapped.synchronize();
  }  // destroying the wrapper leaves the native stream to its owner
  std::vector<float> result(kNativeInteropFloats);
  y.download(result);
  EXPECT_EQ(result[3], 0.5F * 5.0F);
  owner.synchronize();
  EXPECT_EQ(owner.native_handle(), native);
  EXPECT_EQ(code_of([&] { (void)consumer.wrap_stream(nullptr); }), RRT_ERR_INVALID_ARGUMENT);
}

#endif

}  // namespace
