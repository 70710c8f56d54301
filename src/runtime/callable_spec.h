// CallableSpec: a callable as the core takes it, owning its arrays. The C ABI decodes a
// caller's rrt_callable_desc_t into one (capi/callable_spec_codec.h), so the core never reads a
// caller's struct, its struct_size or an enum field that may hold any integer.
//
// What a spec promises (decode_callable_desc checks it; Callable::create relies on it):
//   - every enum field holds one of its enumerators, and operand kinds VIEW and DEVICE_VALUE
//     appear only in a spec that may declare views and device values (a 1.2 desc);
//   - counts within Callable's limits (at least one task), and each task's operand count
//     within Callable::kMaxOperandsPerTask;
//   - tensors and views have at most RRT_MAX_DIMS dimensions; the view and device-value kinds
//     are PARAM or INTERMEDIATE.
// Everything that relates one field to another (shapes, indices, kernels, data flow, a view's
// bounds) is Callable::create's to check.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <replayrt/values.h>

namespace replayrt {

// A task operand, a view's base or a device value's source: its kind and the index into the
// group that kind names.
struct OperandRef {
  rrt_operand_kind_t kind = RRT_OPERAND_PARAM;
  std::uint32_t index = 0;
};

struct TensorSpec {
  rrt_dtype_t dtype = RRT_DTYPE_F32;
  std::uint32_t ndim = 0;
  std::array<std::uint64_t, RRT_MAX_DIMS> shape{};
  rrt_direction_t direction = RRT_DIR_IN;         // parameters only
  rrt_param_space_t space = RRT_PARAM_SPACE_ANY;  // parameters only
};

// A view of `base`, `offset` elements in, plus `offset_stride` elements times device value
// `offset_value` (-1: a fixed offset) of at most `offset_value_max`.
struct ViewSpec {
  OperandRef base;
  std::uint32_t ndim = 0;
  std::array<std::uint64_t, RRT_MAX_DIMS> shape{};
  std::uint64_t offset = 0;
  std::int32_t offset_value = -1;
  std::uint64_t offset_stride = 0;
  std::uint64_t offset_value_max = 0;
};

// Element `element` of tensor `source`, read on the device when a task runs.
struct DeviceValueSpec {
  OperandRef source;
  std::uint64_t element = 0;
};

struct TaskSpec {
  std::int32_t kernel_id = -1;
  std::vector<OperandRef> operands;  // tensors first, then scalars
};

struct CallableSpec {
  rrt_bind_strategy_t bind = RRT_BIND_DEVICE_BUILD;
  std::vector<TensorSpec> params;
  std::vector<TensorSpec> intermediates;
  std::uint32_t num_scalars = 0;
  std::vector<DeviceValueSpec> device_values;
  std::vector<ViewSpec> views;
  std::vector<TaskSpec> tasks;
};

}  // namespace replayrt
