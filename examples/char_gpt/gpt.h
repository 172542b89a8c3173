// A GPT for characters: nanoGPT's model written against Colony's nn. Token and position
// embeddings, n_layer pre-norm blocks (causal self-attention through the fused
// F::scaled_dot_product_attention, then a GELU MLP), a final LayerNorm and a head tied to the token
// embedding. Modules are named as nanoGPT names them (its embeddings, blocks and final norm in a
// `transformer` dict), so the state dict is the one its model.py loads ("transformer.wte.weight",
// "transformer.h.0.attn.c_attn.weight", ..., "lm_head.weight"); benchmarks/gpt_pytorch.py is the
// same model in PyTorch.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "colony.h"

namespace char_gpt {

using namespace colony;

struct GPTConfig {
  int64_t vocab_size = 65;
  int64_t block_size = 64;  // the longest context the position embedding covers
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 128;
  double dropout = 0.0;
  bool bias = true;  // biases in the Linear layers and LayerNorms, as GPT-2
};

// Multi-head causal self-attention with the three projections in one Linear (c_attn).
class CausalSelfAttention : public nn::Module {
 public:
  explicit CausalSelfAttention(const GPTConfig& c) : n_head_(c.n_head), dropout_(c.dropout) {
    if (c.n_embd % c.n_head != 0)
      throw std::invalid_argument("GPTConfig: n_embd " + std::to_string(c.n_embd) +
                                  " must be a multiple of n_head " + std::to_string(c.n_head));
    c_attn = register_module("c_attn", std::make_shared<nn::Linear>(nn::LinearOptions(c.n_embd, 3 * c.n_embd).bias(c.bias)));
    c_proj = register_module("c_proj", std::make_shared<nn::Linear>(nn::LinearOptions(c.n_embd, c.n_embd).bias(c.bias)));
    resid_dropout = register_module("resid_dropout", std::make_shared<nn::Dropout>(c.dropout));
  }

  Tensor forward(const Tensor& x) override {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2), hs = C / n_head_;
    std::vector<Tensor> qkv = c_attn->forward(x).split(C, 2);
    // [B, T, C] -> [B, n_head, T, head size]: heads become a batch dimension of the attention.
    auto heads = [&](const Tensor& t) { return t.view({B, T, n_head_, hs}).transpose(1, 2); };
    Tensor y = F::scaled_dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), Tensor(),
                                               is_training() ? dropout_ : 0.0, /*is_causal=*/true);
    y = y.transpose(1, 2).contiguous().view({B, T, C});
    return resid_dropout->forward(c_proj->forward(y));
  }

  std::shared_ptr<nn::Linear> c_attn, c_proj;
  std::shared_ptr<nn::Dropout> resid_dropout;

 private:
  int64_t n_head_;
  double dropout_;
};

class MLP : public nn::Module {
 public:
  explicit MLP(const GPTConfig& c) {
    c_fc = register_module("c_fc", std::make_shared<nn::Linear>(nn::LinearOptions(c.n_embd, 4 * c.n_embd).bias(c.bias)));
    c_proj = register_module("c_proj", std::make_shared<nn::Linear>(nn::LinearOptions(4 * c.n_embd, c.n_embd).bias(c.bias)));
    dropout = register_module("dropout", std::make_shared<nn::Dropout>(c.dropout));
  }
  Tensor forward(const Tensor& x) override { return dropout->forward(c_proj->forward(F::gelu(c_fc->forward(x)))); }

  std::shared_ptr<nn::Linear> c_fc, c_proj;
  std::shared_ptr<nn::Dropout> dropout;
};

// Pre-norm: each sub-layer reads a normalised copy and adds its result to the residual stream.
class Block : public nn::Module {
 public:
  explicit Block(const GPTConfig& c) {
    ln_1 = register_module("ln_1", std::make_shared<nn::LayerNorm>(nn::LayerNormOptions({c.n_embd}).bias(c.bias)));
    attn = register_module("attn", std::make_shared<CausalSelfAttention>(c));
    ln_2 = register_module("ln_2", std::make_shared<nn::LayerNorm>(nn::LayerNormOptions({c.n_embd}).bias(c.bias)));
    mlp = register_module("mlp", std::make_shared<MLP>(c));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = x + attn->forward(ln_1->forward(x));
    return h + mlp->forward(ln_2->forward(h));
  }

  std::shared_ptr<nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<CausalSelfAttention> attn;
  std::shared_ptr<MLP> mlp;
};

