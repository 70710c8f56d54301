// Exact widening of the 16-bit float formats the built-ins read (IEEE binary16 and bfloat16) to
// binary32, on the host and, compiled by nvcc, on the device. Every binary16 and bfloat16 value,
// subnormals, infinities and NaNs included, is representable in binary32, so both conversions
// are exact; a NaN keeps its sign and its payload (shifted to binary32's high mantissa bits).
// Neither reads or makes a binary32 subnormal, so both hold with subnormals flushed to zero
// (denormals-are-zero, flush-to-zero), which a -ffast-math program sets for its threads.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define REPLAYRT_HOST_DEVICE __host__ __device__
#else
#define REPLAYRT_HOST_DEVICE
#endif

namespace replayrt {

REPLAYRT_HOST_DEVICE inline float f32_from_bits(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

REPLAYRT_HOST_DEVICE inline float f32_from_bf16(std::uint16_t bits) {
  return f32_from_bits(static_cast<std::uint32_t>(bits) << 16U);
}

REPLAYRT_HOST_DEVICE inline std::uint32_t bits_from_f32(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// Branch-free, so that loops over it vectorize. The binary16 bits move into binary32's places
// and the exponent is rebiased in integer arithmetic: by 127 - 15 for a finite value, which is
// the whole answer for a normal one, and twice that for an infinity or NaN (31 becomes 255). A
// subnormal value, m times 2^-24, is rebiased one binade higher, to 2^-14 (1 + m/1024), and
// 2^-14 subtracted: the subtraction is exact and no operand or result is a binary32 subnormal.
REPLAYRT_HOST_DEVICE inline float f32_from_f16(std::uint16_t bits) {
  constexpr std::uint32_t kRebias = (127U - 15U) << 23U;
  constexpr std::uint32_t kOneBinade = 1U << 23U;
  const std::uint32_t exponent = bits & 0x7C00U;
  const std::uint32_t magnitude = static_cast<std::uint32_t>(bits & 0x7FFFU) << 13U;
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000U) << 16U;
  // All ones where the case holds, else zero: masks, not branches.
  const std::uint32_t is_special = 0U - static_cast<std::uint32_t>(exponent == 0x7C00U);
  const std::uint32_t is_subnormal = 0U - static_cast<std::uint32_t>(exponent == 0U);
  const std::uint32_t rebiased = magnitude + kRebias + (kRebias & is_special);
  const std::uint32_t subnormal = bits_from_f32(f32_from_bits(rebiased + kOneBinade) - 0x1p-14F);
  const std::uint32_t widened = (rebiased & ~is_subnormal) | (subnormal & is_subnormal);
  return f32_from_bits(widened | sign);
}

}  // namespace replayrt
