#include "decode_step.h"

#include <cmath>

namespace demo {

namespace {

float next_value(std::uint32_t *state) {
  *state = *state * 1664525U + 1013904223U;
  return static_cast<float>((*state >> 8) & 0xffff) / 65536.0F - 0.5F;
}

}  // namespace

rrt::CallableBuilder decode_step(DecodeShape shape, rrt_bind_strategy_t bind) {
  using rrt::Operand;
  rrt::CallableBuilder b(bind);
  const Operand x = b.param("x", RRT_DTYPE_F32, {shape.rows, shape.dim}, RRT_DIR_IN);
  const Operand norm = b.param("w_norm", RRT_DTYPE_F32, {1, shape.dim}, RRT_DIR_IN);
  const Operand up = b.param("w_up", RRT_DTYPE_F32, {shape.dim, shape.hidden}, RRT_DIR_IN);
  const Operand down = b.param("w_down", RRT_DTYPE_F32, {shape.hidden, shape.dim}, RRT_DIR_IN);
  const Operand out = b.param("out", RRT_DTYPE_F32, {shape.rows, shape.dim}, RRT_DIR_OUT);
  const Operand h = b.intermediate("h", RRT_DTYPE_F32, {shape.rows, shape.dim});
  const Operand u = b.intermediate("u", RRT_DTYPE_F32, {shape.rows, shape.hidden});
  const Operand s = b.intermediate("s", RRT_DTYPE_F32, {shape.rows, shape.hidden});
  const Operand y = b.intermediate("y", RRT_DTYPE_F32, {shape.rows, shape.dim});
  b.task("rmsnorm", {x, norm, h, Operand::immediate(shape.dim), Operand::immediate_f32(kEpsilon)});
  b.task("matmul", {h, up, u, Operand::immediate(shape.rows), Operand::immediate(shape.dim),
                    Operand::immediate(shape.hidden)});
  b.task("silu", {u, s});
  b.task("matmul", {s, down, y, Operand::immediate(shape.rows), Operand::immediate(shape.hidden),
                    Operand::immediate(shape.dim)});
  b.task("add", {x, y, out});
  return b;
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
