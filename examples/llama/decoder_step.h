// One decode step of a llama-style model as a replayrt callable built from the built-in
// kernels: a token in, the logits of the next token out. Every value that changes from step
// to step (the token id and its position) lives in a small device tensor, so one captured
// graph serves every step.
//
// Params (all DEVICE, so the capacity plan reserves no staging):
//   0 weights  f32 [total]     every weight of the model, in llama2.c order (WeightLayout);
//                              each task reads its matrix through a view
//   1 kv_cache f32 [2, layers, seq_len, kv_dim]  keys, then values; written at row `pos`
//   2 state    i32 [2]         the token id and its position
//   3 logits   f32 [vocab]
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <replayrt/replayrt.h>

#include "llama_model.h"

namespace llama {

enum StepParam : std::uint32_t { kWeights = 0, kKvCache, kState, kLogits, kStepParamCount };

// Owns the arrays a rrt_callable_desc_t points into.
class DecoderStep {
 public:
  // Looks the built-in kernels up in `ctx`; returns with ok() false when one is missing.
  DecoderStep(rrt_context_t ctx, const Config &config, const WeightLayout &layout);

  bool ok() const { return ok_; }
  const rrt_callable_desc_t &desc() const { return desc_; }
  std::uint64_t kv_cache_elements() const { return kv_cache_elements_; }
  // The kernel name of each task, in program order (for a timeline's slice names).
  const std::vector<std::string> &task_kernels() const { return task_kernels_; }

 private:
  struct Kernels {
    std::int32_t embedding, rmsnorm, linear, rope, kv_store, attention, add, mul, silu;
  };

  std::uint32_t intermediate(std::uint64_t elements);
  rrt_operand_t view(StepParam base, std::uint64_t offset, std::uint64_t rows, std::uint64_t cols);
  void task(std::int32_t kernel, std::vector<rrt_operand_t> operands);

  bool ok_ = true;
  Kernels kernels_{};
  std::uint64_t kv_cache_elements_ = 0;
  std::vector<rrt_tensor_desc_t> params_;
  std::vector<rrt_tensor_desc_t> intermediates_;
  std::vector<rrt_view_desc_t> views_;
  std::vector<std::vector<rrt_operand_t>> operands_;
  std::vector<rrt_task_desc_t> tasks_;
  std::vector<std::pair<std::int32_t, const char *>> kernel_names_;
  std::vector<std::string> task_kernels_;
  rrt_callable_desc_t desc_{};
};

}  // namespace llama
