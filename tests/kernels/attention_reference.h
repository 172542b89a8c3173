// Attention's kernel tests' shared parts (attention_test.cc under bfloat16, attention_head_test.cc
// in float32): the problem, its random inputs in the kernels' dtype, the kernel arguments with
// their strides, and attention with its lse and gradients written out in float64 from the same
// inputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/attention.h"

namespace colony::kernels::testing {

struct AttentionProblem {
  int64_t batch, heads, L, S, E, Ev;
  bool causal = false, mask = false;
  int64_t q_pad = 0;             // extra elements per row of q (a strided view)
  bool mask_by_columns = false;  // the mask stored transposed (column stride L): gathered per row
  int64_t out_pad = 0;           // extra elements per row of out and dO
  int64_t grad_pad = 0;          // extra elements per row of dq, dk and dv
  std::string name() const {
    return "L=" + std::to_string(L) + " S=" + std::to_string(S) + " E=" + std::to_string(E) +
           " Ev=" + std::to_string(Ev) + (causal ? " causal" : "") + (mask ? " masked" : "") +
           (q_pad ? " strided q" : "") + (mask_by_columns ? " (by columns)" : "") + (out_pad ? " strided out" : "") +
           (grad_pad ? " strided gradients" : "");
  }
};

// q, k, v, dO in T (uniform, rounded to T), and an additive float32 mask [L, S] shared by every
// (b, h): a quarter of it -inf, and row 1 wholly (a fully masked row).
template <typename T>
struct AttentionInputs {
  std::vector<T> q, k, v, go;
  std::vector<float> mask;
  int64_t q_row, o_row;
};

template <typename T>
std::vector<T> random_values(size_t n, uint32_t seed, float range) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-range, range);
  std::vector<T> v(n);
  for (T& x : v) x = T(u(gen));
  return v;
}

template <typename T>
AttentionInputs<T> make_attention_inputs(const AttentionProblem& p) {
  AttentionInputs<T> in;
  const int64_t bh = p.batch * p.heads;
  in.q_row = p.E + p.q_pad;
  in.o_row = p.Ev + p.out_pad;
  in.q = random_values<T>(bh * p.L * in.q_row, 1, 2.0f);
  in.k = random_values<T>(bh * p.S * p.E, 2, 2.0f);
  in.v = random_values<T>(bh * p.S * p.Ev, 3, 2.0f);
  in.go = random_values<T>(bh * p.L * in.o_row, 4, 1.0f);
  if (p.mask) {
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    in.mask.resize(p.L * p.S);
    for (float& m : in.mask) m = u(gen) < 0.25f ? -std::numeric_limits<float>::infinity() : 2.0f * u(gen) - 1.0f;
    if (p.L > 1) std::fill(in.mask.begin() + p.S, in.mask.begin() + 2 * p.S, -std::numeric_limits<float>::infinity());
  }
  return in;
}

// The arguments of AttentionForward/Backward for the inputs, outputs and gradients contiguous but
// for q's and out's (and dO's) padded rows; a mask by columns is transposed into mask_t. The
// caller sets out, lse, grad_out, dq, dk, dv.
// The problem's dtype and sizes (AttentionArgs' first members, in order).
inline AttentionArgs attention_shape(const AttentionProblem& p, DType dtype) {
  return AttentionArgs{dtype, p.batch, p.heads, p.L, p.S, p.E, p.Ev};
}

