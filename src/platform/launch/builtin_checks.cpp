// The host-side operand checks of the built-in kernels (platform/launch/builtin_checks.h) and
// the built-in spec table and builtin_operand_check (platform/launch/builtin_kernels.h).
#include "platform/launch/builtin_checks.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "platform/launch/builtin_kernels.h"
#include "platform/launch/operand_checks.h"

namespace replayrt {
namespace builtin_checks {

using namespace kernel_result;   // NOLINT(google-build-using-namespace)
using namespace operand_checks;  // NOLINT(google-build-using-namespace)

namespace {

// (in, out) of one size with `num_scalars` scalars.
int check_in_out(const rrt_kernel_args_t *args, std::uint32_t num_scalars) {
  if (const int code = check_shared_f32(args, 2, num_scalars); code != kOk) {
    return code;
  }
  if (floats(*args, 1) != floats(*args, 0)) {
    return kSizeMismatch;
  }
  return identical_or_disjoint(*args, 1, 0) ? kOk : kOverlappingOutput;
}

}  // namespace

int check_fill(const rrt_kernel_args_t *args) {
  return check_shared_f32(args, 1, 1);
}

int check_unary(const rrt_kernel_args_t *args) {
  return check_in_out(args, 0);
}

int check_scale(const rrt_kernel_args_t *args) {
  return check_in_out(args, 1);
}

int check_binary(const rrt_kernel_args_t *args) {
  if (const int code = check_shared_f32(args, 3, 0); code != kOk) {
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
  if (const int code = check_shared_f32(args, 3, 3); code != kOk) {
    return code;
  }
  std::array<std::uint64_t, 3> dims{};
  if (const int code = read_dimensions(*args, dims); code != kOk) {
    return code;
  }
  const auto [m, k, n] = dims;
  if (!holds_matrix(floats(*args, 0), m, k) || !holds_matrix(floats(*args, 1), k, n) ||
      !holds_matrix(floats(*args, 2), m, n)) {
    return kSizeMismatch;
  }
  return overlaps(*args, 2, 0) || overlaps(*args, 2, 1) ? kOverlappingOutput : kOk;
}

int check_softmax(const rrt_kernel_args_t *args) {
  if (const int code = check_shared_f32(args, 2, 1); code != kOk) {
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
  if (const int code = check_shared_f32(args, 3, 2); code != kOk) {
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

}  // namespace builtin_checks

namespace {

constexpr std::array<BuiltinKernelSpec, 15> kSpecs{{
    {"fill", 1, 1, builtin_checks::check_fill},
    {"copy", 2, 0, builtin_checks::check_unary},
    {"add", 3, 0, builtin_checks::check_binary},
    {"mul", 3, 0, builtin_checks::check_binary},
    {"scale", 2, 1, builtin_checks::check_scale},
    {"matmul", 3, 3, builtin_checks::check_matmul},
    {"softmax", 2, 1, builtin_checks::check_softmax},
    {"rmsnorm", 3, 2, builtin_checks::check_rmsnorm},
    {"silu", 2, 0, builtin_checks::check_unary},
    {"gelu", 2, 0, builtin_checks::check_unary},
    {"linear", 3, 4, builtin_checks::check_linear},
    {"embedding", 3, 4, builtin_checks::check_embedding},
    {"rope", 2, 4, builtin_checks::check_rope},
    {"kv_store", 3, 3, builtin_checks::check_kv_store},
    {"attention", 5, 5, builtin_checks::check_attention},
}};

}  // namespace

std::span<const BuiltinKernelSpec> builtin_kernel_specs() noexcept {
  return kSpecs;
}

int (*builtin_operand_check(std::string_view name) noexcept)(const rrt_kernel_args_t *args) {
  for (const BuiltinKernelSpec &spec : kSpecs) {
    if (spec.name == name) {
      return spec.check;
    }
  }
  return nullptr;
}

}  // namespace replayrt
