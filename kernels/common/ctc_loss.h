// The connectionist temporal classification loss (F::ctc_loss, Graves et al. 2006): the per-(t, s)
// recurrences of the forward-backward algorithm in log space, written once for the CPU kernel
// (kernels/cpu/ctc_loss.cc, parallel over the batch) and the CUDA kernel (kernels/cuda/ctc_loss.cu,
// one block per sample, its threads over the positions s of one time step), and their entry points.
//
// Sample b has input length T_b and target l (length L_b); the extended target l' has 2 L_b + 1
// positions: blank at even s, l[s / 2] at odd s. With y_t(c) = log_probs[t, b, c]:
//   alpha_0(0) = y_0(blank), alpha_0(1) = y_0(l'_1), alpha_0(s > 1) = -inf
//   alpha_t(s) = logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) if l'_s != l'_{s-2}) + y_t(l'_s)
//   nll = -logsumexp(alpha_{T-1}(2L), alpha_{T-1}(2L-1))   (-alpha_{T-1}(0) for L = 0; 0 or inf for T = 0)
//   beta mirrors alpha from the end (beta_{T-1}(2L) = y(blank), beta_{T-1}(2L-1) = y(l'_{2L-1})), and
//   d nll / d y_t(c) = exp(y_t(c)) - exp(logsumexp_{s: l'_s = c}(alpha_t(s) + beta_t(s)) + nll - y_t(c))
// which is ATen's formula (aten/src/ATen/native/LossCTC.cpp): the gradient with respect to the
// log-probabilities as if they were unnormalized logits (the exp(y) term), exactly what torch
// returns. Each logsumexp is taken as torch takes it (max subtracted, -inf max treated as 0), and
// the per-class sums run over s descending, as torch's loop does, so the values match its kernel.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/macros.h"
#include "kernels/common/scalar_math.h"

