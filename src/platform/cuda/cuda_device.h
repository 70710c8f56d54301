// CudaDevice: the CUDA backend of the Device interface (platform/device.h).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "platform/allocation_table.h"
#include "platform/cuda/builtin_launchers.h"
#include "platform/cuda/cuda_api.h"
#include "platform/device.h"
#include "platform/launch/kernel_registry.h"

namespace replayrt::cuda {

struct CudaDeviceOptions {
  // Freed allocations stay poisoned (0xDB) and out of circulation until this many bytes of
  // newer frees push them out; 0: released at once (while no capture is in progress).
  std::size_t quarantine_bytes = std::size_t{64} << 20;
};

// Device memory comes from cudaMalloc, over-allocated by one alignment so that every base is a
// multiple of kAlignment (cudaMalloc promises less). Every allocation is recorded in an
// AllocationTable. free() erases it (its generation retires, the free epoch advances), poisons
// it with cudaMemsetAsync on the device's private stream and quarantines it; the real cudaFree
// happens when the quarantine evicts it and no capture is in progress on any stream of the
// device, outside the table lock (cudaFree synchronizes the device: other threads keep using
// the table meanwhile).
//
// Synchronous copies and memset check their range in the table, then run cudaMemcpyAsync /
// cudaMemsetAsync on a private non-blocking stream and synchronize that stream, holding the
// table lock throughout so a concurrent free waits for them. Nothing ever uses the legacy
// default stream. Every CUDA call the device makes for itself (allocation, free, synchronous
// copies) runs under a RelaxedCaptureGuard, so it never invalidates a capture on the calling
// thread.
//
// Every member is thread-safe; every call first makes the device current on the calling
// thread (cudaSetDevice).
class CudaDevice final : public Device {
 public:
  static constexpr std::size_t kAlignment = 1024;
  static constexpr std::size_t kBuiltinCount = 15;
  static constexpr unsigned char kPoisonByte = 0xDB;

  // RRT_ERR_UNSUPPORTED naming the CUDA error when the runtime reports no usable device (no
  // driver, no device); RRT_ERR_INVALID_ARGUMENT for an id past the device count; otherwise
  // the mapped error of the failing call. Creates the private stream and loads the module of
  // every kernel the backend launches (device_kernels(), platform/cuda/builtin_params.h), so
  // that no module load happens during a capture.
  static Status create(const CudaApi &api, int device_id, CudaDeviceOptions options,
                       std::unique_ptr<Device> *out);
  ~CudaDevice() override;

  DeviceProperties properties() const override;
  // launch_builtin (platform/cuda/builtin_launchers.h) for every built-in, each with a context
  // naming this device's table.
  std::span<const BuiltinLauncher> builtin_launchers() const override;
  void *allocate(std::size_t bytes) override;
  // cudaMalloc's own error: out of memory, or the fault it reports.
  Status try_allocate(std::size_t bytes, void **out) override;
  Status free(void *ptr) override;
  Status copy_host_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status copy_device_to_host(void *dst, const void *src, std::size_t bytes) override;
  Status copy_device_to_device(void *dst, const void *src, std::size_t bytes) override;
  Status memset(void *dst, int value, std::size_t bytes) override;
  std::optional<AllocationInfo> find_allocation(const void *address) const override;
  std::size_t first_range_outside_allocations(std::span<const AddressRange> ranges) const override;
  std::uint64_t free_epoch() const noexcept override { return table_.free_epoch(); }
  MemoryCounters memory_counters() const override;
  Status create_stream(std::unique_ptr<Stream> *out) override;
  Status wrap_native_stream(void *native_stream, std::unique_ptr<Stream> *out) override;
  Status create_event(std::unique_ptr<Event> *out) override;
  Status create_executor(const ExecutorConfig &config, std::unique_ptr<Executor> *out) override;
  Status register_foreign(void *ptr, std::size_t bytes) override;
  Status unregister_foreign(void *ptr) override;

  // For the backend's streams, events and graphs.
  const CudaApi &api() const noexcept { return api_; }
  // Makes the device current on the calling thread.
  Status make_current() const;
  // Runs fn(table) under the table lock.
  template <typename Fn>
  auto with_table(Fn fn) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return fn(table_);
  }
  // Captures in progress on the device's streams defer cudaFree (see the class comment).
  void capture_started() noexcept;
  void capture_ended();

 private:
  CudaDevice(const CudaApi &api, int device_id, CudaDeviceOptions options);
  // Requires mutex_: takes the evicted allocations out of the table (none while a capture is in
  // progress, or when the host cannot hold their list: they wait for a later free) and returns
  // their cudaMalloc pointers.
  std::vector<void *> take_evicted_locked();
  // Without mutex_ (cudaFree synchronizes the device): synchronizes the private stream (the
  // poison) and frees `released`.
  void release(const std::vector<void *> &released);
  Status copy(void *dst, const void *src, std::size_t bytes, cudaMemcpyKind kind,
              const void *device_dst, const void *device_src);

  const CudaApi &api_;
  const int device_id_;
  cudaStream_t sync_stream_ = nullptr;
  std::atomic<int> captures_{0};

  std::array<BuiltinLaunchContext, kBuiltinCount> launch_contexts_{};
  std::array<BuiltinLauncher, kBuiltinCount> launchers_{};

  mutable std::mutex mutex_;
  AllocationTable table_;                          // guarded by mutex_
  std::map<std::uintptr_t, void *> raw_pointers_;  // aligned base → cudaMalloc's pointer
};

}  // namespace replayrt::cuda
