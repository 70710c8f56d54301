#include "decoder_step.h"

#include <utility>

namespace llama {

namespace {

rrt_tensor_desc_t tensor(rrt_dtype_t dtype, std::uint64_t elements, rrt_direction_t direction) {
  rrt_tensor_desc_t desc{};
  desc.dtype = dtype;
  desc.ndim = 1;
  desc.shape[0] = elements;
  desc.direction = direction;
  desc.space = RRT_PARAM_SPACE_DEVICE;
  return desc;
}

rrt_operand_t immediate(std::uint64_t value) {
  return rrt_operand_t{RRT_OPERAND_IMMEDIATE, static_cast<std::uint32_t>(value)};
}

rrt_operand_t immediate_f32(float value) {
  return immediate(rrt_scalar_from_f32(value));
}

}  // namespace

DecoderStep::DecoderStep(rrt_context_t ctx, const Config &config, const WeightLayout &layout) {
  const auto lookup = [&](const char *name, std::int32_t *id) {
    ok_ = ok_ && rrt_kernel_lookup(ctx, name, id) == RRT_OK;
    kernel_names_.emplace_back(*id, name);
  };
  lookup("embedding", &kernels_.embedding);
  lookup("rmsnorm", &kernels_.rmsnorm);
  lookup("linear", &kernels_.linear);
  lookup("rope", &kernels_.rope);
  lookup("kv_store", &kernels_.kv_store);
  lookup("attention", &kernels_.attention);
  lookup("add", &kernels_.add);
  lookup("mul", &kernels_.mul);
  lookup("silu", &kernels_.silu);
  if (!ok_) {
    return;
  }

  const std::uint64_t dim = config.dim;
  const std::uint64_t kv_dim = config.kv_dim();
  const std::uint64_t hidden = config.hidden_dim;
  const std::uint64_t seq = config.seq_len;
  const std::uint64_t layers = config.n_layers;
  kv_cache_elements_ = 2 * layers * seq * kv_dim;

  params_ = {tensor(RRT_DTYPE_F32, layout.total, RRT_DIR_IN),
             tensor(RRT_DTYPE_F32, kv_cache_elements_, RRT_DIR_INOUT),
             tensor(RRT_DTYPE_I32, 2, RRT_DIR_IN),
             tensor(RRT_DTYPE_F32, config.vocab_size, RRT_DIR_OUT)};

  const std::uint32_t x = intermediate(dim);
  const std::uint32_t xb = intermediate(dim);
  const std::uint32_t q = intermediate(dim);
  const std::uint32_t k = intermediate(kv_dim);
  const std::uint32_t v = intermediate(kv_dim);
  const std::uint32_t attended = intermediate(dim);
  const std::uint32_t projected = intermediate(dim);
  const std::uint32_t h1 = intermediate(hidden);
  const std::uint32_t h3 = intermediate(hidden);
  const auto in = [](std::uint32_t index) {
    return rrt_operand_t{RRT_OPERAND_INTERMEDIATE, index};
  };

  const rrt_operand_t token = view(kState, 0, 1, 1);
  const rrt_operand_t pos = view(kState, 1, 1, 1);
  const rrt_operand_t eps = immediate_f32(kRmsEpsilon);
  const rrt_operand_t one = immediate(1);
  const rrt_operand_t f32 = immediate(RRT_DTYPE_F32);

  task(kernels_.embedding, {view(kWeights, layout.embedding, config.vocab_size, dim), token, in(x),
                            immediate(config.vocab_size), immediate(dim), one, f32});
  for (std::uint64_t l = 0; l < layers; ++l) {
    const rrt_operand_t keys = view(kKvCache, l * seq * kv_dim, seq, kv_dim);
    const rrt_operand_t values = view(kKvCache, (layers + l) * seq * kv_dim, seq, kv_dim);
    const auto linear = [&](rrt_operand_t input, std::uint64_t weight, std::uint64_t in_size,
                            std::uint64_t out_size, rrt_operand_t output) {
      task(kernels_.linear, {input, view(kWeights, weight, out_size, in_size), output, one,
                             immediate(in_size), immediate(out_size), f32});
    };
    task(kernels_.rmsnorm,
         {in(x), view(kWeights, layout.rms_att + l * dim, 1, dim), in(xb), immediate(dim), eps});
    linear(in(xb), layout.wq + l * dim * dim, dim, dim, in(q));
    linear(in(xb), layout.wk + l * kv_dim * dim, dim, kv_dim, in(k));
    linear(in(xb), layout.wv + l * kv_dim * dim, dim, kv_dim, in(v));
    task(kernels_.rope, {pos, in(q), one, immediate(config.n_heads), immediate(config.head_dim()),
                         immediate_f32(kRopeTheta)});
    task(kernels_.rope, {pos, in(k), one, immediate(config.n_kv_heads),
                         immediate(config.head_dim()), immediate_f32(kRopeTheta)});
    task(kernels_.kv_store, {in(k), pos, keys, one, immediate(kv_dim), immediate(seq)});
    task(kernels_.kv_store, {in(v), pos, values, one, immediate(kv_dim), immediate(seq)});
    task(kernels_.attention,
         {in(q), keys, values, pos, in(attended), one, immediate(config.n_heads),
          immediate(config.n_kv_heads), immediate(config.head_dim()), immediate(seq)});
    linear(in(attended), layout.wo + l * dim * dim, dim, dim, in(projected));
    task(kernels_.add, {in(x), in(projected), in(x)});
    task(kernels_.rmsnorm,
         {in(x), view(kWeights, layout.rms_ffn + l * dim, 1, dim), in(xb), immediate(dim), eps});
    linear(in(xb), layout.w1 + l * hidden * dim, dim, hidden, in(h1));
    linear(in(xb), layout.w3 + l * hidden * dim, dim, hidden, in(h3));
    task(kernels_.silu, {in(h1), in(h1)});
    task(kernels_.mul, {in(h1), in(h3), in(h1)});
    linear(in(h1), layout.w2 + l * dim * hidden, hidden, dim, in(projected));
    task(kernels_.add, {in(x), in(projected), in(x)});
  }
  task(kernels_.rmsnorm,
       {in(x), view(kWeights, layout.rms_final, 1, dim), in(xb), immediate(dim), eps});
  task(kernels_.linear, {in(xb), view(kWeights, layout.classifier, config.vocab_size, dim),
                         rrt_operand_t{RRT_OPERAND_PARAM, kLogits}, one, immediate(dim),
                         immediate(config.vocab_size), f32});

  for (std::size_t t = 0; t < operands_.size(); ++t) {
    tasks_[t].operands = operands_[t].data();
  }
  desc_.struct_size = sizeof desc_;
  desc_.bind = RRT_BIND_DEVICE_BUILD;
  desc_.num_params = static_cast<std::uint32_t>(params_.size());
  desc_.params = params_.data();
  desc_.num_intermediates = static_cast<std::uint32_t>(intermediates_.size());
  desc_.intermediates = intermediates_.data();
  desc_.num_tasks = static_cast<std::uint32_t>(tasks_.size());
  desc_.tasks = tasks_.data();
  desc_.num_views = static_cast<std::uint32_t>(views_.size());
  desc_.views = views_.data();
}

std::uint32_t DecoderStep::intermediate(std::uint64_t elements) {
  rrt_tensor_desc_t desc{};
  desc.dtype = RRT_DTYPE_F32;
  desc.ndim = 1;
  desc.shape[0] = elements;
  intermediates_.push_back(desc);
  return static_cast<std::uint32_t>(intermediates_.size() - 1);
}

rrt_operand_t DecoderStep::view(StepParam base, std::uint64_t offset, std::uint64_t rows,
                                std::uint64_t cols) {
  rrt_view_desc_t desc{};
  desc.base_kind = RRT_OPERAND_PARAM;
  desc.base_index = base;
  desc.ndim = 2;
  desc.shape[0] = rows;
  desc.shape[1] = cols;
  desc.offset = offset;
  desc.offset_value = -1;
  views_.push_back(desc);
  return rrt_operand_t{RRT_OPERAND_VIEW, static_cast<std::uint32_t>(views_.size() - 1)};
}

void DecoderStep::task(std::int32_t kernel, std::vector<rrt_operand_t> operands) {
  tasks_.push_back(rrt_task_desc_t{kernel, static_cast<std::uint32_t>(operands.size()), nullptr});
  for (const auto &[id, name] : kernel_names_) {
    if (id == kernel) {
      task_kernels_.emplace_back(name);
    }
  }
  operands_.push_back(std::move(operands));
}

}  // namespace llama
