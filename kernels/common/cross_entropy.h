// The math of the fused cross-entropy (log-softmax + negative log-likelihood, with label smoothing
// and ignore_index) for one row of C logits, written once for the CPU and CUDA kernels. With
// `log_probs` the row already holds log-probabilities (nll_loss): no log-softmax is applied.
//
// Row r with target t, log-probabilities lp_c = log_softmax(x)_c (x_c itself for log_probs) and
// smoothing eps:
//   loss_r = (1 - eps) * (-lp_t) + eps * (-mean_c lp_c)                    (PyTorch's definition)
//   d loss_r / d x_c = softmax_c - (1 - eps) * [c == t] - eps / C          (no softmax_c for log_probs)
// Rows whose target is ignore_index have loss 0, gradient 0, and do not count towards the mean.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/log_softmax.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

enum class LossReduction : int { None = 0, Mean = 1, Sum = 2 };

struct CrossEntropyParams {
  int64_t rows = 0, classes = 0;
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  bool log_probs = false;  // input rows are log-probabilities (nll_loss): no log-softmax
  LossReduction reduction = LossReduction::Mean;
};

// The forward saves each row's max m and log_sum (log_softmax.h says why not their sum; both 0 for
// log_probs: the row is its log-probabilities). `sum_shifted` is sum_c (x_c - m), read only with
// label smoothing.
template <typename C>
COLONY_INLINE C cross_entropy_row_loss(C m, C log_sum, C x_target, C sum_shifted, const CrossEntropyParams& p) {
  const C eps = static_cast<C>(p.label_smoothing);
  const C nll = -log_softmax_value(x_target, m, log_sum);
  if (p.label_smoothing == 0.0) return nll;
  return (C(1) - eps) * nll + eps * (log_sum - sum_shifted / static_cast<C>(p.classes));
}

// d loss / d x_c for a counted row, times the row's incoming gradient g. `prob` is softmax_c
// (exp of log_softmax_value); unused for log_probs.
template <typename C>
COLONY_INLINE C cross_entropy_grad(C prob, bool is_target, C g, const CrossEntropyParams& p) {
  const C eps = static_cast<C>(p.label_smoothing);
  C d = p.log_probs ? C(0) : prob;
  if (is_target) d -= C(1) - eps;
  if (p.label_smoothing != 0.0) d -= eps / static_cast<C>(p.classes);
  return d * g;
}

// Where row r's incoming gradient sits in grad_output: one per row for None, one for all rows
// otherwise; Mean then divides it by the number of counted rows (0/0 = NaN when every target is
// ignored, as in PyTorch).
COLONY_INLINE int64_t cross_entropy_grad_slot(int64_t row, const CrossEntropyParams& p) {
  return p.reduction == LossReduction::None ? row : 0;
}
// `counted` points at the forward's count of counted rows, read only for Mean.
template <typename C>
COLONY_INLINE C cross_entropy_row_grad(C grad_output, const C* counted, const CrossEntropyParams& p) {
  return p.reduction == LossReduction::Mean ? grad_output / counted[0] : grad_output;
}

// The entry points, declared once for both devices (kernel.h), defined in
// kernels/cpu/cross_entropy.cc and kernels/cuda/cross_entropy.cu. The CPU checks the targets (CPU
// checks are free): a bad one throws std::out_of_range naming the op.
//
// x [rows, classes] contiguous of `dtype`; target [rows] int64. loss: `dtype`, [rows] for None,
// one element otherwise. lse [rows, 2] (each row's max and log(sum(exp(x - max)))) and counted [1]
// in compute_t<dtype> (float32 for 16-bit types): what the backward needs; lse is not written for
// log_probs.
//
// CUDA: the forward is one kernel (row losses, and for Mean/Sum the reduction too: each block sums
// its rows, the last block to finish adds the block sums in block order, so the result is
// deterministic; the block sums live in scratch taken from the caching allocator for the call,
// runtime/cuda/workspaces.h's KernelScratch), the backward one kernel; `counted` is written for
// Mean and Sum only (the backward reads it for Mean only). Targets are checked on the device: a
// bad one is recorded for check_device_errors() (runtime/cuda/device_errors.h), its row then
// counts as ignored.
COLONY_KERNEL(CrossEntropyForward, DType dtype, const void* x, const int64_t* target, const CrossEntropyParams& p,
              void* loss, void* lse, void* counted);

// grad_x [rows, classes] of `dtype`; grad_output of `dtype` ([rows] for None, one element otherwise).
COLONY_KERNEL(CrossEntropyBackward, DType dtype, const void* grad_output, const void* x, const int64_t* target,
              const void* lse, const void* counted, const CrossEntropyParams& p, void* grad_x);

}  // namespace colony::kernels
