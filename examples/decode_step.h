// A transformer-style decode step built from replayrt's built-in kernels, and a plain C++
// reference of the same computation.
//
//   h = rmsnorm(x, w_norm)       [rows, dim]
//   u = h @ w_up                 [rows, hidden]
//   s = silu(u)                  [rows, hidden]
//   y = s @ w_down               [rows, dim]
//   out = x + y                  [rows, dim]
#pragma once

#include <cstdint>
#include <vector>

#include <replayrt/replayrt.hpp>

namespace demo {

struct DecodeShape {
  std::uint32_t rows = 4;
  std::uint32_t dim = 128;
  std::uint32_t hidden = 512;
};

// The callable's parameters, in this order: x, w_norm, w_up, w_down, out.
rrt::CallableBuilder decode_step(DecodeShape shape, rrt_bind_strategy_t bind);

struct DecodeWeights {
  std::vector<float> norm;  // [dim]
  std::vector<float> up;    // [dim, hidden]
  std::vector<float> down;  // [hidden, dim]
};

// Deterministic weights and inputs (a fixed linear congruential sequence).
DecodeWeights make_weights(DecodeShape shape);
std::vector<float> make_input(DecodeShape shape, std::uint32_t step);

// The reference: the same arithmetic in float, in the same summation order.
std::vector<float> reference_decode(DecodeShape shape, const DecodeWeights &weights,
                                    const std::vector<float> &x);

inline constexpr float kEpsilon = 1e-5F;

}  // namespace demo