class GPT : public nn::Module {
 public:
  explicit GPT(const GPTConfig& c) : config(c) {
    // nanoGPT's nn.ModuleDict(wte, wpe, drop, h, ln_f); the members are shortcuts into it.
    transformer = register_module("transformer", std::make_shared<nn::ModuleDict>());
    wte = std::make_shared<nn::Embedding>(nn::EmbeddingOptions(c.vocab_size, c.n_embd));
    wpe = std::make_shared<nn::Embedding>(nn::EmbeddingOptions(c.block_size, c.n_embd));
    drop = std::make_shared<nn::Dropout>(c.dropout);
    h = std::make_shared<nn::ModuleList>();
    for (int64_t i = 0; i < c.n_layer; ++i) h->push_back(std::make_shared<Block>(c));
    ln_f = std::make_shared<nn::LayerNorm>(nn::LayerNormOptions({c.n_embd}).bias(c.bias));
    transformer->insert("wte", wte);
    transformer->insert("wpe", wpe);
    transformer->insert("drop", drop);
    transformer->insert("h", h);
    transformer->insert("ln_f", ln_f);
    lm_head = register_module("lm_head", std::make_shared<nn::Linear>(nn::LinearOptions(c.n_embd, c.vocab_size).bias(false)));
    // The head scores a token with the same vector that embeds it (weight tying, as GPT-2): one
    // parameter, updated by both uses; state_dict() lists it under both names, as PyTorch's does.
    lm_head->weight = lm_head->replace_parameter("weight", wte->weight);
    init_weights();
  }

  // GPT-2's initialisation: N(0, 0.02) weights, zero biases, and the projections that write into
  // the residual stream scaled by 1/sqrt(2 * n_layer) so its variance does not grow with depth.
  void init_weights() {
    NoGradGuard no_grad;
    const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config.n_layer));
    for (auto& [name, p] : named_parameters()) {
      const bool is_proj = name.size() >= 13 && name.compare(name.size() - 13, 13, "c_proj.weight") == 0;
      if (p.dim() == 2) nn::init::normal_(p, 0.0, is_proj ? proj_std : 0.02);
      else if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0) nn::init::zeros_(p);
    }
  }

  // idx [B, T] int64 token ids (T <= block_size) -> logits [B, T, vocab_size].
  Tensor forward(const Tensor& idx) override {
    const int64_t T = idx.size(1);
    if (T > config.block_size)
      throw std::invalid_argument("GPT: a sequence of " + std::to_string(T) + " tokens is longer than block_size " +
                                  std::to_string(config.block_size));
    Tensor pos = arange(0, static_cast<double>(T), 1, TensorOptions(kInt64).device(idx.device()));
    Tensor x = drop->forward(wte->forward(idx) + wpe->forward(pos));
    for (size_t i = 0; i < h->size(); ++i) x = h->at<Block>(i).forward(x);
    return lm_head->forward(ln_f->forward(x));
  }

  // Extends idx [1, T0] by max_new_tokens sampled tokens: each from the softmax of the last
  // position's logits / temperature, restricted to the top_k most likely (0: all).
  Tensor generate(Tensor idx, int64_t max_new_tokens, double temperature, int64_t top_k, Generator* gen) {
    NoGradGuard no_grad;
    for (int64_t i = 0; i < max_new_tokens; ++i) {
      const int64_t T = idx.size(1);
      Tensor context = T <= config.block_size ? idx : idx.narrow(1, T - config.block_size, config.block_size);
      Tensor logits = forward(context).select(1, context.size(1) - 1).to(kFloat32) / temperature;
      if (top_k > 0 && top_k < config.vocab_size) {
        Tensor kth = std::get<0>(logits.topk(top_k, -1)).narrow(1, top_k - 1, 1);
        logits = logits.masked_fill(logits < kth, -INFINITY);
      }
      Tensor next = multinomial(softmax(logits, -1), 1, /*replacement=*/false, gen);
      idx = cat({idx, next}, 1);
    }
    return idx;
  }

  GPTConfig config;
  std::shared_ptr<nn::ModuleDict> transformer;
  std::shared_ptr<nn::Embedding> wte, wpe;
  std::shared_ptr<nn::Dropout> drop;
  std::shared_ptr<nn::ModuleList> h;
  std::shared_ptr<nn::LayerNorm> ln_f;
  std::shared_ptr<nn::Linear> lm_head;
};

// The mean cross-entropy of the logits [B, T, V] predicting targets [B, T].
inline Tensor lm_loss(const Tensor& logits, const Tensor& targets) {
  return F::cross_entropy(logits.view({-1, logits.size(-1)}), targets.reshape({-1}));
}

}  // namespace char_gpt
