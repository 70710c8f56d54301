// The host-side operand checks of the decoder built-ins (linear, embedding, rope, kv_store,
// attention; platform/launch/builtin_checks.h). The simulator's kernels run these same
// functions before reading their device-resident values.
#include <array>
#include <cmath>
#include <cstdint>

#include "platform/launch/builtin_checks.h"
#include "platform/launch/builtin_kernels.h"
#include "platform/launch/operand_checks.h"

namespace replayrt::builtin_checks {

using namespace kernel_result;   // NOLINT(google-build-using-namespace)
using namespace operand_checks;  // NOLINT(google-build-using-namespace)

namespace {

constexpr std::uint64_t kF32Bytes = 4;
constexpr std::uint64_t kI32Bytes = 4;

bool known_wdtype(std::uint64_t wdtype) {
  return wdtype == RRT_DTYPE_F32 || wdtype == RRT_DTYPE_F16 || wdtype == RRT_DTYPE_BF16;
}

// The element size of a weight of `wdtype`; 4 for an unknown one, which check 7 refuses later.
std::uint64_t weight_bytes(std::uint64_t wdtype) {
  return wdtype == RRT_DTYPE_F16 || wdtype == RRT_DTYPE_BF16 ? 2 : 4;
}

// The wdtype scalar (the fourth) of linear or embedding; F32 when check 1 is going to fail.
std::uint64_t wdtype_of(const rrt_kernel_args_t *args) {
  if (args == nullptr || args->scalars == nullptr || args->num_scalars != 4) {
    return RRT_DTYPE_F32;
  }
  return args->scalars[3];
}

// a * b, or 0 when the product overflows (a dimension product is never 0 for nonzero factors).
std::uint64_t product(std::uint64_t a, std::uint64_t b) {
  std::uint64_t result = 0;
  return __builtin_mul_overflow(a, b, &result) ? 0 : result;
}

}  // namespace

int check_linear(const rrt_kernel_args_t *args) {
  const std::uint64_t wdtype = wdtype_of(args);
  const std::uint64_t wbytes = weight_bytes(wdtype);
  if (const int code = check_shared(args, 4, std::array{kF32Bytes, wbytes, kF32Bytes});
      code != kOk) {
    return code;
  }
  std::array<std::uint64_t, 3> dims{};
  if (const int code = read_dimensions(*args, dims); code != kOk) {
    return code;
  }
  const auto [m, k, n] = dims;
  if (!holds(*args, 0, kF32Bytes, m, k) || !holds(*args, 1, wbytes, n, k) ||
      !holds(*args, 2, kF32Bytes, m, n)) {
    return kSizeMismatch;
  }
  if (overlaps(*args, 2, 0) || overlaps(*args, 2, 1)) {
    return kOverlappingOutput;
  }
  return known_wdtype(wdtype) ? kOk : kScalarOutOfDomain;
}

int check_embedding(const rrt_kernel_args_t *args) {
  const std::uint64_t wdtype = wdtype_of(args);
  const std::uint64_t wbytes = weight_bytes(wdtype);
  if (const int code = check_shared(args, 4, std::array{wbytes, kI32Bytes, kF32Bytes});
      code != kOk) {
    return code;
  }
  std::array<std::uint64_t, 3> dims{};
  if (const int code = read_dimensions(*args, dims); code != kOk) {
    return code;
  }
  const auto [v, d, t] = dims;
  if (!holds(*args, 0, wbytes, v, d) || args->tensor_bytes[1] / kI32Bytes != t ||
      !holds(*args, 2, kF32Bytes, t, d)) {
    return kSizeMismatch;
  }
  if (overlaps(*args, 2, 0) || overlaps(*args, 2, 1)) {
    return kOverlappingOutput;
  }
  return known_wdtype(wdtype) ? kOk : kScalarOutOfDomain;
}

int check_rope(const rrt_kernel_args_t *args) {
  if (const int code = check_shared(args, 4, std::array{kI32Bytes, kF32Bytes}); code != kOk) {
    return code;
  }
  std::array<std::uint64_t, 3> dims{};
  if (const int code = read_dimensions(*args, dims); code != kOk) {
    return code;
  }
  const auto [t, h, hd] = dims;
  const std::uint64_t width = product(h, hd);
  if (args->tensor_bytes[0] != kI32Bytes || width == 0 || !holds(*args, 1, kF32Bytes, t, width)) {
    return kSizeMismatch;
  }
  if (overlaps(*args, 1, 0)) {
    return kOverlappingOutput;
  }
  const float theta = rrt_scalar_to_f32(args->scalars[3]);
  return hd % 2 == 0 && std::isfinite(theta) && theta > 0.0F ? kOk : kScalarOutOfDomain;
}

int check_kv_store(const rrt_kernel_args_t *args) {
  if (const int code = check_shared(args, 3, std::array{kF32Bytes, kI32Bytes, kF32Bytes});
      code != kOk) {
    return code;
  }
  std::array<std::uint64_t, 3> dims{};
  if (const int code = read_dimensions(*args, dims); code != kOk) {
    return code;
  }
  const auto [t, w, s] = dims;
  if (!holds(*args, 0, kF32Bytes, t, w) || args->tensor_bytes[1] != kI32Bytes ||
      !holds(*args, 2, kF32Bytes, s, w) || t > s) {
    return kSizeMismatch;
  }
  return overlaps(*args, 2, 0) || overlaps(*args, 2, 1) ? kOverlappingOutput : kOk;
}

int check_attention(const rrt_kernel_args_t *args) {
  if (const int code =
          check_shared(args, 5, std::array{kF32Bytes, kF32Bytes, kF32Bytes, kI32Bytes, kF32Bytes});
      code != kOk) {
    return code;
  }
  std::array<std::uint64_t, 5> dims{};
  if (const int code = read_dimensions(*args, dims); code != kOk) {
    return code;
  }
  const auto [t, h, kvh, hd, s] = dims;
  const std::uint64_t q_width = product(h, hd);
  const std::uint64_t kv_width = product(kvh, hd);
  if (q_width == 0 || kv_width == 0 || !holds(*args, 0, kF32Bytes, t, q_width) ||
      !holds(*args, 1, kF32Bytes, s, kv_width) || !holds(*args, 2, kF32Bytes, s, kv_width) ||
      args->tensor_bytes[3] != kI32Bytes || !holds(*args, 4, kF32Bytes, t, q_width) || t > s) {
    return kSizeMismatch;
  }
  for (std::size_t input = 0; input < 4; ++input) {
    if (overlaps(*args, 4, input)) {
      return kOverlappingOutput;
    }
  }
  return h % kvh == 0 ? kOk : kScalarOutOfDomain;
}

}  // namespace replayrt::builtin_checks
