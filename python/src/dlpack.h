// DLPack: the structs of the DLPack ABI (v0.8: DLDevice, DLDataType,
// DLTensor, DLManagedTensor), declared here from the specification. A `__dlpack__` call
// returns a capsule named "dltensor"; a consumer that takes the tensor renames it
// "used_dltensor" and calls its deleter, and a capsule nobody took deletes it when collected.
#pragma once

#include <cstdint>

extern "C" {
struct DLDevice {
  std::int32_t device_type;  // kDLCPU = 1, kDLCUDA = 2
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;  // kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void *data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t *shape;
  std::int64_t *strides;  // NULL: compact row-major
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(DLManagedTensor *self);
};
}

inline constexpr std::int32_t kDLCPU = 1;
inline constexpr std::int32_t kDLCUDA = 2;

inline constexpr std::uint8_t kDLInt = 0;
inline constexpr std::uint8_t kDLUInt = 1;
inline constexpr std::uint8_t kDLFloat = 2;
inline constexpr std::uint8_t kDLBfloat = 4;
inline constexpr std::uint8_t kDLBool = 6;
