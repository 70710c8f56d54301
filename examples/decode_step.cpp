#include "decode_step.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace demo {

namespace {

std::int32_t kernel_id(rrt_context_t ctx, const char *name) {
  std::int32_t id = -1;
  if (rrt_kernel_lookup(ctx, name, &id) != RRT_OK) {
    std::abort();
  }
  return id;
}

rrt_tensor_desc_t f32_2d(std::uint64_t a, std::uint64_t b, rrt_direction_t direction) {
  rrt_tensor_desc_t desc{};
  desc.dtype = RRT_DTYPE_F32;
  desc.ndim = 2;
  desc.shape[0] = a;
  desc.shape[1] = b;
  desc.direction = direction;
  return desc;
}

rrt_operand_t param(std::uint32_t index) {
  return {RRT_OPERAND_PARAM, index};
}
rrt_operand_t inter(std::uint32_t index) {
  return {RRT_OPERAND_INTERMEDIATE, index};
}
rrt_operand_t imm(std::uint32_t value) {
  return {RRT_OPERAND_IMMEDIATE, value};
}
rrt_operand_t imm_f32(float value) {
  return {RRT_OPERAND_IMMEDIATE, static_cast<std::uint32_t>(rrt_scalar_from_f32(value))};
}

float next_value(std::uint32_t *state) {
  *state = *state * 1664525U + 1013904223U;
  return static_cast<float>((*state >> 8) & 0xffff) / 65536.0F - 0.5F;
}

}  // namespace

DecodeStepDesc::DecodeStepDesc(rrt_context_t ctx, DecodeShape shape, rrt_bind_strategy_t bind) {
  enum Intermediate : std::uint32_t { kH = 0, kU, kS, kY };
  params_ = {f32_2d(shape.rows, shape.dim, RRT_DIR_IN), f32_2d(1, shape.dim, RRT_DIR_IN),
             f32_2d(shape.dim, shape.hidden, RRT_DIR_IN),
             f32_2d(shape.hidden, shape.dim, RRT_DIR_IN),
             f32_2d(shape.rows, shape.dim, RRT_DIR_OUT)};
  intermediates_ = {f32_2d(shape.rows, shape.dim, RRT_DIR_INOUT),
                    f32_2d(shape.rows, shape.hidden, RRT_DIR_INOUT),
                    f32_2d(shape.rows, shape.hidden, RRT_DIR_INOUT),
                    f32_2d(shape.rows, shape.dim, RRT_DIR_INOUT)};
  operands_ = {
      {param(kX), param(kNormWeight), inter(kH), imm(shape.dim), imm_f32(kEpsilon)},
      {inter(kH), param(kUpWeight), inter(kU), imm(shape.rows), imm(shape.dim), imm(shape.hidden)},
      {inter(kU), inter(kS)},
      {inter(kS), param(kDownWeight), inter(kY), imm(shape.rows), imm(shape.hidden),
       imm(shape.dim)},
      {param(kX), inter(kY), param(kOut)},
  };
  const char *kernels[] = {"rmsnorm", "matmul", "silu", "matmul", "add"};
  for (std::size_t t = 0; t < operands_.size(); ++t) {
    tasks_.push_back(rrt_task_desc_t{kernel_id(ctx, kernels[t]),
                                     static_cast<std::uint32_t>(operands_[t].size()),
                                     operands_[t].data()});
  }
  desc_.struct_size = sizeof(rrt_callable_desc_t);
  desc_.bind = bind;
  desc_.num_params = static_cast<std::uint32_t>(params_.size());
  desc_.params = params_.data();
  desc_.num_intermediates = static_cast<std::uint32_t>(intermediates_.size());
  desc_.intermediates = intermediates_.data();
  desc_.num_scalars = 0;
  desc_.num_tasks = static_cast<std::uint32_t>(tasks_.size());
  desc_.tasks = tasks_.data();
}

DecodeWeights make_weights(DecodeShape shape) {
  std::uint32_t state = 12345;
  DecodeWeights weights;
  weights.norm.resize(shape.dim);
  for (float &w : weights.norm) {
    w = 1.0F + 0.5F * next_value(&state);
  }
  weights.up.resize(static_cast<std::size_t>(shape.dim) * shape.hidden);
  for (float &w : weights.up) {
    w = 0.2F * next_value(&state);
  }
  weights.down.resize(static_cast<std::size_t>(shape.hidden) * shape.dim);
  for (float &w : weights.down) {
    w = 0.2F * next_value(&state);
  }
  return weights;
}

std::vector<float> make_input(DecodeShape shape, std::uint32_t step) {
  std::uint32_t state = 777U + step * 2654435761U;
  std::vector<float> x(static_cast<std::size_t>(shape.rows) * shape.dim);
  for (float &v : x) {
    v = 2.0F * next_value(&state);
  }
  return x;
}

std::vector<float> reference_decode(DecodeShape shape, const DecodeWeights &weights,
                                    const std::vector<float> &x) {
  const std::size_t rows = shape.rows;
  const std::size_t dim = shape.dim;
  const std::size_t hidden = shape.hidden;
  std::vector<float> h(rows * dim);
  for (std::size_t r = 0; r < rows; ++r) {
    float sum = 0.0F;
    for (std::size_t c = 0; c < dim; ++c) {
      sum += x[r * dim + c] * x[r * dim + c];
    }
    const float scale = 1.0F / std::sqrt(sum / static_cast<float>(dim) + kEpsilon);
    for (std::size_t c = 0; c < dim; ++c) {
      h[r * dim + c] = x[r * dim + c] * scale * weights.norm[c];
    }
  }
  std::vector<float> u(rows * hidden, 0.0F);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t k = 0; k < dim; ++k) {
      for (std::size_t j = 0; j < hidden; ++j) {
        u[r * hidden + j] += h[r * dim + k] * weights.up[k * hidden + j];
      }
    }
  }
  for (float &v : u) {
    v = v / (1.0F + std::exp(-v));
  }
  std::vector<float> out(rows * dim, 0.0F);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t k = 0; k < hidden; ++k) {
      for (std::size_t j = 0; j < dim; ++j) {
        out[r * dim + j] += u[r * hidden + k] * weights.down[k * dim + j];
      }
    }
  }
  for (std::size_t i = 0; i < rows * dim; ++i) {
    out[i] += x[i];
  }
  return out;
}

}  // namespace demo
