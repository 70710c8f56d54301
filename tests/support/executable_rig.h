// ExecutableRig: a callable placed in device memory as a kernel-mode prepare places it (gm_heap,
// scheduler state, the uploaded image) and prepared by a device's executor, with the
// invocations that launch it: for tests of executors below the runtime.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include <replayrt/replayrt.h>

#include "common/status.h"
#include "platform/device.h"
#include "platform/launch/invocation_header.h"
#include "platform/launch/kernel_registry.h"
#include "runtime/callable.h"
#include "runtime/task_graph_builder.h"
#include "support/callable_builder.h"

namespace replayrt::testing {

class ExecutableRig {
 public:
  ExecutableRig() = default;
  ExecutableRig(const ExecutableRig &) = delete;
  ExecutableRig &operator=(const ExecutableRig &) = delete;
  ~ExecutableRig() {
    for (void *buffer : buffers_) {
      (void)device_->free(buffer);
    }
  }

  // Validates `desc` against `kernels`, allocates and uploads what it needs on `device`, and
  // prepares it with `executor` (the device's).
  Status prepare(Device &device, Executor &executor, const KernelRegistry &kernels,
                 const rrt_callable_desc_t &desc, std::int32_t id = 3,
                 std::uint64_t generation = 11) {
    device_ = &device;
    id_ = id;
    generation_ = generation;
    RRT_RETURN_IF_ERROR(testing::create_callable(desc, kernels, &callable_));
    const CallableRequirements &needs = callable_->requirements();
    gm_heap_ = allocate(needs.gm_heap);
    void *state = allocate(needs.scheduler_state);
    image_ = allocate(needs.image);
    if ((needs.gm_heap != 0 && gm_heap_ == nullptr) || state == nullptr || image_ == nullptr) {
      return Status::error(RRT_ERR_OUT_OF_MEMORY, "rig allocation");
    }
    std::vector<std::byte> image(needs.image);
    RRT_RETURN_IF_ERROR(build_task_graph_image(
        *callable_, ImageBinding{id, generation, gm_heap_, state, nullptr}, image));
    RRT_RETURN_IF_ERROR(device.copy_host_to_device(image_, image.data(), image.size()));
    RRT_RETURN_IF_ERROR(build_task_graph_image(
        *callable_, ImageBinding{id, generation, nullptr, nullptr, nullptr}, image));
    RRT_RETURN_IF_ERROR(executor.prepare(TaskGraphSpec{image}, &executable_));
    referenced_ = {image_, state};
    if (gm_heap_ != nullptr) {
      referenced_.push_back(gm_heap_);
    }
    return Status::ok();
  }

  // The launch of the prepared callable with `tensors` (device addresses, one per parameter,
  // each with the parameter's bytes) and `scalars`, with profiling records when `timings` and
  // `wall` are set. The binding points into the rig; it is valid until the next call.
  LaunchBinding binding(std::span<void *const> tensors, std::span<const std::uint64_t> scalars,
                        void *timings = nullptr, void *wall = nullptr) {
    const std::size_t count = tensors.size();
    invocation_.assign(invocation_bytes(count, scalars.size()) / 8, 0);
    InvocationHeader header{};
    header.callable_id = id_;
    header.generation = generation_;
    header.payload_bytes = invocation_.size() * 8 - sizeof header;
    header.tensor_count = static_cast<std::int32_t>(count);
    header.scalar_count = static_cast<std::int32_t>(scalars.size());
    std::memcpy(invocation_.data(), &header, sizeof header);
    std::uint64_t *words = invocation_.data() + sizeof header / 8;
    words[0] = reinterpret_cast<std::uint64_t>(image_);
    words[1] = reinterpret_cast<std::uint64_t>(timings);
    words[2] = reinterpret_cast<std::uint64_t>(wall);
    const auto params = callable_->params();
    for (std::size_t i = 0; i < count; ++i) {
      words[kPayloadFixedWords + i] = reinterpret_cast<std::uint64_t>(tensors[i]);
      words[kPayloadFixedWords + count + i] = i < params.size() ? params[i].bytes : 0;
    }
    for (std::size_t i = 0; i < scalars.size(); ++i) {
      words[kPayloadFixedWords + 2 * count + i] = scalars[i];
    }
    launch_referenced_ = referenced_;
    launch_referenced_.insert(launch_referenced_.end(), tensors.begin(), tensors.end());
    if (timings != nullptr) {
      launch_referenced_.push_back(timings);
      launch_referenced_.push_back(wall);
    }
    return LaunchBinding{
        {reinterpret_cast<const std::byte *>(invocation_.data()), invocation_.size() * 8},
        launch_referenced_,
        gm_heap_};
  }

  const PreparedExecutable &executable() const { return *executable_; }
  const Callable &callable() const { return *callable_; }

 private:
  void *allocate(std::uint64_t bytes) {
    if (bytes == 0) {
      return nullptr;
    }
    void *buffer = device_->allocate(bytes);
    if (buffer != nullptr) {
      buffers_.push_back(buffer);
    }
    return buffer;
  }

  Device *device_ = nullptr;
  std::int32_t id_ = 0;
  std::uint64_t generation_ = 0;
  std::unique_ptr<const Callable> callable_;
  std::unique_ptr<PreparedExecutable> executable_;
  void *gm_heap_ = nullptr;
  void *image_ = nullptr;
  std::vector<void *> buffers_;
  std::vector<const void *> referenced_;
  std::vector<const void *> launch_referenced_;
  std::vector<std::uint64_t> invocation_;
};

}  // namespace replayrt::testing
