// Views and device values of a callable (ABI 1.2): their validation against the callable's
// tensors, and which tensor an operand touches when dependencies are derived.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "runtime/callable.h"
#include "runtime/callable_spec.h"

namespace replayrt {

// Checks `values` against the laid-out params and intermediates into *out; each violation is
// RRT_ERR_INVALID_ARGUMENT naming the device value.
Status validate_device_values(std::span<const DeviceValueSpec> values,
                              std::span<const TensorLayout> params,
                              std::span<const TensorLayout> intermediates,
                              std::vector<DeviceValueLayout> *out);

// Checks `views` against the laid-out tensors and device values into *out; each violation is
// RRT_ERR_INVALID_ARGUMENT naming the view.
Status validate_views(std::span<const ViewSpec> views, std::span<const TensorLayout> params,
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
