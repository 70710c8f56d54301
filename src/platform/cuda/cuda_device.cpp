#include "platform/cuda/cuda_device.h"

#include <new>
#include <vector>

#include "common/align.h"
#include "common/format.h"
#include "platform/cuda/builtin_params.h"
#include "platform/cuda/cuda_device_factory.h"
#include "platform/cuda/cuda_executor.h"
#include "platform/cuda/cuda_status.h"
#include "platform/cuda/cuda_stream.h"
#include "platform/launch/builtin_kernels.h"

namespace replayrt {

Status create_cuda_device(std::int32_t device_id, std::unique_ptr<Device> *out) {
  return cuda::CudaDevice::create(cuda::platform_cuda_api(), device_id, {}, out);
}

bool cuda_backend_built() noexcept {
  return true;
}

}  // namespace replayrt

namespace replayrt::cuda {

Status CudaDevice::create(const CudaApi &api, int device_id, CudaDeviceOptions options,
                          std::unique_ptr<Device> *out) {
  int count = 0;
  const cudaError_t counted = api.get_device_count(&count);
  if (counted != cudaSuccess) {
    (void)api.get_last_error();
    const Status why = cuda_status(api, counted, "cudaGetDeviceCount");
    return Status::error(RRT_ERR_UNSUPPORTED, "no usable CUDA device: " + why.message());
  }
  if (count <= 0) {
    return Status::error(RRT_ERR_UNSUPPORTED, "no usable CUDA device: the runtime reports none");
  }
  if (device_id >= count) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("CUDA device %d does not exist (%d devices)", device_id, count));
  }
  std::unique_ptr<CudaDevice> device(new CudaDevice(api, device_id, options));
  RRT_RETURN_IF_ERROR(device->make_current());
  RRT_RETURN_IF_ERROR(
      cuda_status(api, api.stream_create_with_flags(&device->sync_stream_, cudaStreamNonBlocking),
                  "cudaStreamCreateWithFlags"));
  for (const DeviceKernel &kernel : device_kernels()) {
    cudaFuncAttributes attributes{};
    RRT_RETURN_IF_ERROR(cuda_status(api, api.func_get_attributes(&attributes, kernel.function),
                                    "cudaFuncGetAttributes (loading the built-in kernels)"));
  }
  *out = std::move(device);
  return Status::ok();
}

CudaDevice::CudaDevice(const CudaApi &api, int device_id, CudaDeviceOptions options)
    : api_(api), device_id_(device_id), table_(options.quarantine_bytes) {
  for (std::uint32_t i = 0; i < kBuiltinCount; ++i) {
    launch_contexts_[i] = BuiltinLaunchContext{&api_, i};
    launchers_[i] = BuiltinLauncher{nullptr, &launch_builtin, &launch_contexts_[i]};
  }
}

std::span<const BuiltinLauncher> CudaDevice::builtin_launchers() const {
  return launchers_;
}

CudaDevice::~CudaDevice() {
  (void)make_current();
  if (sync_stream_ != nullptr) {
    (void)api_.stream_synchronize(sync_stream_);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  table_.for_each_owned([this](std::uintptr_t base, std::size_t) {
    const auto raw = raw_pointers_.find(base);
    if (raw != raw_pointers_.end()) {
      (void)api_.free(raw->second);
    }
  });
  if (sync_stream_ != nullptr) {
    (void)api_.stream_destroy(sync_stream_);
  }
}

DeviceProperties CudaDevice::properties() const {
  return DeviceProperties{kAlignment, false, false, "cuda"};
}

Status CudaDevice::make_current() const {
  return cuda_status(api_, api_.set_device(device_id_), "cudaSetDevice");
}

void *CudaDevice::allocate(std::size_t bytes) {
  void *ptr = nullptr;
  return try_allocate(bytes, &ptr).is_ok() ? ptr : nullptr;
}

Status CudaDevice::try_allocate(std::size_t bytes, void **out) {
  *out = nullptr;
  if (bytes == 0 || bytes > (std::size_t{1} << 46)) {
    return Status::error(RRT_ERR_OUT_OF_MEMORY,
                         format("a CUDA allocation of %zu bytes (1 to 2^46)", bytes));
  }
  const std::size_t size = align_up(bytes, kAlignment);
  const RelaxedCaptureGuard relaxed(api_);
  RRT_RETURN_IF_ERROR(make_current());
  void *raw = nullptr;
  if (const cudaError_t error = api_.malloc(&raw, size + kAlignment);
      error != cudaSuccess || raw == nullptr) {
    (void)api_.get_last_error();
    return cuda_status(api_, error == cudaSuccess ? cudaErrorMemoryAllocation : error,
                       "cudaMalloc");
  }
  const std::uintptr_t base = align_up(reinterpret_cast<std::uintptr_t>(raw), kAlignment);
  const std::lock_guard<std::mutex> lock(mutex_);
  try {
    std::uint64_t generation = 0;
    auto slot = raw_pointers_.emplace(base, raw);
    if (!slot.second || !table_.insert(base, size, false, &generation).is_ok()) {
      if (slot.second) {
        raw_pointers_.erase(slot.first);
      }
      (void)api_.free(raw);
      return Status::error(RRT_ERR_INTERNAL,
                           format("cudaMalloc returned %p, which the allocation table already "
                                  "holds",
                                  raw));
    }
  } catch (const std::bad_alloc &) {
    raw_pointers_.erase(base);
    (void)api_.free(raw);
    return Status::error(RRT_ERR_OUT_OF_MEMORY, "host out of memory recording an allocation");
  }
  *out = reinterpret_cast<void *>(base);
  return Status::ok();
}

Status CudaDevice::free(void *ptr) {
  const RelaxedCaptureGuard relaxed(api_);
  RRT_RETURN_IF_ERROR(make_current());
  std::vector<void *> released;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    AllocationInfo erased;
    RRT_RETURN_IF_ERROR(table_.erase(reinterpret_cast<std::uintptr_t>(ptr), &erased));
    // The poison is ordered before the memory's release (release() synchronizes this stream
    // first); a failure to enqueue it loses only the poison.
    (void)api_.memset_async(ptr, kPoisonByte, erased.size, sync_stream_);
    released = take_evicted_locked();
  }
  release(released);
  return Status::ok();
}

