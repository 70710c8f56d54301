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

#include <replayrt/replayrt.hpp>

#include "llama_model.h"

namespace llama {

// The step's callable; its kernels are looked up by name when a context prepares it.
rrt::CallableBuilder decoder_step(const Config &config, const WeightLayout &layout);

// Elements of the kv_cache param.
std::uint64_t kv_cache_elements(const Config &config);

}  // namespace llama
