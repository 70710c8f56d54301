// Builds rrt_callable_desc_t values for tests and benchmarks, owning every array the
// descriptor points into; the descriptor stays valid while the builder lives and is not
// modified. spec() and create_callable() decode a descriptor as the C ABI does.
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <vector>

#include <replayrt/replayrt.h>

#include "capi/callable_spec_codec.h"
#include "common/status.h"
#include "runtime/callable.h"
#include "runtime/callable_spec.h"

namespace replayrt::testing {

inline rrt_tensor_desc_t f32(std::initializer_list<std::uint64_t> shape,
                             rrt_direction_t direction = RRT_DIR_IN) {
  rrt_tensor_desc_t desc{};
  desc.dtype = RRT_DTYPE_F32;
  desc.ndim = static_cast<std::uint32_t>(shape.size());
  std::uint32_t d = 0;
  for (const std::uint64_t extent : shape) {
    desc.shape[d++] = extent;
  }
  desc.direction = direction;
  return desc;
}

inline rrt_operand_t param(std::uint32_t index) {
  return {RRT_OPERAND_PARAM, index};
}
inline rrt_operand_t inter(std::uint32_t index) {
  return {RRT_OPERAND_INTERMEDIATE, index};
}
inline rrt_operand_t scalar(std::uint32_t index) {
  return {RRT_OPERAND_SCALAR, index};
}
inline rrt_operand_t imm(std::uint32_t value) {
  return {RRT_OPERAND_IMMEDIATE, value};
}
inline rrt_operand_t view(std::uint32_t index) {
  return {RRT_OPERAND_VIEW, index};
}
inline rrt_operand_t device_value(std::uint32_t index) {
  return {RRT_OPERAND_DEVICE_VALUE, index};
}
inline rrt_operand_t imm_f32(float value) {
  return {RRT_OPERAND_IMMEDIATE, static_cast<std::uint32_t>(rrt_scalar_from_f32(value))};
}

// Built-in kernel ids in a fresh context (builtin_kernel_specs() order).
enum BuiltinId : std::int32_t {
  kFill = 0,
  kCopy,
  kAdd,
  kMul,
  kScale,
  kMatmul,
  kSoftmax,
  kRmsnorm,
  kSilu,
  kGelu,
  kLinear,
  kEmbedding,
  kRope,
  kKvStore,
  kAttention
};

class CallableBuilder {
 public:
  explicit CallableBuilder(rrt_bind_strategy_t bind = RRT_BIND_DEVICE_BUILD) { desc_.bind = bind; }

  CallableBuilder &param(rrt_tensor_desc_t desc) {
    params_.push_back(desc);
    return *this;
  }
  CallableBuilder &intermediate(rrt_tensor_desc_t desc) {
    intermediates_.push_back(desc);
    return *this;
  }
  CallableBuilder &scalars(std::uint32_t count) {
    desc_.num_scalars = count;
    return *this;
  }
  // A view of PARAM or INTERMEDIATE `base` with shape `shape`, `offset` elements in, plus
  // `stride` times device value `offset_value` (-1: fixed) up to `max`.
  CallableBuilder &view(rrt_operand_kind_t base_kind, std::uint32_t base,
                        std::initializer_list<std::uint64_t> shape, std::uint64_t offset,
                        std::int32_t offset_value = -1, std::uint64_t stride = 0,
                        std::uint64_t max = 0) {
    rrt_view_desc_t desc{};
    desc.base_kind = base_kind;
    desc.base_index = base;
    desc.ndim = static_cast<std::uint32_t>(shape.size());
    std::uint32_t d = 0;
    for (const std::uint64_t extent : shape) {
      desc.shape[d++] = extent;
    }
    desc.offset = offset;
    desc.offset_value = offset_value;
    desc.offset_stride = stride;
    desc.offset_value_max = max;
    views_.push_back(desc);
    return *this;
  }
  CallableBuilder &device_value(rrt_operand_kind_t source_kind, std::uint32_t source,
                                std::uint64_t element) {
    device_values_.push_back(rrt_device_value_desc_t{source_kind, source, element});
    return *this;
  }
  CallableBuilder &task(std::int32_t kernel, std::initializer_list<rrt_operand_t> operands) {
    operands_.emplace_back(operands);
    const std::vector<rrt_operand_t> &stored = operands_.back();
    tasks_.push_back(rrt_task_desc_t{kernel, static_cast<std::uint32_t>(stored.size()),
                                     stored.empty() ? nullptr : stored.data()});
    return *this;
  }

  const rrt_callable_desc_t &desc() {
    desc_.struct_size = sizeof(rrt_callable_desc_t);
    desc_.num_params = static_cast<std::uint32_t>(params_.size());
    desc_.params = params_.data();
    desc_.num_intermediates = static_cast<std::uint32_t>(intermediates_.size());
    desc_.intermediates = intermediates_.data();
    desc_.num_tasks = static_cast<std::uint32_t>(tasks_.size());
    desc_.tasks = tasks_.data();
    desc_.num_views = static_cast<std::uint32_t>(views_.size());
    desc_.views = views_.empty() ? nullptr : views_.data();
    desc_.num_device_values = static_cast<std::uint32_t>(device_values_.size());
    desc_.device_values = device_values_.empty() ? nullptr : device_values_.data();
    return desc_;
  }

  // desc() decoded as rrt_callable_prepare decodes it; throws std::invalid_argument with the
  // decoder's message when the descriptor does not decode.
  CallableSpec spec() {
    CallableSpec out;
    const Status decoded = capi::decode_callable_desc(&desc(), &out);
    if (!decoded.is_ok()) {
      throw std::invalid_argument(decoded.message());
    }
    return out;
  }

 private:
  rrt_callable_desc_t desc_{};
  std::vector<rrt_tensor_desc_t> params_;
  std::vector<rrt_tensor_desc_t> intermediates_;
  std::deque<std::vector<rrt_operand_t>> operands_;
  std::vector<rrt_task_desc_t> tasks_;
  std::vector<rrt_view_desc_t> views_;
  std::vector<rrt_device_value_desc_t> device_values_;
};

// Decodes `desc` and creates the callable from it, as rrt_callable_prepare does; the first
// failure of either step.
inline Status create_callable(
    const rrt_callable_desc_t &desc, const KernelRegistry &kernels,
    std::unique_ptr<const Callable> *out,
    Callable::UnknownKernels unknown = Callable::UnknownKernels::kReject) {
  CallableSpec spec;
  RRT_RETURN_IF_ERROR(capi::decode_callable_desc(&desc, &spec));
  return Callable::create(spec, kernels, out, unknown);
}

}  // namespace replayrt::testing
