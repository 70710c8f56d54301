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

using cuda::BuiltinDeviceOperand;
using cuda::BuiltinParams;
using cuda::DeviceKernel;
using cuda::DeviceOperandResult;

std::int64_t read_integer(const BuiltinDeviceOperand &operand) {
  if (operand.dtype == RRT_DTYPE_I64) {
    std::int64_t value = 0;
    std::memcpy(&value, operand.value, sizeof value);
    return value;
  }
  std::int32_t value = 0;
  std::memcpy(&value, operand.value, sizeof value);
  return value;
}

bool overlaps(const void *a, std::uint64_t a_bytes, const void *b, std::uint64_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

DeviceOperandResult apply_device_operands(BuiltinParams *p, bool strict) {
  DeviceOperandResult result = DeviceOperandResult::kOk;
  bool moved = false;
  const std::uint32_t out = p->num_tensors - 1;
  for (std::uint32_t i = 0; i < p->num_device_operands; ++i) {
    const BuiltinDeviceOperand &operand = p->device_operands[i];
    if (operand.kind == BuiltinDeviceOperand::kScalar) {
      if (operand.dtype == RRT_DTYPE_F32) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, operand.value, sizeof bits);
        p->scalars[operand.index] = bits;
      } else {
        p->scalars[operand.index] = static_cast<std::uint64_t>(read_integer(operand));
      }
      continue;
    }
    const std::int64_t value = read_integer(operand);
    if (value < 0 || static_cast<std::uint64_t>(value) > operand.value_max) {
      if (operand.index == out) {
        return DeviceOperandResult::kBadOutput;
      }
      result = DeviceOperandResult::kBadInput;
      continue;
    }
    p->tensors[operand.index] = static_cast<char *>(p->tensors[operand.index]) +
                                static_cast<std::uint64_t>(value) * operand.stride_bytes;
    moved = true;
  }
  if (result == DeviceOperandResult::kOk && moved) {
    for (std::uint32_t i = 0; i < out; ++i) {
      const bool identical =
          p->tensors[i] == p->tensors[out] && p->tensor_bytes[i] == p->tensor_bytes[out];
      if (overlaps(p->tensors[i], p->tensor_bytes[i], p->tensors[out], p->tensor_bytes[out]) &&
          (strict || !identical)) {
        result = DeviceOperandResult::kBadInput;
      }
    }
  }
  return result;
}

void poison_output(const BuiltinParams &p) {
  const std::uint32_t out = p.num_tensors - 1;
  auto *values = static_cast<float *>(p.tensors[out]);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::uint64_t i = 0; i < p.tensor_bytes[out] / sizeof(float); ++i) {
    values[i] = nan;
  }
}

// embedding one id at a time, as CUDA's kernel does: an id out of range makes its own row NaN.
void run_embedding_rows(const BuiltinParams &p) {
  const std::uint64_t d = p.scalars[1];
  const std::uint64_t t = p.scalars[2];
  auto *ids = static_cast<std::int32_t *>(p.tensors[1]);
  auto *out = static_cast<float *>(p.tensors[2]);
  for (std::uint64_t row = 0; row < t; ++row) {
    void *tensors[3] = {p.tensors[0], ids + row, out + row * d};
    std::uint64_t bytes[3] = {p.tensor_bytes[0], sizeof(std::int32_t), d * sizeof(float)};
    std::uint64_t scalars[4] = {p.scalars[0], d, 1, p.scalars[3]};
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
  const bool writes_nan = builtin != "kv_store";
  switch (apply_device_operands(&p, builtin == "matmul")) {
    case DeviceOperandResult::kOk:
      break;
    case DeviceOperandResult::kBadInput:
      if (writes_nan) {
        poison_output(p);
      }
      return;
    case DeviceOperandResult::kBadOutput:
      return;
  }
  if (builtin == "embedding") {
    run_embedding_rows(p);
    return;
  }
  const rrt_kernel_args_t args{p.num_tensors, p.tensors, p.tensor_bytes, p.num_scalars,
                               p.scalars,     0,         nullptr};
  if (sim::builtin_host_kernel(builtin)(&args, nullptr) != 0 && writes_nan) {
    poison_output(p);
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
