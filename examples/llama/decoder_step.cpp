#include "decoder_step.h"

#include <string>

namespace llama {

std::uint64_t kv_cache_elements(const Config &config) {
  return 2ULL * config.n_layers * config.seq_len * config.kv_dim();
}

rrt::CallableBuilder decoder_step(const Config &config, const WeightLayout &layout) {
  using rrt::Operand;
  const std::uint64_t dim = config.dim;
  const std::uint64_t kv_dim = config.kv_dim();
  const std::uint64_t hidden = config.hidden_dim;
  const std::uint64_t seq = config.seq_len;
  const std::uint64_t layers = config.n_layers;
  const std::uint64_t vocab = config.vocab_size;

  rrt::CallableBuilder b;
  const Operand weights =
      b.param("weights", RRT_DTYPE_F32, {layout.total}, RRT_DIR_IN, RRT_PARAM_SPACE_DEVICE);
  const Operand kv_cache = b.param("kv_cache", RRT_DTYPE_F32, {kv_cache_elements(config)},
                                   RRT_DIR_INOUT, RRT_PARAM_SPACE_DEVICE);
  const Operand state = b.param("state", RRT_DTYPE_I32, {2}, RRT_DIR_IN, RRT_PARAM_SPACE_DEVICE);
  const Operand logits =
      b.param("logits", RRT_DTYPE_F32, {vocab}, RRT_DIR_OUT, RRT_PARAM_SPACE_DEVICE);
  std::uint32_t views = 0;
  const auto view = [&](const Operand &base, std::uint64_t offset, std::uint64_t rows,
                        std::uint64_t cols) {
    return b.view("view " + std::to_string(views++), base, {rows, cols}, offset);
  };
  const auto imm = [](std::uint64_t value) {
    return Operand::immediate(static_cast<std::uint32_t>(value));
  };

  const Operand x = b.intermediate("x", RRT_DTYPE_F32, {dim});
  const Operand xb = b.intermediate("xb", RRT_DTYPE_F32, {dim});
  const Operand q = b.intermediate("q", RRT_DTYPE_F32, {dim});
  const Operand k = b.intermediate("k", RRT_DTYPE_F32, {kv_dim});
  const Operand v = b.intermediate("v", RRT_DTYPE_F32, {kv_dim});
  const Operand attended = b.intermediate("attended", RRT_DTYPE_F32, {dim});
  const Operand projected = b.intermediate("projected", RRT_DTYPE_F32, {dim});
  const Operand h1 = b.intermediate("h1", RRT_DTYPE_F32, {hidden});
  const Operand h3 = b.intermediate("h3", RRT_DTYPE_F32, {hidden});
  const Operand token = view(state, 0, 1, 1);
  const Operand pos = view(state, 1, 1, 1);
  const Operand eps = Operand::immediate_f32(kRmsEpsilon);
  const Operand theta = Operand::immediate_f32(kRopeTheta);
  const Operand one = imm(1);
  const Operand f32 = imm(RRT_DTYPE_F32);
  const auto linear = [&](const Operand &input, std::uint64_t weight, std::uint64_t in_size,
                          std::uint64_t out_size, const Operand &output) {
    b.task("linear", {input, view(weights, weight, out_size, in_size), output, one, imm(in_size),
                      imm(out_size), f32});
  };

  b.task("embedding",
         {view(weights, layout.embedding, vocab, dim), token, x, imm(vocab), imm(dim), one, f32});
  for (std::uint64_t l = 0; l < layers; ++l) {
    const Operand keys = view(kv_cache, l * seq * kv_dim, seq, kv_dim);
    const Operand values = view(kv_cache, (layers + l) * seq * kv_dim, seq, kv_dim);
    b.task("rmsnorm", {x, view(weights, layout.rms_att + l * dim, 1, dim), xb, imm(dim), eps});
    linear(xb, layout.wq + l * dim * dim, dim, dim, q);
    linear(xb, layout.wk + l * kv_dim * dim, dim, kv_dim, k);
    linear(xb, layout.wv + l * kv_dim * dim, dim, kv_dim, v);
    b.task("rope", {pos, q, one, imm(config.n_heads), imm(config.head_dim()), theta});
    b.task("rope", {pos, k, one, imm(config.n_kv_heads), imm(config.head_dim()), theta});
    b.task("kv_store", {k, pos, keys, one, imm(kv_dim), imm(seq)});
    b.task("kv_store", {v, pos, values, one, imm(kv_dim), imm(seq)});
    b.task("attention", {q, keys, values, pos, attended, one, imm(config.n_heads),
                         imm(config.n_kv_heads), imm(config.head_dim()), imm(seq)});
    linear(attended, layout.wo + l * dim * dim, dim, dim, projected);
    b.task("add", {x, projected, x});
    b.task("rmsnorm", {x, view(weights, layout.rms_ffn + l * dim, 1, dim), xb, imm(dim), eps});
    linear(xb, layout.w1 + l * hidden * dim, dim, hidden, h1);
    linear(xb, layout.w3 + l * hidden * dim, dim, hidden, h3);
    b.task("silu", {h1, h1});
    b.task("mul", {h1, h3, h1});
    linear(h1, layout.w2 + l * dim * hidden, hidden, dim, projected);
    b.task("add", {x, projected, x});
  }
  b.task("rmsnorm", {x, view(weights, layout.rms_final, 1, dim), xb, imm(dim), eps});
  linear(xb, layout.classifier, dim, vocab, logits);
  return b;
}

}  // namespace llama
