// Views and device values of a callable (ABI 1.2): their validation against the callable's
// tensors, and which tensor an operand touches when dependencies are derived.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <replayrt/replayrt.h>

#include "common/status.h"
#include "runtime/callable.h"

namespace replayrt {

// True when `desc` is a 1.2 desc: its struct_size covers the appended fields, so they and
// the params' `space` fields are read; a smaller one is read as ABI 1.1. The one place that
// decides it, for the C ABI's checks and for prepare.
bool reads_abi_1_2_fields(const rrt_callable_desc_t &desc) noexcept;

// Validates desc.device_values (a 1.2 desc) against the validated params and intermediates;
// each violation is RRT_ERR_INVALID_ARGUMENT naming the device value.
Status validate_device_values(const rrt_callable_desc_t &desc, std::span<const TensorLayout> params,
                              std::span<const TensorLayout> intermediates,
                              std::vector<DeviceValueLayout> *out);

// Validates desc.views (a 1.2 desc) against the validated tensors and device values; each
// violation is RRT_ERR_INVALID_ARGUMENT naming the view.
Status validate_views(const rrt_callable_desc_t &desc, std::span<const TensorLayout> params,
                      std::span<const TensorLayout> intermediates,
                      std::span<const DeviceValueLayout> device_values,
                      std::vector<ViewLayout> *out);

// The tensor (a param or an intermediate) a tensor operand touches: itself, or a view's base.
struct TouchedTensor {
  bool is_param = false;
  std::uint32_t index = 0;
};
TouchedTensor touched_tensor(const OperandRef &operand, std::span<const ViewLayout> views) noexcept;

// The device values a task's operands read when it runs (DEVICE_VALUE scalars and the dynamic
// offsets of its views), appended to *out; an index may repeat.
void device_values_read(std::span<const OperandRef> task_operands,
                        std::span<const ViewLayout> views, std::vector<std::uint32_t> *out);

}  // namespace replayrt