namespace colony::kernels {

struct CtcLossParams {
  int64_t max_time = 0;    // T: log_probs [T, N, C]
  int64_t batch = 0;       // N
  int64_t classes = 0;     // C
  int64_t blank = 0;
  int64_t max_target = 0;  // the longest target: log_alpha rows hold 2 * max_target + 1 positions
  bool zero_infinity = false;
  COLONY_HOST_DEVICE int64_t positions() const { return 2 * max_target + 1; }
};

template <typename C>
COLONY_INLINE C ctc_neg_inf() {
  return -static_cast<C>(INFINITY);
}

// l'_s: blank at even s, the target's label s / 2 at odd s (`target` is the sample's first label).
COLONY_INLINE int64_t ctc_extended_label(const int64_t* target, int64_t s, int64_t blank) {
  return s % 2 == 0 ? blank : target[s / 2];
}

// log(exp(a) + exp(b) + exp(c)), as torch computes it: the maximum subtracted, an all -inf triple
// giving -inf (not NaN: the max is taken as 0 then).
template <typename C>
COLONY_INLINE C ctc_log_add3(C a, C b, C c) {
  C m = a;
  if (b > m) m = b;
  if (c > m) m = c;
  if (m == ctc_neg_inf<C>()) m = C(0);
  return math::log(math::exp(a - m) + math::exp(b - m) + math::exp(c - m)) + m;
}

// acc "log+=" v, torch's accumulation of alpha * beta per class: -inf so far takes v as it is.
template <typename C>
COLONY_INLINE C ctc_log_accumulate(C acc, C v) {
  if (acc == ctc_neg_inf<C>()) return v;
  const C m = acc > v ? acc : v;
  return math::log(math::exp(acc - m) + math::exp(v - m)) + m;
}

// alpha_t(s) from the previous step's row `prev` (positions 0 .. 2L), t >= 1; `y` is log_probs[t, b, :].
template <typename C, typename T>
COLONY_INLINE C ctc_alpha_step(const C* prev, int64_t s, const int64_t* target, int64_t blank, const T* y) {
  const int64_t label = ctc_extended_label(target, s, blank);
  const C a1 = prev[s];
  const C a2 = s > 0 ? prev[s - 1] : ctc_neg_inf<C>();
  const C a3 = (s > 1 && ctc_extended_label(target, s - 2, blank) != label) ? prev[s - 2] : ctc_neg_inf<C>();
  return ctc_log_add3(a1, a2, a3) + static_cast<C>(y[label]);
}

// alpha_0(s): the path starts at the leading blank or at the first label.
template <typename C, typename T>
COLONY_INLINE C ctc_alpha_first(int64_t s, const int64_t* target, int64_t blank, const T* y) {
  return s < 2 ? static_cast<C>(y[ctc_extended_label(target, s, blank)]) : ctc_neg_inf<C>();
}

// beta_t(s) from the next step's row `next` (positions 0 .. 2L), t < T - 1.
template <typename C, typename T>
COLONY_INLINE C ctc_beta_step(const C* next, int64_t s, int64_t target_length, const int64_t* target, int64_t blank,
                              const T* y) {
  const int64_t label = ctc_extended_label(target, s, blank);
  const C b1 = next[s];
  const C b2 = s < 2 * target_length ? next[s + 1] : ctc_neg_inf<C>();
  const C b3 = (s < 2 * target_length - 1 && ctc_extended_label(target, s + 2, blank) != label) ? next[s + 2]
                                                                                                  : ctc_neg_inf<C>();
  return ctc_log_add3(b1, b2, b3) + static_cast<C>(y[label]);
}

// beta_{T-1}(s): the path ends at the trailing blank or at the last label.
template <typename C, typename T>
COLONY_INLINE C ctc_beta_last(int64_t s, int64_t target_length, const int64_t* target, int64_t blank, const T* y) {
  // Spelled out as torch's kernel does: written with ctc_extended_label under s >= 2L - 1, GCC 12's
  // value-range propagation (-O2) read the wrong label here.
  if (s == 2 * target_length) return static_cast<C>(y[blank]);
  if (s == 2 * target_length - 1) return static_cast<C>(y[target[target_length - 1]]);
  return ctc_neg_inf<C>();
}

// The sample's loss from its last alpha row (T >= 1).
template <typename C>
COLONY_INLINE C ctc_nll(const C* last, int64_t target_length) {
  if (target_length == 0) return -last[0];  // no label: the all-blank path alone
  const C l1 = last[2 * target_length], l2 = last[2 * target_length - 1];
  C m = l1 > l2 ? l1 : l2;
  if (m == ctc_neg_inf<C>()) m = C(0);
  return -(math::log(math::exp(l1 - m) + math::exp(l2 - m)) + m);
}

// The loss of a sample with input length 0: 0 for an empty target, inf otherwise.
template <typename C>
COLONY_INLINE C ctc_nll_no_input(int64_t target_length) {
  return target_length == 0 ? C(0) : static_cast<C>(INFINITY);
}

// d loss / d log_probs[t, b, c] times the sample's incoming gradient g: `collected` is the log of
// sum_{s: l'_s = c} alpha_t(s) beta_t(s) (-inf when c is on no path at t).
template <typename C>
COLONY_INLINE C ctc_grad(C y, C collected, C nll, C g) {
  return (math::exp(y) - math::exp(collected + nll - y)) * g;
}

// Whether the sample's gradient is zeroed: zero_infinity and an impossible alignment.
template <typename C>
COLONY_INLINE bool ctc_zeroed(C nll, const CtcLossParams& p) {
  return p.zero_infinity && nll == static_cast<C>(INFINITY);
}

// The entry points, declared once for both devices (kernel.h). float32 and float64 (torch's
// kernels have no others). Layouts, all contiguous: log_probs and grad [T, N, C]; targets int64,
// sample b's labels at targets + target_offsets[b]; input_lengths, target_lengths and
// target_offsets int64 [N], on the kernel's device, checked by the caller (ops/ctc_loss_ops.cc):
// lengths within [0, T] and [0, max_target], labels within [0, C).
//
// nll [N]; log_alpha [N, T, positions()]: row t of sample b is written for t < T_b, positions
// s <= 2 L_b (the rest is never read).
COLONY_KERNEL(CtcLossForward, DType dtype, const void* log_probs, const int64_t* targets, const int64_t* target_offsets,
              const int64_t* input_lengths, const int64_t* target_lengths, const CtcLossParams& p, void* nll,
              void* log_alpha);

// grad [T, N, C] = d(sum_b grad_nll[b] * nll[b]) / d log_probs: every element written (zero at
// t >= T_b, and for the whole sample when ctc_zeroed).
COLONY_KERNEL(CtcLossBackward, DType dtype, const void* grad_nll, const void* log_probs, const int64_t* targets,
              const int64_t* target_offsets, const int64_t* input_lengths, const int64_t* target_lengths,
              const void* nll, const void* log_alpha, const CtcLossParams& p, void* grad);

}  // namespace colony::kernels
