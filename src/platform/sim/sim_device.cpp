#include "platform/sim/sim_device.h"

#include <system_error>

#include "common/format.h"
#include "platform/sim/executor/device_runtime.h"
#include "platform/sim/kernels/builtin_kernels.h"
#include "platform/sim/sim_event.h"
#include "platform/sim/sim_stream.h"

namespace replayrt::sim {

SimDevice::SimDevice(SimDeviceOptions options) : memory_(options.memory) {}

SimDevice::~SimDevice() = default;

std::span<const BuiltinLauncher> SimDevice::builtin_launchers() const {
  return sim::builtin_launchers();
}

DeviceProperties SimDevice::properties() const {
  return kSimDeviceProperties;
}

void *SimDevice::allocate(std::size_t bytes) {
  return memory_.allocate(bytes);
}

Status SimDevice::free(void *ptr) {
  return memory_.free(ptr);
}

Status SimDevice::copy_host_to_device(void *dst, const void *src, std::size_t bytes) {
  return memory_.copy_host_to_device(dst, src, bytes);
}

Status SimDevice::copy_device_to_host(void *dst, const void *src, std::size_t bytes) {
  return memory_.copy_device_to_host(dst, src, bytes);
}

Status SimDevice::copy_device_to_device(void *dst, const void *src, std::size_t bytes) {
  return memory_.copy_device_to_device(dst, src, bytes);
}

Status SimDevice::memset(void *dst, int value, std::size_t bytes) {
  return memory_.memset(dst, value, bytes);
}

std::optional<AllocationInfo> SimDevice::find_allocation(const void *address) const {
  return memory_.find_allocation(address);
}

std::size_t SimDevice::first_range_outside_allocations(std::span<const AddressRange> ranges) const {
  return memory_.first_range_outside_allocations(ranges);
}

MemoryCounters SimDevice::memory_counters() const {
  return memory_.counters();
}

Status SimDevice::create_stream(std::unique_ptr<Stream> *out) {
  if (out == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "create_stream with a null stream output");
  }
  try {
    *out = std::make_unique<SimStream>(memory_, host_wait());
  } catch (const std::system_error &error) {
    return Status::error(
        RRT_ERR_INTERNAL,
        format("create_stream: cannot start the stream's executor thread: %s", error.what()));
  }
  return Status::ok();
}

Status SimDevice::create_event(std::unique_ptr<Event> *out) {
  if (out == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "create_event with a null event output");
  }
  *out = std::make_unique<SimEvent>(host_wait());
  return Status::ok();
}

void SimDevice::set_host_wait_policy(const HostWaitPolicy &policy) {
  const std::lock_guard<std::mutex> lock(host_wait_mutex_);
  host_wait_ = policy;
}

HostWaitPolicy SimDevice::host_wait() const {
  const std::lock_guard<std::mutex> lock(host_wait_mutex_);
  return host_wait_;
}

Status SimDevice::create_executor(const ExecutorConfig &config, std::unique_ptr<Executor> *out) {
  if (out == nullptr || config.kernels == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         "create_executor needs a kernel registry and an executor output");
  }
  try {
    *out = std::make_unique<DeviceRuntime>(*config.kernels,
                                           config.sim_workers == 0 ? 1 : config.sim_workers);
  } catch (const std::system_error &error) {
    return Status::error(
        RRT_ERR_INTERNAL,
        format("create_executor: cannot start the device worker threads: %s", error.what()));
  }
  return Status::ok();
}

}  // namespace replayrt::sim
