// A llama-style decoder model in host memory: its configuration, its weights (random from a
// fixed seed, or read from a llama2.c checkpoint file) and a plain C++ reference of one
// decode step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llama {

// The llama2.c checkpoint header, in its order: seven int32 values.
struct Config {
  std::uint32_t dim = 64;          // model width
  std::uint32_t hidden_dim = 176;  // feed-forward width
  std::uint32_t n_layers = 4;
  std::uint32_t n_heads = 4;
  std::uint32_t n_kv_heads = 2;  // grouped-query attention: n_heads % n_kv_heads == 0
  std::uint32_t vocab_size = 512;
  std::uint32_t seq_len = 128;  // the KV cache holds this many positions

  std::uint32_t head_dim() const { return dim / n_heads; }
  std::uint32_t kv_dim() const { return n_kv_heads * head_dim(); }
};

// Element offsets of every weight inside one float array, in the llama2.c file order. Linear
// weights are [out, in] row-major, as checkpoints store them.
struct WeightLayout {
  WeightLayout(const Config &config, bool shared_classifier);

  std::uint64_t embedding = 0;   // [vocab, dim]
  std::uint64_t rms_att = 0;     // [layers, dim]
  std::uint64_t wq = 0;          // [layers, dim, dim]
  std::uint64_t wk = 0;          // [layers, kv_dim, dim]
  std::uint64_t wv = 0;          // [layers, kv_dim, dim]
  std::uint64_t wo = 0;          // [layers, dim, dim]
  std::uint64_t rms_ffn = 0;     // [layers, dim]
  std::uint64_t w1 = 0;          // [layers, hidden, dim]
  std::uint64_t w2 = 0;          // [layers, dim, hidden]
  std::uint64_t w3 = 0;          // [layers, hidden, dim]
  std::uint64_t rms_final = 0;   // [dim]
  std::uint64_t classifier = 0;  // [vocab, dim]; equals `embedding` when shared, else last
  std::uint64_t total = 0;       // elements in all
};

struct Model {
  Config config;
  bool shared_classifier = true;  // the classifier is the embedding table
  std::vector<float> weights;     // laid out as layout()

  WeightLayout layout() const { return {config, shared_classifier}; }
};

// Weights drawn uniformly from [-scale, scale] by a fixed linear congruential sequence (norm
// weights near 1), so every run of the example sees the same model.
Model make_random_model(const Config &config, bool shared_classifier, std::uint32_t seed);

// Reads a llama2.c checkpoint (float32 weights; a negative vocab size means an unshared
// classifier; the RoPE tables are skipped: the rope kernel computes them). Returns false and
// fills *error when the file is missing, truncated or not such a checkpoint.
bool load_checkpoint(const std::string &path, Model *model, std::string *error);

// Writes `model` as a llama2.c checkpoint (with RoPE tables, as the format has them), so
// load_checkpoint reads it back. Returns false and fills *error when the file cannot be written.
bool save_checkpoint(const std::string &path, const Model &model, std::string *error);

inline constexpr float kRmsEpsilon = 1e-5F;
inline constexpr float kRopeTheta = 10000.0F;

// The reference decoder: float arithmetic, one token at a time, with its own KV cache.
class ReferenceDecoder {
 public:
  explicit ReferenceDecoder(const Model &model);
  // The logits of `token` at position `pos` (positions are fed in order from 0).
  std::vector<float> step(std::uint32_t token, std::uint32_t pos);

 private:
  const Model &model_;
  WeightLayout layout_;
  std::vector<float> key_cache_;    // [layers, seq_len, kv_dim]
  std::vector<float> value_cache_;  // [layers, seq_len, kv_dim]
};

// The index of the largest value (the first on ties).
std::uint32_t argmax(const std::vector<float> &values);

}  // namespace llama
