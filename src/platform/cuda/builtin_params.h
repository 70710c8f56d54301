// The one parameter every CUDA built-in kernel takes by value, and the kernels the CUDA backend
// launches. Plain C++ (no CUDA types): the host launchers fill it, the device kernels read it,
// and a test double that runs the kernels on the CPU (FakeCuda) reads it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <replayrt/kernel_abi.h>

namespace replayrt::cuda {

inline constexpr unsigned kMaxBuiltinTensors = 5;
inline constexpr unsigned kMaxBuiltinScalars = 5;
inline constexpr unsigned kMaxBuiltinDeviceOperands = kMaxBuiltinTensors + kMaxBuiltinScalars;

// An operand whose value the kernel reads from device memory when it runs
// (rrt_device_operand_t): a scalar, or the offset of a view.
struct BuiltinDeviceOperand {
  enum Kind : std::uint32_t { kScalar = 0, kViewOffset = 1 };
  const void *value = nullptr;  // the I32, I64 or F32 element
  std::uint32_t kind = kScalar;
  std::uint32_t index = 0;  // the scalar, or the tensor whose address the offset moves
  std::uint32_t dtype = 0;  // an rrt_dtype_t: I32 (sign-extended), I64 or F32 (its bits)
  std::uint32_t reserved = 0;
  std::uint64_t stride_bytes = 0;  // view offsets: bytes per unit of the value
  std::uint64_t value_max = 0;     // view offsets: the largest admissible value
};

// A built-in task's operands as the host resolved them. A view offset's tensor holds the view's
// address at offset value 0; a device scalar's slot holds 0.
struct BuiltinParams {
  void *tensors[kMaxBuiltinTensors] = {};
  std::uint64_t tensor_bytes[kMaxBuiltinTensors] = {};
  std::uint64_t scalars[kMaxBuiltinScalars] = {};
  std::uint32_t num_tensors = 0;
  std::uint32_t num_scalars = 0;
  std::uint32_t num_device_operands = 0;
  std::uint32_t reserved = 0;
  BuiltinDeviceOperand device_operands[kMaxBuiltinDeviceOperands] = {};
};

// What a device operand's value does to a task: OK, an input (or a scalar) out of its range or
// domain (the kernel writes NaN over its output), or the output's own offset out of range (the
// kernel writes nothing). Overlaps that a device offset creates between the output and an input
// other than exactly count as an input out of range.
enum class DeviceOperandResult : std::uint32_t { kOk, kBadInput, kBadOutput };

// A built-in task's operands after its device operands were applied.
struct BuiltinOperands {
  void *tensors[kMaxBuiltinTensors];
  std::uint64_t bytes[kMaxBuiltinTensors];
  std::uint64_t scalars[kMaxBuiltinScalars];
};

// Compiled for the device in the CUDA kernels and for the host in a CPU model of them.
#if defined(__CUDACC__)
#define REPLAYRT_HOST_DEVICE __host__ __device__
#else
#define REPLAYRT_HOST_DEVICE
#endif

// Copies p's operands into *out and applies its device operands, reading each value where it
// lives (the kernel reads device memory): a scalar takes the value (an I32 sign-extended, an
// I64, an F32's bits); a view offset moves its tensor by value * stride_bytes, a value outside
// [0, value_max] making the result kBadOutput for the output tensor (the last) and kBadInput
// for another. When an offset moved a tensor, the output overlapping an input (other than
// exactly the same bytes, or at all when `strict`) is kBadInput.
REPLAYRT_HOST_DEVICE inline DeviceOperandResult apply_device_operands(const BuiltinParams &p,
                                                                      bool strict,
                                                                      BuiltinOperands *out) {
  for (unsigned i = 0; i < kMaxBuiltinTensors; ++i) {
    out->tensors[i] = p.tensors[i];
    out->bytes[i] = p.tensor_bytes[i];
  }
  for (unsigned i = 0; i < kMaxBuiltinScalars; ++i) {
    out->scalars[i] = p.scalars[i];
  }
  DeviceOperandResult result = DeviceOperandResult::kOk;
  bool moved = false;
  const unsigned last = p.num_tensors - 1;
  for (unsigned i = 0; i < p.num_device_operands && i < kMaxBuiltinDeviceOperands; ++i) {
    const BuiltinDeviceOperand &operand = p.device_operands[i];
    const std::int64_t integer = operand.dtype == RRT_DTYPE_I64
                                     ? *static_cast<const std::int64_t *>(operand.value)
                                     : *static_cast<const std::int32_t *>(operand.value);
    if (operand.kind == BuiltinDeviceOperand::kScalar) {
      out->scalars[operand.index] = operand.dtype == RRT_DTYPE_F32
                                        ? *static_cast<const std::uint32_t *>(operand.value)
                                        : static_cast<std::uint64_t>(integer);
      continue;
    }
    if (integer < 0 || static_cast<std::uint64_t>(integer) > operand.value_max) {
      if (operand.index == last) {
        return DeviceOperandResult::kBadOutput;
      }
      result = DeviceOperandResult::kBadInput;
      continue;
    }
    out->tensors[operand.index] = static_cast<char *>(out->tensors[operand.index]) +
                                  static_cast<std::uint64_t>(integer) * operand.stride_bytes;
    moved = true;
  }
  if (result != DeviceOperandResult::kOk || !moved) {
    return result;
  }
  const auto output = reinterpret_cast<std::uintptr_t>(out->tensors[last]);
  for (unsigned i = 0; i < last; ++i) {
    const auto input = reinterpret_cast<std::uintptr_t>(out->tensors[i]);
    const bool overlap = input < output + out->bytes[last] && output < input + out->bytes[i];
    const bool identical =
        out->tensors[i] == out->tensors[last] && out->bytes[i] == out->bytes[last];
    if (overlap && (strict || !identical)) {
      result = DeviceOperandResult::kBadInput;
    }
  }
  return result;
}

// The profiling records a launch writes (platform/launch/profile_records.h), by the "profile"
// kernel: one launch per record field.
struct ProfileParams {
  enum Op : std::uint32_t { kTaskStart = 0, kTaskEnd = 1, kLaunchStart = 2, kLaunchEnd = 3 };
  void *record = nullptr;  // a TaskTiming (task ops) or LaunchRecord (launch ops)
  std::uint32_t op = kTaskStart;
  std::uint32_t value = 0;  // kTaskStart: the task; kLaunchEnd: the task count
};

// One kernel the CUDA backend launches: `builtin` names the built-in it implements ("profile"
// for the profiling kernel); `function` is its host stub (what cudaLaunchKernel takes).
struct DeviceKernel {
  const char *name;     // unique, e.g. "linear.f16"
  const char *builtin;  // the built-in's name, or "profile"
  const void *function;
  std::size_t parameter_bytes;  // sizeof(BuiltinParams) or sizeof(ProfileParams)
  unsigned cluster_x;           // its __cluster_dims__ x (1: none)
};

// Every kernel of platform/cuda/builtin_launchers.cu, preloaded at device creation.
std::span<const DeviceKernel> device_kernels() noexcept;

}  // namespace replayrt::cuda
