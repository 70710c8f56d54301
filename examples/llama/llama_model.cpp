#include "llama_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

namespace llama {

WeightLayout::WeightLayout(const Config &config, bool shared_classifier) {
  const std::uint64_t dim = config.dim;
  const std::uint64_t kv_dim = config.kv_dim();
  const std::uint64_t hidden = config.hidden_dim;
  const std::uint64_t layers = config.n_layers;
  std::uint64_t next = 0;
  const auto take = [&next](std::uint64_t elements) {
    const std::uint64_t at = next;
    next += elements;
    return at;
  };
  embedding = take(config.vocab_size * dim);
  rms_att = take(layers * dim);
  wq = take(layers * dim * dim);
  wk = take(layers * kv_dim * dim);
  wv = take(layers * kv_dim * dim);
  wo = take(layers * dim * dim);
  rms_ffn = take(layers * dim);
  w1 = take(layers * hidden * dim);
  w2 = take(layers * dim * hidden);
  w3 = take(layers * hidden * dim);
  rms_final = take(dim);
  classifier = shared_classifier ? embedding : take(config.vocab_size * dim);
  total = next;
}

namespace {

// A 32-bit linear congruential generator (Numerical Recipes constants).
class Lcg {
 public:
  explicit Lcg(std::uint32_t seed) : state_(seed) {}
  // Uniform in [-1, 1].
  float next() {
    state_ = state_ * 1664525U + 1013904223U;
    return static_cast<float>(state_ >> 8) / static_cast<float>(1U << 23) - 1.0F;
  }

 private:
  std::uint32_t state_;
};

void fill_uniform(std::vector<float> &weights, std::uint64_t first, std::uint64_t count,
                  float scale, float centre, Lcg &lcg) {
  for (std::uint64_t i = 0; i < count; ++i) {
    weights[first + i] = centre + scale * lcg.next();
  }
}

void rmsnorm(float *out, const float *in, const float *weight, std::size_t size) {
  double sum = 0.0;
  for (std::size_t i = 0; i < size; ++i) {
    sum += static_cast<double>(in[i]) * in[i];
  }
  const auto inverse = static_cast<float>(
      1.0 / std::sqrt(sum / static_cast<double>(size) + static_cast<double>(kRmsEpsilon)));
  for (std::size_t i = 0; i < size; ++i) {
    out[i] = in[i] * inverse * weight[i];
  }
}

// out[out_size] = w[out_size, in_size] · in
void linear(float *out, const float *in, const float *w, std::size_t in_size,
            std::size_t out_size) {
  for (std::size_t o = 0; o < out_size; ++o) {
    float sum = 0.0F;
    const float *row = w + o * in_size;
    for (std::size_t i = 0; i < in_size; ++i) {
      sum += row[i] * in[i];
    }
    out[o] = sum;
  }
}

void rope(float *x, std::size_t heads, std::size_t head_dim, std::uint32_t pos) {
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t i = 0; i < head_dim / 2; ++i) {
      const float frequency =
          std::pow(kRopeTheta, -2.0F * static_cast<float>(i) / static_cast<float>(head_dim));
      const float angle = static_cast<float>(pos) * frequency;
      const float c = std::cos(angle);
      const float s = std::sin(angle);
      float *pair = x + h * head_dim + 2 * i;
      const float a = pair[0];
      const float b = pair[1];
      pair[0] = a * c - b * s;
      pair[1] = a * s + b * c;
    }
  }
}

}  // namespace

Model make_random_model(const Config &config, bool shared_classifier, std::uint32_t seed) {
  Model model;
  model.config = config;
  model.shared_classifier = shared_classifier;
  const WeightLayout layout = model.layout();
  model.weights.assign(layout.total, 0.0F);
  Lcg lcg(seed);
  const float scale = 1.0F / std::sqrt(static_cast<float>(config.dim));
  fill_uniform(model.weights, 0, layout.total, scale, 0.0F, lcg);
  const std::uint64_t dim = config.dim;
  fill_uniform(model.weights, layout.rms_att, config.n_layers * dim, 0.1F, 1.0F, lcg);
  fill_uniform(model.weights, layout.rms_ffn, config.n_layers * dim, 0.1F, 1.0F, lcg);
  fill_uniform(model.weights, layout.rms_final, dim, 0.1F, 1.0F, lcg);
  return model;
}