std::vector<void *> CudaDevice::take_evicted_locked() {
  std::vector<void *> released;
  if (captures_.load(std::memory_order_acquire) != 0) {
    return released;
  }
  try {
    released.reserve(table_.evicted_count());
  } catch (const std::bad_alloc &) {
    return released;  // the evicted entries wait in the table for a later free
  }
  AllocationTable::Evicted evicted;
  while (table_.pop_evicted(&evicted)) {
    const auto raw = raw_pointers_.find(evicted.base);
    if (raw != raw_pointers_.end()) {
      released.push_back(raw->second);
      raw_pointers_.erase(raw);
    }
  }
  return released;
}

void CudaDevice::release(const std::vector<void *> &released) {
  if (released.empty()) {
    return;
  }
  (void)api_.stream_synchronize(sync_stream_);
  for (void *raw : released) {
    (void)api_.free(raw);
  }
  (void)api_.get_last_error();
}

void CudaDevice::capture_started() noexcept {
  captures_.fetch_add(1, std::memory_order_acq_rel);
}

void CudaDevice::capture_ended() {
  if (captures_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    const RelaxedCaptureGuard relaxed(api_);
    std::vector<void *> released;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      released = take_evicted_locked();
    }
    release(released);
  }
}

Status CudaDevice::copy(void *dst, const void *src, std::size_t bytes, cudaMemcpyKind kind,
                        const void *device_dst, const void *device_src) {
  if (bytes == 0) {
    return Status::ok();
  }
  if (dst == nullptr || src == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "copy with a null host pointer");
  }
  const RelaxedCaptureGuard relaxed(api_);
  RRT_RETURN_IF_ERROR(make_current());
  const std::lock_guard<std::mutex> lock(mutex_);
  if (device_src != nullptr) {
    RRT_RETURN_IF_ERROR(table_.check_range(device_src, bytes, "source"));
  }
  if (device_dst != nullptr) {
    RRT_RETURN_IF_ERROR(table_.check_range(device_dst, bytes, "destination"));
  }
  RRT_RETURN_IF_ERROR(
      cuda_status(api_, api_.memcpy_async(dst, src, bytes, kind, sync_stream_), "cudaMemcpyAsync"));
  return cuda_status(api_, api_.stream_synchronize(sync_stream_), "cudaStreamSynchronize");
}

Status CudaDevice::copy_host_to_device(void *dst, const void *src, std::size_t bytes) {
  return copy(dst, src, bytes, cudaMemcpyHostToDevice, dst, nullptr);
}

Status CudaDevice::copy_device_to_host(void *dst, const void *src, std::size_t bytes) {
  return copy(dst, src, bytes, cudaMemcpyDeviceToHost, nullptr, src);
}

Status CudaDevice::copy_device_to_device(void *dst, const void *src, std::size_t bytes) {
  return copy(dst, src, bytes, cudaMemcpyDeviceToDevice, dst, src);
}

Status CudaDevice::memset(void *dst, int value, std::size_t bytes) {
  if (bytes == 0) {
    return Status::ok();
  }
  const RelaxedCaptureGuard relaxed(api_);
  RRT_RETURN_IF_ERROR(make_current());
  const std::lock_guard<std::mutex> lock(mutex_);
  RRT_RETURN_IF_ERROR(table_.check_range(dst, bytes, "destination"));
  RRT_RETURN_IF_ERROR(
      cuda_status(api_, api_.memset_async(dst, value, bytes, sync_stream_), "cudaMemsetAsync"));
  return cuda_status(api_, api_.stream_synchronize(sync_stream_), "cudaStreamSynchronize");
}

