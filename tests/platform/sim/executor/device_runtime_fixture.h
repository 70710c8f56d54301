// A fixture that places a callable's image and scheduler state in sim device memory and
// encodes invocations for it, the way a bind does, so the sim executor can be driven directly.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "platform/launch/kernel_registry.h"
#include "platform/sim/executor/device_runtime.h"
#include "platform/sim/kernels/builtin_kernels.h"
#include "platform/sim/sim_device.h"
#include "runtime/bind.h"
#include "runtime/callable.h"
#include "runtime/task_graph_builder.h"
#include "support/callable_builder.h"

namespace replayrt::testing {

class DeviceRuntimeTest : public ::testing::Test {
 protected:
  ~DeviceRuntimeTest() override {
    for (void *ptr : allocations_) {
      (void)device_.free(ptr);
    }
  }

  void *device_alloc(std::size_t bytes) {
    void *ptr = device_.allocate(bytes);
    allocations_.push_back(ptr);
    return ptr;
  }

  void place(CallableBuilder &builder, bool host_seed = false) {
    ASSERT_TRUE(testing::create_callable(builder.desc(), kernels_, &callable_).is_ok());
    const CallableRequirements &needs = callable_->requirements();
    heap_ = needs.gm_heap != 0 ? device_alloc(needs.gm_heap) : nullptr;
    state_ = device_alloc(needs.scheduler_state);
    void *seed = nullptr;
    if (host_seed) {
      std::vector<std::byte> host(needs.scheduler_state);
      ASSERT_TRUE(build_scheduler_seed(*callable_, 11, host).is_ok());
      seed = device_alloc(needs.scheduler_state);
      ASSERT_TRUE(device_.copy_host_to_device(seed, host.data(), host.size()).is_ok());
    }
    image_ = device_alloc(needs.image);
    std::vector<std::byte> host(needs.image);
    ASSERT_TRUE(
        build_task_graph_image(*callable_, ImageBinding{3, 11, heap_, state_, seed}, host).is_ok());
    ASSERT_TRUE(device_.copy_host_to_device(image_, host.data(), host.size()).is_ok());
  }

  Status run(std::vector<TensorArg> tensors, sim::DeviceRuntime &runtime,
             std::uint64_t generation = 11) {
    BindRequest request;
    request.callable = callable_.get();
    request.callable_id = 3;
    request.generation = generation;
    request.args = RunArgsView{tensors, {}};
    std::vector<void *> addresses;
    for (const TensorArg &arg : tensors) {
      addresses.push_back(arg.addr);
    }
    BoundRun bound;
    encode_invocation(request, ExecutionMode::kKernel, image_, addresses, &bound);
    const auto bytes = bound.invocation_span();
    return sim::DeviceRuntime::entry(&runtime, bytes.data(), bytes.size());
  }

  sim::SimDevice device_;
  KernelRegistry kernels_{sim::builtin_launchers()};
  std::unique_ptr<const Callable> callable_;
  std::vector<void *> allocations_;
  void *heap_ = nullptr;
  void *state_ = nullptr;
  void *image_ = nullptr;
};

}  // namespace replayrt::testing
