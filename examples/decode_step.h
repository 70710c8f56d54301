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

#include <replayrt/replayrt.h>

namespace demo {

struct DecodeShape {
  std::uint32_t rows = 4;
  std::uint32_t dim = 128;
  std::uint32_t hidden = 512;
};

// Parameter order of the callable: x, w_norm, w_up, w_down, out.
enum DecodeParam : std::uint32_t { kX = 0, kNormWeight, kUpWeight, kDownWeight, kOut, kParamCount };

// Owns the arrays a rrt_callable_desc_t points into.
class DecodeStepDesc {
 public:
  DecodeStepDesc(rrt_context_t ctx_for_kernel_ids, DecodeShape shape, rrt_bind_strategy_t bind);
  const rrt_callable_desc_t &desc() const { return desc_; }

 private:
  std::vector<rrt_tensor_desc_t> params_;
  std::vector<rrt_tensor_desc_t> intermediates_;
  std::vector<std::vector<rrt_operand_t>> operands_;
  std::vector<rrt_task_desc_t> tasks_;
  rrt_callable_desc_t desc_{};
};

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