bool load_checkpoint(const std::string &path, Model *model, std::string *error) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(std::fopen(path.c_str(), "rb"),
                                                              &std::fclose);
  if (file == nullptr) {
    *error = "cannot open " + path;
    return false;
  }
  std::int32_t header[7];
  if (std::fread(header, sizeof header, 1, file.get()) != 1) {
    *error = path + ": no llama2.c header";
    return false;
  }
  const bool shared_classifier = header[5] > 0;
  for (std::int32_t &value : header) {
    value = value < 0 ? -value : value;
  }
  Config config;
  config.dim = static_cast<std::uint32_t>(header[0]);
  config.hidden_dim = static_cast<std::uint32_t>(header[1]);
  config.n_layers = static_cast<std::uint32_t>(header[2]);
  config.n_heads = static_cast<std::uint32_t>(header[3]);
  config.n_kv_heads = static_cast<std::uint32_t>(header[4]);
  config.vocab_size = static_cast<std::uint32_t>(header[5]);
  config.seq_len = static_cast<std::uint32_t>(header[6]);
  if (config.dim == 0 || config.n_heads == 0 || config.n_kv_heads == 0 ||
      config.dim % config.n_heads != 0 || config.n_heads % config.n_kv_heads != 0 ||
      config.head_dim() % 2 != 0 || config.vocab_size == 0 || config.seq_len == 0 ||
      config.n_layers == 0 || config.hidden_dim == 0) {
    *error = path + ": the header does not describe a llama2.c model";
    return false;
  }
  const WeightLayout layout(config, shared_classifier);
  // The file holds the RoPE tables (real and imaginary halves) between the final norm and an
  // unshared classifier; the rope kernel computes them, so they are read and dropped.
  const std::uint64_t before_tables = layout.rms_final + config.dim;
  const std::uint64_t rope_tables = static_cast<std::uint64_t>(config.seq_len) * config.head_dim();
  std::vector<float> weights(layout.total + rope_tables);
  if (std::fread(weights.data(), sizeof(float), weights.size(), file.get()) != weights.size()) {
    *error = path + ": the file ends before its weights do";
    return false;
  }
  weights.erase(weights.begin() + static_cast<std::ptrdiff_t>(before_tables),
                weights.begin() + static_cast<std::ptrdiff_t>(before_tables + rope_tables));
  model->config = config;
  model->shared_classifier = shared_classifier;
  model->weights = std::move(weights);
  return true;
}

bool save_checkpoint(const std::string &path, const Model &model, std::string *error) {
  const Config &c = model.config;
  const std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(std::fopen(path.c_str(), "wb"),
                                                              &std::fclose);
  if (file == nullptr) {
    *error = "cannot create " + path;
    return false;
  }
  const auto vocab = static_cast<std::int32_t>(c.vocab_size);
  const std::int32_t header[7] = {
      static_cast<std::int32_t>(c.dim),        static_cast<std::int32_t>(c.hidden_dim),
      static_cast<std::int32_t>(c.n_layers),   static_cast<std::int32_t>(c.n_heads),
      static_cast<std::int32_t>(c.n_kv_heads), model.shared_classifier ? vocab : -vocab,
      static_cast<std::int32_t>(c.seq_len)};
  const WeightLayout layout = model.layout();
  const std::size_t before_tables = layout.rms_final + c.dim;
  std::vector<float> tables(static_cast<std::size_t>(c.seq_len) * c.head_dim());
  for (std::size_t pos = 0; pos < c.seq_len; ++pos) {
    for (std::size_t i = 0; i < c.head_dim() / 2; ++i) {
      const float angle =
          static_cast<float>(pos) *
          std::pow(kRopeTheta, -2.0F * static_cast<float>(i) / static_cast<float>(c.head_dim()));
      tables[pos * (c.head_dim() / 2) + i] = std::cos(angle);
      tables[tables.size() / 2 + pos * (c.head_dim() / 2) + i] = std::sin(angle);
    }
  }
  const bool written =
      std::fwrite(header, sizeof header, 1, file.get()) == 1 &&
      std::fwrite(model.weights.data(), sizeof(float), before_tables, file.get()) ==
          before_tables &&
      std::fwrite(tables.data(), sizeof(float), tables.size(), file.get()) == tables.size() &&
      std::fwrite(model.weights.data() + before_tables, sizeof(float),
                  model.weights.size() - before_tables,
                  file.get()) == model.weights.size() - before_tables;
  if (!written) {
    *error = "cannot write " + path;
  }
  return written;
}