template <typename T>
AttentionArgs attention_args(const AttentionProblem& p, const AttentionInputs<T>& in, DType dtype,
                             std::vector<float>& mask_t) {
  AttentionArgs a = attention_shape(p, dtype);
  a.q = in.q.data();
  a.k = in.k.data();
  a.v = in.v.data();
  a.qs = {p.heads * p.L * in.q_row, p.L * in.q_row, in.q_row, 1};
  a.ks = {p.heads * p.S * p.E, p.S * p.E, p.E, 1};
  a.vs = {p.heads * p.S * p.Ev, p.S * p.Ev, p.Ev, 1};
  if (p.mask && p.mask_by_columns) {
    mask_t.resize(p.L * p.S);
    for (int64_t i = 0; i < p.L; ++i)
      for (int64_t j = 0; j < p.S; ++j) mask_t[j * p.L + i] = in.mask[i * p.S + j];
    a.mask = mask_t.data();
    a.ms = {0, 0, 1, p.L};
  } else if (p.mask) {
    a.mask = in.mask.data();
    a.ms = {0, 0, p.S, 1};
  }
  a.causal = p.causal;
  a.scale = 1.0 / std::sqrt(static_cast<double>(p.E));
  a.os = a.gs = {p.heads * p.L * in.o_row, p.L * in.o_row, in.o_row, 1};
  const int64_t dq_row = p.E + p.grad_pad, dv_row = p.Ev + p.grad_pad;
  a.dqs = {p.heads * p.L * dq_row, p.L * dq_row, dq_row, 1};
  a.dks = {p.heads * p.S * dq_row, p.S * dq_row, dq_row, 1};
  a.dvs = {p.heads * p.S * dv_row, p.S * dv_row, dv_row, 1};
  return a;
}

// out [bh, L, Ev] (without out's padding), lse [bh, L], dq, dk, dv, as doubles.
struct AttentionOutputs {
  std::vector<double> out, lse, dq, dk, dv;
};

// Softmax attention, its lse and its gradients in float64 from the same inputs.
template <typename T>
AttentionOutputs attention_reference(const AttentionProblem& p, const AttentionInputs<T>& in) {
  const int64_t bh = p.batch * p.heads, L = p.L, S = p.S, E = p.E, Ev = p.Ev;
  const double scale = 1.0 / std::sqrt(static_cast<double>(E)), inf = std::numeric_limits<double>::infinity();
  auto at = [](T x) { return static_cast<double>(static_cast<float>(x)); };
  AttentionOutputs r{std::vector<double>(bh * L * Ev), std::vector<double>(bh * L), std::vector<double>(bh * L * E),
                     std::vector<double>(bh * S * E), std::vector<double>(bh * S * Ev)};
  std::vector<double> w(S), dp(S);
  for (int64_t b = 0; b < bh; ++b) {
    const T* Q = in.q.data() + b * L * in.q_row;
    const T* K = in.k.data() + b * S * E;
    const T* V = in.v.data() + b * S * Ev;
    const T* G = in.go.data() + b * L * in.o_row;
    for (int64_t i = 0; i < L; ++i) {
      double mx = -inf;
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < E; ++e) acc += at(Q[i * in.q_row + e]) * at(K[j * E + e]);
        w[j] = acc * scale + (p.mask ? in.mask[i * S + j] : 0.0);
        if (p.causal && j > i) w[j] = -inf;
        mx = std::max(mx, w[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) sum += w[j] = std::isinf(mx) ? 0.0 : std::exp(w[j] - mx);
      r.lse[b * L + i] = sum > 0 ? mx + std::log(sum) : -inf;
      for (int64_t j = 0; j < S; ++j) w[j] = sum > 0 ? w[j] / sum : 0.0;
      double dsum = 0;
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < Ev; ++e) {
          const double g = at(G[i * in.o_row + e]), v = at(V[j * Ev + e]);
          r.out[(b * L + i) * Ev + e] += w[j] * v;
          r.dv[(b * S + j) * Ev + e] += w[j] * g;
          acc += g * v;
        }
        dp[j] = acc;
        dsum += w[j] * acc;
      }
      for (int64_t j = 0; j < S; ++j) {
        const double ds = w[j] * (dp[j] - dsum) * scale;
        for (int64_t e = 0; e < E; ++e) {
          r.dq[(b * L + i) * E + e] += ds * at(K[j * E + e]);
          r.dk[(b * S + j) * E + e] += ds * at(Q[i * in.q_row + e]);
        }
      }
    }
  }
  return r;
}

// The largest error relative to the largest reference magnitude; infinities (lse's -inf) must
// match exactly.
inline double relative_error(const std::vector<double>& x, const std::vector<double>& ref) {
  double err = 0, mag = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isinf(ref[i]) || std::isinf(x[i])) {
      if (x[i] != ref[i]) return std::numeric_limits<double>::infinity();
      continue;
    }
    err = std::max(err, std::abs(x[i] - ref[i]));
    mag = std::max(mag, std::abs(ref[i]));
  }
  return err / std::max(mag, 1e-30);
}

}  // namespace colony::kernels::testing