std::optional<AllocationInfo> CudaDevice::find_allocation(const void *address) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return table_.find(reinterpret_cast<std::uintptr_t>(address));
}

std::size_t CudaDevice::first_range_outside_allocations(
    std::span<const AddressRange> ranges) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return table_.first_range_outside(ranges);
}

MemoryCounters CudaDevice::memory_counters() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return table_.counters();
}

Status CudaDevice::create_stream(std::unique_ptr<Stream> *out) {
  if (out == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "create_stream with a null output");
  }
  const RelaxedCaptureGuard relaxed(api_);
  RRT_RETURN_IF_ERROR(make_current());
  cudaStream_t stream = nullptr;
  RRT_RETURN_IF_ERROR(cuda_status(api_,
                                  api_.stream_create_with_flags(&stream, cudaStreamNonBlocking),
                                  "cudaStreamCreateWithFlags"));
  try {
    *out = std::make_unique<CudaStream>(*this, stream, true);
  } catch (...) {
    (void)api_.stream_destroy(stream);
    throw;
  }
  return Status::ok();
}

Status CudaDevice::wrap_native_stream(void *native_stream, std::unique_ptr<Stream> *out) {
  const auto stream = static_cast<cudaStream_t>(native_stream);
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread ||
      out == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         "wrap_native_stream needs a created cudaStream_t (the legacy and "
                         "per-thread default streams cannot be wrapped: they cannot be captured) "
                         "and an output");
  }
  *out = std::make_unique<CudaStream>(*this, stream, false);
  return Status::ok();
}

Status CudaDevice::create_event(std::unique_ptr<Event> *out) {
  if (out == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "create_event with a null output");
  }
  const RelaxedCaptureGuard relaxed(api_);
  RRT_RETURN_IF_ERROR(make_current());
  cudaEvent_t event = nullptr;
  RRT_RETURN_IF_ERROR(cuda_status(api_,
                                  api_.event_create_with_flags(&event, cudaEventDisableTiming),
                                  "cudaEventCreateWithFlags"));
  try {
    *out = std::make_unique<CudaEvent>(*this, event);
  } catch (...) {
    (void)api_.event_destroy(event);
    throw;
  }
  return Status::ok();
}

Status CudaDevice::create_executor(const ExecutorConfig &config, std::unique_ptr<Executor> *out) {
  if (out == nullptr || config.kernels == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         "create_executor needs an output and a kernel registry");
  }
  *out = std::make_unique<CudaExecutor>(api_, *config.kernels);
  return Status::ok();
}

Status CudaDevice::register_foreign(void *ptr, std::size_t bytes) {
  if (ptr == nullptr || bytes == 0) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "register a null or empty device range");
  }
  RRT_RETURN_IF_ERROR(make_current());
  cudaPointerAttributes attributes{};
  const cudaError_t queried = api_.pointer_get_attributes(&attributes, ptr);
  if (queried != cudaSuccess) {
    (void)api_.get_last_error();
    return Status::error(RRT_ERR_INVALID_ARGUMENT, format("register %p: not CUDA memory (%s)", ptr,
                                                          api_.get_error_name(queried)));
  }
  if ((attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged) ||
      attributes.device != device_id_) {
    return Status::error(
        RRT_ERR_INVALID_ARGUMENT,
        format("register %p: not device memory of CUDA device %d", ptr, device_id_));
  }
  // The pointer's attributes describe its first byte only: the whole range must lie in the one
  // allocation that holds it.
  CUdeviceptr base = 0;
  std::size_t size = 0;
  const CUresult ranged =
      api_.driver_mem_get_address_range(&base, &size, reinterpret_cast<CUdeviceptr>(ptr));
  if (ranged != CUDA_SUCCESS) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("register %p: the driver reports no allocation holding it "
                                "(cuMemGetAddressRange: CUresult %d)",
                                ptr, static_cast<int>(ranged)));
  }
  const auto start = reinterpret_cast<std::uintptr_t>(ptr);
  if (start < base || bytes > size - (start - base)) {
    return Status::error(
        RRT_ERR_INVALID_ARGUMENT,
        format("register [%p, +%zu bytes): runs past the allocation at %p of %zu bytes that "
               "holds it",
               ptr, bytes, reinterpret_cast<const void *>(base), size));
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  std::uint64_t generation = 0;
  return table_.insert(start, bytes, true, &generation);
}

Status CudaDevice::unregister_foreign(void *ptr) {
  const std::lock_guard<std::mutex> lock(mutex_);
  return table_.erase_foreign(reinterpret_cast<std::uintptr_t>(ptr));
}

}  // namespace replayrt::cuda