ReferenceDecoder::ReferenceDecoder(const Model &model)
    : model_(model),
      layout_(model.layout()),
      key_cache_(static_cast<std::size_t>(model.config.n_layers) * model.config.seq_len *
                 model.config.kv_dim()),
      value_cache_(key_cache_.size()) {}

std::vector<float> ReferenceDecoder::step(std::uint32_t token, std::uint32_t pos) {
  const Config &c = model_.config;
  const float *w = model_.weights.data();
  const std::size_t dim = c.dim;
  const std::size_t kv_dim = c.kv_dim();
  const std::size_t head_dim = c.head_dim();
  const std::size_t seq_len = c.seq_len;
  std::vector<float> x(w + layout_.embedding + token * dim,
                       w + layout_.embedding + (token + std::size_t{1}) * dim);
  std::vector<float> xb(dim), q(dim), attended(dim), projected(dim);
  std::vector<float> h1(c.hidden_dim), h3(c.hidden_dim), scores(seq_len);
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    const std::uint64_t cache_row = (l * seq_len + pos) * kv_dim;
    float *k = key_cache_.data() + cache_row;
    float *v = value_cache_.data() + cache_row;
    rmsnorm(xb.data(), x.data(), w + layout_.rms_att + l * dim, dim);
    linear(q.data(), xb.data(), w + layout_.wq + l * dim * dim, dim, dim);
    linear(k, xb.data(), w + layout_.wk + l * kv_dim * dim, dim, kv_dim);
    linear(v, xb.data(), w + layout_.wv + l * kv_dim * dim, dim, kv_dim);
    rope(q.data(), c.n_heads, head_dim, pos);
    rope(k, c.n_kv_heads, head_dim, pos);
    const std::size_t group = c.n_heads / c.n_kv_heads;
    for (std::size_t h = 0; h < c.n_heads; ++h) {
      const float *qh = q.data() + h * head_dim;
      const std::size_t kv_head = h / group;
      const float scale = 1.0F / std::sqrt(static_cast<float>(head_dim));
      float max_score = -INFINITY;
      for (std::size_t t = 0; t <= pos; ++t) {
        const float *kt = key_cache_.data() + (l * seq_len + t) * kv_dim + kv_head * head_dim;
        float dot = 0.0F;
        for (std::size_t i = 0; i < head_dim; ++i) {
          dot += qh[i] * kt[i];
        }
        scores[t] = dot * scale;
        max_score = std::max(max_score, scores[t]);
      }
      float sum = 0.0F;
      for (std::size_t t = 0; t <= pos; ++t) {
        scores[t] = std::exp(scores[t] - max_score);
        sum += scores[t];
      }
      float *out = attended.data() + h * head_dim;
      std::fill(out, out + head_dim, 0.0F);
      for (std::size_t t = 0; t <= pos; ++t) {
        const float *vt = value_cache_.data() + (l * seq_len + t) * kv_dim + kv_head * head_dim;
        const float weight = scores[t] / sum;
        for (std::size_t i = 0; i < head_dim; ++i) {
          out[i] += weight * vt[i];
        }
      }
    }
    linear(projected.data(), attended.data(), w + layout_.wo + l * dim * dim, dim, dim);
    for (std::size_t i = 0; i < dim; ++i) {
      x[i] += projected[i];
    }
    rmsnorm(xb.data(), x.data(), w + layout_.rms_ffn + l * dim, dim);
    const std::uint64_t ffn = l * c.hidden_dim * dim;
    linear(h1.data(), xb.data(), w + layout_.w1 + ffn, dim, c.hidden_dim);
    linear(h3.data(), xb.data(), w + layout_.w3 + ffn, dim, c.hidden_dim);
    for (std::size_t i = 0; i < c.hidden_dim; ++i) {
      h1[i] = h1[i] / (1.0F + std::exp(-h1[i])) * h3[i];
    }
    linear(projected.data(), h1.data(), w + layout_.w2 + ffn, c.hidden_dim, dim);
    for (std::size_t i = 0; i < dim; ++i) {
      x[i] += projected[i];
    }
  }
  rmsnorm(xb.data(), x.data(), w + layout_.rms_final, dim);
  std::vector<float> logits(c.vocab_size);
  linear(logits.data(), xb.data(), w + layout_.classifier, dim, c.vocab_size);
  return logits;
}

std::uint32_t argmax(const std::vector<float> &values) {
  std::uint32_t best = 0;
  for (std::uint32_t i = 1; i < values.size(); ++i) {
    if (values[i] > values[best]) {
      best = i;
    }
  }
  return best;
}

}  // namespace llama
