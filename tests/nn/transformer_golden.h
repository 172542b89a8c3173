// The closed forms tests/nn/transformer_golden.py gives torch's transformer modules and their
// inputs, so that transformer_test.cc and transformer_decoder_test.cc can compare with the
// values it prints: sizes, parameters, sequences, masks and the stacks' final norm.
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include "nn/nn.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"

namespace colony::nn::golden {

// d_model, nhead, dim_feedforward, the source (memory) length, the batch, the target length.
constexpr int64_t D = 8, H = 2, FF = 16, S = 5, N = 2, T = 4;

// m in float64 and eval mode, every entry p of its state dict (in order), element i:
// 0.3 cos(0.37 i + p). Returns m.
template <typename M>
std::shared_ptr<M> fill_closed_form(std::shared_ptr<M> m) {
  m->to(kFloat64);
  NoGradGuard no_grad;
  int p = 0;
  for (auto& [name, t] : m->state_dict()) {
    std::vector<double> v(t.numel());
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.3 * std::cos(0.37 * static_cast<double>(i) + p);
    t.copy_(raw::from_vector(v, t.sizes()));
    ++p;
  }
  m->eval();
  return m;
}

// The encoder's input and the decoder's memory, [S, N, D]: sin(0.1 i + 0.3).
inline Tensor src() {
  std::vector<double> v(S * N * D);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.1 * static_cast<double>(i) + 0.3);
  return raw::from_vector(v, {S, N, D});
}

// The decoder's input, [T, N, D]: cos(0.17 i - 0.2).
inline Tensor tgt() {
  std::vector<double> v(T * N * D);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::cos(0.17 * static_cast<double>(i) - 0.2);
  return raw::from_vector(v, {T, N, D});
}

// The key padding mask of src and memory, [N, S]: the last position of the first sequence and the
// second position of the second ignored.
inline Tensor src_padding() {
  return raw::to(raw::from_vector(std::vector<double>{0, 0, 0, 0, 1, 0, 1, 0, 0, 0}, {N, S}), kCPU, kBool);
}

// The target's key padding mask, [N, T]: the last position of the first sequence ignored.
inline Tensor tgt_padding() {
  return raw::to(raw::from_vector(std::vector<double>{0, 0, 0, 1, 0, 0, 0, 0}, {N, T}), kCPU, kBool);
}

// An additive [T, S] memory mask: -0.3 |i - j| (no -inf, so every position counts).
inline Tensor memory_mask() {
  std::vector<double> v(T * S);
  for (int64_t i = 0; i < T; ++i) {
    for (int64_t j = 0; j < S; ++j) v[i * S + j] = -0.3 * std::abs(static_cast<double>(i - j));
  }
  return raw::from_vector(v, {T, S});
}

// The stacks' final norm: weight 1 + 0.1 sin(i), bias 0.05 cos(i), float64.
inline std::shared_ptr<LayerNorm> final_norm() {
  auto norm = std::make_shared<LayerNorm>(LayerNormOptions({D}));
  norm->to(kFloat64);
  std::vector<double> w(D), b(D);
  for (int64_t i = 0; i < D; ++i) {
    w[i] = 1 + 0.1 * std::sin(static_cast<double>(i));
    b[i] = 0.05 * std::cos(static_cast<double>(i));
  }
  NoGradGuard no_grad;
  norm->weight.copy_(raw::from_vector(w, {D}));
  norm->bias.copy_(raw::from_vector(b, {D}));
  return norm;
}

}  // namespace colony::nn::golden
