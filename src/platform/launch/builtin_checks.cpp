// The host-side operand checks of the built-in kernels (platform/launch/builtin_kernels.h):
// the same checks, in the same order, as the kernels run before computing, on the operands
// alone. A backend whose kernels cannot fail on the device (CUDA) runs them before launch.
#include <cmath>
#include <cstdint>
#include <string_view>

#include "platform/launch/builtin_kernels.h"

namespace replayrt {
namespace {

using namespace kernel_result;  // NOLINT(google-build-using-namespace)

constexpr std::uint64_t kFloatBytes = sizeof(float);

int check_shared(const rrt_kernel_args_t *args, std::uint32_t num_tensors,
                 std::uint32_t num_scalars) {
  if (args == nullptr || args->num_tensors != num_tensors || args->num_scalars != num_scalars ||
      args->tensors == nullptr || args->tensor_bytes == nullptr ||
      (num_scalars != 0 && args->scalars == nullptr)) {
    return kWrongOperandCount;
  }
  for (std::uint32_t i = 0; i < num_tensors; ++i) {
    const std::uint64_t bytes = args->tensor_bytes[i];
    if (bytes == 0 || bytes % kFloatBytes != 0) {
      return kBadByteSize;
    }
  }
  for (std::uint32_t i = 0; i < num_tensors; ++i) {
    const auto address = reinterpret_cast<std::uintptr_t>(args->tensors[i]);
    if (address == 0 || address % alignof(float) != 0) {
      return kUnusableAddress;
    }
  }
  return kOk;
}

std::uint64_t floats(const rrt_kernel_args_t &args, std::size_t index) {
  return args.tensor_bytes[index] / kFloatBytes;
}

bool overlaps(const rrt_kernel_args_t &args, std::size_t first, std::size_t second) {
  const auto first_begin = reinterpret_cast<std::uintptr_t>(args.tensors[first]);
  const auto second_begin = reinterpret_cast<std::uintptr_t>(args.tensors[second]);
  if (first_begin <= second_begin) {
    return second_begin - first_begin < args.tensor_bytes[first];
  }
  return first_begin - second_begin < args.tensor_bytes[second];
}

bool identical_or_disjoint(const rrt_kernel_args_t &args, std::size_t first, std::size_t second) {
  const bool identical = args.tensors[first] == args.tensors[second] &&
                         args.tensor_bytes[first] == args.tensor_bytes[second];
  return identical || !overlaps(args, first, second);
}

bool holds_matrix(std::uint64_t count, std::uint64_t rows, std::uint64_t cols) {
  return count % rows == 0 && count / rows == cols;
}

int check_unary(const rrt_kernel_args_t *args, std::uint32_t num_scalars) {
  if (const int code = check_shared(args, 2, num_scalars); code != kOk) {
    return code;
  }
  if (floats(*args, 1) != floats(*args, 0)) {
    return kSizeMismatch;
  }
  return identical_or_disjoint(*args, 1, 0) ? kOk : kOverlappingOutput;
}

int check_fill(const rrt_kernel_args_t *args) {
  return check_shared(args, 1, 1);
}

int check_unary_plain(const rrt_kernel_args_t *args) {
  return check_unary(args, 0);
}

int check_scale(const rrt_kernel_args_t *args) {
  return check_unary(args, 1);
}

int check_binary(const rrt_kernel_args_t *args) {
  if (const int code = check_shared(args, 3, 0); code != kOk) {
    return code;
  }
  const std::uint64_t count = floats(*args, 0);
  if (floats(*args, 1) != count || floats(*args, 2) != count) {
    return kSizeMismatch;
  }
  return identical_or_disjoint(*args, 2, 0) && identical_or_disjoint(*args, 2, 1)
             ? kOk
             : kOverlappingOutput;
}

int check_matmul(const rrt_kernel_args_t *args) {
  if (const int code = check_shared(args, 3, 3); code != kOk) {
    return code;
  }
  const std::uint64_t m = args->scalars[0];
  const std::uint64_t k = args->scalars[1];
  const std::uint64_t n = args->scalars[2];
  if (m == 0 || k == 0 || n == 0) {
    return kZeroDimension;
  }
  if (!holds_matrix(floats(*args, 0), m, k) || !holds_matrix(floats(*args, 1), k, n) ||
      !holds_matrix(floats(*args, 2), m, n)) {
    return kSizeMismatch;
  }
  return overlaps(*args, 2, 0) || overlaps(*args, 2, 1) ? kOverlappingOutput : kOk;
}

int check_softmax(const rrt_kernel_args_t *args) {
  if (const int code = check_shared(args, 2, 1); code != kOk) {
    return code;
  }
  const std::uint64_t cols = args->scalars[0];
  if (cols == 0) {
    return kZeroDimension;
  }
  const std::uint64_t count = floats(*args, 0);
  if (floats(*args, 1) != count || count % cols != 0) {
    return kSizeMismatch;
  }
  return identical_or_disjoint(*args, 1, 0) ? kOk : kOverlappingOutput;
}

int check_rmsnorm(const rrt_kernel_args_t *args) {
  if (const int code = check_shared(args, 3, 2); code != kOk) {
    return code;
  }
  const std::uint64_t cols = args->scalars[0];
  if (cols == 0) {
    return kZeroDimension;
  }
  const std::uint64_t count = floats(*args, 0);
  if (floats(*args, 2) != count || count % cols != 0 || floats(*args, 1) != cols) {
    return kSizeMismatch;
  }
  if (!identical_or_disjoint(*args, 2, 0) || !identical_or_disjoint(*args, 2, 1)) {
    return kOverlappingOutput;
  }
  const float eps = rrt_scalar_to_f32(args->scalars[1]);
  return std::isfinite(eps) && eps >= 0.0F ? kOk : kScalarOutOfDomain;
}

}  // namespace

int (*builtin_operand_check(std::string_view name) noexcept)(const rrt_kernel_args_t *args) {
  if (name == "fill") {
    return check_fill;
  }
  if (name == "copy" || name == "silu" || name == "gelu") {
    return check_unary_plain;
  }
  if (name == "add" || name == "mul") {
    return check_binary;
  }
  if (name == "scale") {
    return check_scale;
  }
  if (name == "matmul") {
    return check_matmul;
  }
  if (name == "softmax") {
    return check_softmax;
  }
  if (name == "rmsnorm") {
    return check_rmsnorm;
  }
  return decoder_operand_check(name);
}

}  // namespace replayrt
