// Builds rrt_callable_desc_t values for tests and benchmarks, owning every array the
// descriptor points into; the descriptor stays valid while the builder lives and is not
// modified.
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <vector>

#include <replayrt/replayrt.h>

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
inline rrt_operand_t imm_f32(float value) {
  return {RRT_OPERAND_IMMEDIATE, static_cast<std::uint32_t>(rrt_scalar_from_f32(value))};
}

// Built-in kernel ids in a fresh context (builtin_kernels() order).
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
  kGelu
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
    return desc_;
  }

 private:
  rrt_callable_desc_t desc_{};
  std::vector<rrt_tensor_desc_t> params_;
  std::vector<rrt_tensor_desc_t> intermediates_;
  std::deque<std::vector<rrt_operand_t>> operands_;
  std::vector<rrt_task_desc_t> tasks_;
};

}  // namespace replayrt::testing
