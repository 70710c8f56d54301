// SimDevice: the simulator backend of the Device interface.
#pragma once

#include <memory>
#include <mutex>

#include "platform/device.h"
#include "platform/sim/sim_memory.h"

namespace replayrt::sim {

struct SimDeviceOptions {
  SimMemoryOptions memory;
};

// Memory is SimMemory; streams are SimStreams (one executor thread each), events are
// SimEvents, and bound launches run on DeviceRuntime executors. Streams and graphs must not outlive
// the device; events may. Thread safety: every member is thread-safe.
class SimDevice final : public Device {
 public:
  explicit SimDevice(SimDeviceOptions options = {});
  ~SimDevice() override;

  // kSimDeviceProperties.
  DeviceProperties properties() const override;
  std::span<const BuiltinLauncher> builtin_launchers() const override;
  void *allocate(std::size_t bytes) override;
  Status free(void *ptr) override;
  Status copy_host_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status copy_device_to_host(void *dst, const void *src, std::size_t bytes) override;
  Status copy_device_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status memset(void *dst, int value, std::size_t bytes) override;
  std::optional<AllocationInfo> find_allocation(const void *address) const override;
  std::size_t first_range_outside_allocations(std::span<const AddressRange> ranges) const override;
  std::uint64_t free_epoch() const noexcept override { return memory_.free_epoch(); }
  MemoryCounters memory_counters() const override;
  // RRT_ERR_INVALID_ARGUMENT for a null `out`; RRT_ERR_INTERNAL when the executor thread cannot
  // be started.
  Status create_stream(std::unique_ptr<Stream> *out) override;
  // RRT_ERR_INVALID_ARGUMENT for a null `out`.
  Status create_event(std::unique_ptr<Event> *out) override;
  // Streams and events created afterwards wait on the host as `policy` says.
  void set_host_wait_policy(const HostWaitPolicy &policy) override;
  // A DeviceRuntime (platform/sim/executor) with config.sim_workers workers per invocation.
  Status create_executor(const ExecutorConfig &config, std::unique_ptr<Executor> *out) override;

  SimMemory &memory() noexcept { return memory_; }

 private:
  HostWaitPolicy host_wait() const;

  SimMemory memory_;
  mutable std::mutex host_wait_mutex_;
  HostWaitPolicy host_wait_;  // guarded by host_wait_mutex_
};

}  // namespace replayrt::sim
