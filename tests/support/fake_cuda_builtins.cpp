// CPU implementations of the CUDA backend's kernels for FakeCuda: each built-in kernel applies
// its device operands as the device code does (platform/cuda/builtin_launchers.cu) and then
// runs the simulator's kernel of the same built-in on the same operands; the profiling kernel
// writes host steady-clock times. Where the CUDA kernel writes NaN to the output elements a bad
// id or position concerns, this writes NaN over the whole output (embedding: the row of the id).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "platform/cuda/builtin_params.h"
#include "platform/launch/builtin_kernels.h"
#include "platform/launch/profile_records.h"
#include "platform/sim/kernels/builtin_kernels.h"
#include "support/fake_cuda.h"

namespace replayrt::testing {

namespace {

using cuda::BuiltinOperands;
using cuda::BuiltinParams;
using cuda::DeviceKernel;
using cuda::DeviceOperandResult;

void poison_output(const BuiltinOperands &o, std::uint32_t out) {
  auto *values = static_cast<float *>(o.tensors[out]);
  std::fill(values, values + o.bytes[out] / sizeof(float), std::numeric_limits<float>::quiet_NaN());
}

// embedding one id at a time, as CUDA's kernel does: an id out of range makes its own row NaN.
void run_embedding_rows(const BuiltinOperands &o) {
  const std::uint64_t d = o.scalars[1];
  const std::uint64_t t = o.scalars[2];
  auto *ids = static_cast<std::int32_t *>(o.tensors[1]);
  auto *out = static_cast<float *>(o.tensors[2]);
  for (std::uint64_t row = 0; row < t; ++row) {
    void *tensors[3] = {o.tensors[0], ids + row, out + row * d};
    std::uint64_t bytes[3] = {o.bytes[0], sizeof(std::int32_t), d * sizeof(float)};
    std::uint64_t scalars[4] = {o.scalars[0], d, 1, o.scalars[3]};
    const rrt_kernel_args_t args{3, tensors, bytes, 4, scalars, 0, nullptr};
    if (sim::builtin_host_kernel("embedding")(&args, nullptr) != 0) {
      std::fill(out + row * d, out + (row + 1) * d, std::numeric_limits<float>::quiet_NaN());
    }
  }
}

void run_builtin(const FakeKernelLaunch &launch, void *context) {
  const auto *kernel = static_cast<const DeviceKernel *>(context);
  const std::string_view builtin = kernel->builtin;
  BuiltinParams p;
  std::memcpy(&p, launch.parameters[0].data(), sizeof p);
  const std::uint32_t out = p.num_tensors - 1;
  const bool writes_nan = builtin != "kv_store";
  BuiltinOperands o{};
  switch (cuda::apply_device_operands(p, builtin == "matmul", &o)) {
    case DeviceOperandResult::kOk:
      break;
    case DeviceOperandResult::kBadInput:
      if (writes_nan) {
        poison_output(o, out);
      }
      return;
    case DeviceOperandResult::kBadOutput:
      return;
  }
  if (builtin == "embedding") {
    run_embedding_rows(o);
    return;
  }
  const rrt_kernel_args_t args{p.num_tensors, o.tensors, o.bytes, p.num_scalars,
                               o.scalars,     0,         nullptr};
  if (sim::builtin_host_kernel(builtin)(&args, nullptr) != 0 && writes_nan) {
    poison_output(o, out);
  }
}

void run_profile(const FakeKernelLaunch &launch, void * /*context*/) {
  cuda::ProfileParams p;
  std::memcpy(&p, launch.parameters[0].data(), sizeof p);
  const auto now =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  switch (p.op) {
    case cuda::ProfileParams::kTaskStart: {
      auto *timing = static_cast<TaskTiming *>(p.record);
      timing->start_ns = now;
      timing->task = p.value;
      timing->worker = 0;
      break;
    }
    case cuda::ProfileParams::kTaskEnd:
      static_cast<TaskTiming *>(p.record)->end_ns = now;
      break;
    case cuda::ProfileParams::kLaunchStart:
      static_cast<LaunchRecord *>(p.record)->start_ns = now;
      break;
    default: {
      auto *record = static_cast<LaunchRecord *>(p.record);
      record->end_ns = now;
      record->tasks = p.value;
      record->workers = 1;
      ++record->launches;
      break;
    }
  }
}

}  // namespace

void register_builtin_kernels(FakeCuda &fake) {
  for (const DeviceKernel &device_kernel : cuda::device_kernels()) {
    FakeKernel kernel;
    kernel.name = device_kernel.name;
    kernel.parameter_sizes = {device_kernel.parameter_bytes};
    kernel.cluster_x = device_kernel.cluster_x;
    kernel.loaded = false;  // CudaDevice::create loads them
    if (std::string_view(device_kernel.builtin) == "profile") {
      kernel.run = &run_profile;
    } else {
      kernel.run = &run_builtin;
      kernel.context = const_cast<DeviceKernel *>(&device_kernel);
    }
    fake.register_kernel(device_kernel.function, std::move(kernel));
  }
}

}  // namespace replayrt::testing
