// Reading enum fields that C callers filled in.
#pragma once

#include <cstdint>
#include <cstring>

namespace replayrt {

// Enum fields arrive from C callers as plain 32-bit integers that may hold any value. Loading
// such a field as the C++ enumeration type is undefined behaviour when the value is not an
// enumerator, so validation reads the integer instead and compares it with the enumerators.
template <class Enum>
std::int32_t raw_enum(const Enum &field) noexcept {
  static_assert(sizeof(Enum) == sizeof(std::int32_t));
  std::int32_t value = 0;
  std::memcpy(&value, &field, sizeof value);
  return value;
}

// Stores an arbitrary integer in an enum field, as a C caller can (tests use it to build
// invalid descriptors without undefined behaviour).
template <class Enum>
void store_raw_enum(Enum *field, std::int32_t value) noexcept {
  static_assert(sizeof(Enum) == sizeof(std::int32_t));
  std::memcpy(field, &value, sizeof value);
}

}  // namespace replayrt
