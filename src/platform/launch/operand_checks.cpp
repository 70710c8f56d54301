#include "platform/launch/operand_checks.h"

#include <algorithm>
#include <array>

#include "platform/launch/builtin_kernels.h"

namespace replayrt::operand_checks {

using namespace kernel_result;  // NOLINT(google-build-using-namespace)

namespace {

constexpr std::uint64_t kF32Bytes = sizeof(float);
static_assert(alignof(float) == sizeof(float));

constexpr std::array<std::uint64_t, 5> kF32Elements{kF32Bytes, kF32Bytes, kF32Bytes, kF32Bytes,
                                                    kF32Bytes};

}  // namespace

int check_shared(const rrt_kernel_args_t *args, std::uint32_t num_scalars,
                 std::span<const std::uint64_t> element_bytes) {
  const std::size_t num_tensors = element_bytes.size();
  if (args == nullptr || args->num_tensors != num_tensors || args->num_scalars != num_scalars ||
      args->tensors == nullptr || args->tensor_bytes == nullptr ||
      (num_scalars != 0 && args->scalars == nullptr)) {
    return kWrongOperandCount;
  }
  for (std::size_t i = 0; i < num_tensors; ++i) {
    const std::uint64_t bytes = args->tensor_bytes[i];
    if (bytes == 0 || bytes % element_bytes[i] != 0) {
      return kBadByteSize;
    }
  }
  for (std::size_t i = 0; i < num_tensors; ++i) {
    const auto address = reinterpret_cast<std::uintptr_t>(args->tensors[i]);
    if (address == 0 || address % element_bytes[i] != 0) {
      return kUnusableAddress;
    }
  }
  return kOk;
}

int check_shared_f32(const rrt_kernel_args_t *args, std::uint32_t num_tensors,
                     std::uint32_t num_scalars) {
  return check_shared(args, num_scalars, std::span(kF32Elements).first(num_tensors));
}

int read_dimensions(const rrt_kernel_args_t &args, std::span<std::uint64_t> dims) {
  std::copy_n(args.scalars, dims.size(), dims.begin());
  return std::find(dims.begin(), dims.end(), std::uint64_t{0}) == dims.end() ? kOk : kZeroDimension;
}

std::uint64_t elements(const rrt_kernel_args_t &args, std::size_t index,
                       std::uint64_t element_bytes) {
  return args.tensor_bytes[index] / element_bytes;
}

std::uint64_t floats(const rrt_kernel_args_t &args, std::size_t index) {
  return elements(args, index, kF32Bytes);
}

bool holds_matrix(std::uint64_t count, std::uint64_t rows, std::uint64_t cols) {
  return count % rows == 0 && count / rows == cols;
}

bool holds(const rrt_kernel_args_t &args, std::size_t index, std::uint64_t element_bytes,
           std::uint64_t rows, std::uint64_t cols) {
  return holds_matrix(elements(args, index, element_bytes), rows, cols);
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

}  // namespace replayrt::operand_checks
