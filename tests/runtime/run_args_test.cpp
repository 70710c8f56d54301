#include "runtime/run_args.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "platform/launch/kernel_registry.h"
#include "platform/sim/kernels/builtin_kernels.h"
#include "platform/sim/sim_device.h"
#include "runtime/validated_device_ranges.h"
#include "support/callable_builder.h"
#include "support/forwarding_device.h"

namespace replayrt {
namespace {

using testing::CallableBuilder;
using testing::f32;
using testing::param;

// A Device that forwards to a SimDevice, with a free epoch of its own that the test advances,
// and that counts the allocation lookups of first_range_outside_allocations. Armed, a lookup
// advances the epoch while it runs, as a free racing the check would.
class EpochDevice final : public testing::ForwardingDevice {
 public:
  explicit EpochDevice(Device &inner) : ForwardingDevice(inner) {}

  void advance_epoch() { ++epoch_; }
  void advance_epoch_during_lookups() { advance_during_lookups_ = true; }
  int lookups() const { return lookups_; }

  std::uint64_t free_epoch() const noexcept override { return epoch_; }
  std::size_t first_range_outside_allocations(std::span<const AddressRange> ranges) const override {
    ++lookups_;
    if (advance_during_lookups_) {
      ++epoch_;
    }
    return inner().first_range_outside_allocations(ranges);
  }

 private:
  mutable std::uint64_t epoch_ = 1;
  mutable int lookups_ = 0;
  bool advance_during_lookups_ = false;
};

constexpr std::uint64_t kFloats = 8;
constexpr std::uint64_t kBytes = kFloats * sizeof(float);

// out = in + bias over kFloats floats: in and out DEVICE tensors on buffers of the sim device,
// bias a HOST tensor.
class RunArgsTest : public ::testing::Test {
 protected:
  RunArgsTest() {
    CallableBuilder builder;
    rrt_tensor_desc_t in = f32({kFloats});
    rrt_tensor_desc_t out = f32({kFloats}, RRT_DIR_OUT);
    rrt_tensor_desc_t bias = f32({kFloats});
    in.space = RRT_PARAM_SPACE_DEVICE;
    out.space = RRT_PARAM_SPACE_DEVICE;
    bias.space = RRT_PARAM_SPACE_HOST;
    builder.param(in).param(out).param(bias);
    builder.task(testing::kAdd, {param(0), param(2), param(1)});
    EXPECT_TRUE(testing::create_callable(builder.desc(), kernels_, &callable_).is_ok());
    in_ = sim_.allocate(kBytes);
    out_ = sim_.allocate(kBytes);
    tensors_ = {{in_, kBytes, RRT_SPACE_DEVICE},
                {out_, kBytes, RRT_SPACE_DEVICE},
                {bias_.data(), kBytes, RRT_SPACE_HOST}};
  }
  ~RunArgsTest() override {
    (void)sim_.free(in_);
    (void)sim_.free(out_);
  }

  Status validate(ValidatedDeviceRanges *validated) {
    return validate_run_args(*callable_, RunArgsView{tensors_, {}}, device_, validated);
  }

  sim::SimDevice sim_;
  EpochDevice device_{sim_};
  KernelRegistry kernels_{sim::builtin_launchers()};
  std::unique_ptr<const Callable> callable_;
  void *in_ = nullptr;
  void *out_ = nullptr;
  std::vector<float> bias_ = std::vector<float>(kFloats, 1.0F);
  std::vector<TensorArg> tensors_;
};

// A run records its DEVICE tensors' allocations after validate_run_args checked them, and a
// free on another thread may land in between: a smaller allocation at the same address must
// not be recorded, or the launch's check (which compares base and generation) would pass a
// tensor that runs past its end.
TEST_F(RunArgsTest, RecordingTheAllocationsChecksTheRangesAgain) {
  std::vector<CapturedAddress> recorded;
  ASSERT_TRUE(device_tensor_allocations(RunArgsView{tensors_, {}}, device_, &recorded).is_ok());
  ASSERT_EQ(recorded.size(), 2U);
  EXPECT_EQ(recorded[1].address, reinterpret_cast<std::uintptr_t>(out_));
  // As if the tensor's allocation went and another took its place, ending inside the tensor.
  const std::size_t size = sim_.find_allocation(out_)->size;
  tensors_[1].addr = static_cast<std::byte *>(out_) + size - kBytes / 2;
  recorded.clear();
  const Status refused = device_tensor_allocations(RunArgsView{tensors_, {}}, device_, &recorded);
  EXPECT_EQ(refused.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(refused.message().find("tensor 1: 32 bytes at"), std::string::npos)
      << refused.message();
  EXPECT_TRUE(recorded.empty());
}

TEST_F(RunArgsTest, ArgumentsRepeatedAtTheSameEpochAreNotLookedUpAgain) {
  ValidatedDeviceRanges validated;
  ASSERT_TRUE(validate(&validated).is_ok());
  ASSERT_TRUE(validate(&validated).is_ok());
  EXPECT_EQ(device_.lookups(), 1);
  ASSERT_TRUE(validate(nullptr).is_ok());
  EXPECT_EQ(device_.lookups(), 2) << "without a memo every call looks up";
}

TEST_F(RunArgsTest, AnAdvancedEpochMakesTheNextCallLookUpAndRefuseAFreedTensor) {
  ValidatedDeviceRanges validated;
  ASSERT_TRUE(validate(&validated).is_ok());
  ASSERT_TRUE(sim_.free(in_).is_ok());
  device_.advance_epoch();
  const Status refused = validate(&validated);
  EXPECT_EQ(refused.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(refused.message().find("tensor 0: DEVICE address"), std::string::npos)
      << refused.message();
  EXPECT_EQ(device_.lookups(), 2);
  in_ = sim_.allocate(kBytes);
}

TEST_F(RunArgsTest, TheEpochIsReadBeforeTheLookups) {
  // A free that lands while the ranges are looked up advances the epoch after the read, so the
  // ranges are remembered at the older epoch and the next call looks them up again.
  device_.advance_epoch_during_lookups();
  ValidatedDeviceRanges validated;
  ASSERT_TRUE(validate(&validated).is_ok());
  ASSERT_TRUE(validate(&validated).is_ok());
  EXPECT_EQ(device_.lookups(), 2);
}

TEST_F(RunArgsTest, ACallWhoseDeviceRangesAreCoveredStillChecksEveryTensor) {
  ValidatedDeviceRanges validated;
  ASSERT_TRUE(validate(&validated).is_ok());
  tensors_[2].bytes = kBytes / 2;
  Status refused = validate(&validated);
  EXPECT_EQ(refused.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(refused.message().find("tensor 2: 16 bytes, the parameter has 32"), std::string::npos)
      << refused.message();
  tensors_[2] = {nullptr, kBytes, RRT_SPACE_HOST};
  refused = validate(&validated);
  EXPECT_NE(refused.message().find("tensor 2: null address"), std::string::npos)
      << refused.message();
  EXPECT_EQ(device_.lookups(), 1) << "the DEVICE ranges were covered each time";
}

}  // namespace
}  // namespace replayrt
