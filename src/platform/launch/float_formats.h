// Exact widening of the 16-bit float formats the built-ins read (IEEE binary16 and bfloat16) to
// binary32, on the host and, compiled by nvcc, on the device. Every binary16 and bfloat16 value,
// subnormals, infinities and NaNs included, is representable in binary32, so both conversions
// are exact; a NaN keeps its sign and the high bits of its payload.
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

REPLAYRT_HOST_DEVICE inline float f32_from_f16(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000U) << 16U;
  std::uint32_t exponent = (bits >> 10U) & 0x1FU;
  std::uint32_t mantissa = bits & 0x3FFU;
  if (exponent == 0x1FU) {  // infinity or NaN
    return f32_from_bits(sign | 0x7F800000U | (mantissa << 13U));
  }
  if (exponent == 0) {
    if (mantissa == 0) {
      return f32_from_bits(sign);
    }
    // A subnormal: shift the mantissa up until its leading one is the implicit bit.
    exponent = 1;
    while ((mantissa & 0x400U) == 0) {
      mantissa <<= 1U;
      --exponent;
    }
    mantissa &= 0x3FFU;
  }
  return f32_from_bits(sign | ((exponent + 112U) << 23U) | (mantissa << 13U));
}

}  // namespace replayrt
