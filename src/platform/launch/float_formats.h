// Exact widening of the 16-bit float formats the built-ins read (IEEE binary16 and bfloat16) to
// binary32, on the host and, compiled by nvcc, on the device. Every binary16 and bfloat16 value,
// subnormals, infinities and NaNs included, is representable in binary32, so both conversions
// are exact; a NaN keeps its sign and its payload (shifted to binary32's high mantissa bits).
// They assume the default floating-point environment (subnormals not flushed to zero).
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

// Branch-free for finite values: the magnitude bits shifted into binary32's places read as a
// float 2^-112 times the binary16 value (a binary32 subnormal for a binary16 subnormal), and
// the multiplication by 2^112 is exact. Infinities and NaNs take binary32's maximum exponent.
REPLAYRT_HOST_DEVICE inline float f32_from_f16(std::uint16_t bits) {
  const std::uint32_t magnitude = static_cast<std::uint32_t>(bits & 0x7FFFU) << 13U;
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000U) << 16U;
  const std::uint32_t finite = bits_from_f32(f32_from_bits(magnitude) * 0x1p112F);
  // All ones for an infinity or NaN, else zero: a mask, so that loops over it vectorize.
  const std::uint32_t special = 0U - static_cast<std::uint32_t>((bits & 0x7C00U) == 0x7C00U);
  const std::uint32_t widened = (finite & ~special) | ((magnitude | 0x7F800000U) & special);
  return f32_from_bits(widened | sign);
}

}  // namespace replayrt
