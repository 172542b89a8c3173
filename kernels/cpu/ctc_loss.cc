// The CTC loss on the CPU: the recurrences of kernels/common/ctc_loss.h, one sample per task of the
// thread pool (the samples are independent; within one, each time step needs the previous one).
// The backward keeps two rows of beta (the step being computed and the one after it), not the whole
// [T, 2L + 1] table torch allocates: alpha * beta is collected per class (in descending s, torch's
// order) as soon as a beta row is known.
#include "kernels/common/ctc_loss.h"

#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {
namespace {

template <typename T>
void forward_typed(const T* log_probs, const int64_t* targets, const int64_t* target_offsets,
                   const int64_t* input_lengths, const int64_t* target_lengths, const CtcLossParams& p, T* nll,
                   T* log_alpha) {
  const int64_t n = p.batch, c = p.classes, width = p.positions();
  parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t time = input_lengths[b], length = target_lengths[b];
      if (time == 0) {
        nll[b] = ctc_nll_no_input<T>(length);
        continue;
      }
      const int64_t* target = targets + target_offsets[b];
      T* alpha = log_alpha + b * p.max_time * width;
      const T* y0 = log_probs + b * c;
      for (int64_t s = 0; s <= 2 * length; ++s) alpha[s] = ctc_alpha_first<T>(s, target, p.blank, y0);
      for (int64_t t = 1; t < time; ++t) {
        const T* prev = alpha + (t - 1) * width;
        T* row = alpha + t * width;
        const T* y = log_probs + (t * n + b) * c;
        for (int64_t s = 0; s <= 2 * length; ++s) row[s] = ctc_alpha_step<T>(prev, s, target, p.blank, y);
      }
      nll[b] = ctc_nll(alpha + (time - 1) * width, length);
    }
  });
}

template <typename T>
void backward_typed(const T* grad_nll, const T* log_probs, const int64_t* targets, const int64_t* target_offsets,
                    const int64_t* input_lengths, const int64_t* target_lengths, const T* nll, const T* log_alpha,
                    const CtcLossParams& p, T* grad) {
  const int64_t n = p.batch, c = p.classes, width = p.positions();
  parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> rows(static_cast<size_t>(2 * width));  // beta at t (row t % 2) and at t + 1
    for (int64_t b = begin; b < end; ++b) {
      const int64_t time = input_lengths[b], length = target_lengths[b];
      const T loss = nll[b];
      const bool zeroed = ctc_zeroed(loss, p);
      for (int64_t t = zeroed ? 0 : time; t < p.max_time; ++t) {
        T* g = grad + (t * n + b) * c;
        for (int64_t k = 0; k < c; ++k) g[k] = T(0);
      }
      if (zeroed || time == 0) continue;
      const int64_t* target = targets + target_offsets[b];
      const T* alpha = log_alpha + b * p.max_time * width;
      const T gr = grad_nll[b];
      for (int64_t t = time - 1; t >= 0; --t) {
        const T* y = log_probs + (t * n + b) * c;
        T* beta = rows.data() + (t % 2) * width;
        const T* next = rows.data() + ((t + 1) % 2) * width;
        // The collected log(alpha * beta) per class first, in the gradient's row.
        T* g = grad + (t * n + b) * c;
        for (int64_t k = 0; k < c; ++k) g[k] = ctc_neg_inf<T>();
        if (t == time - 1) {
          for (int64_t s = 0; s <= 2 * length; ++s) beta[s] = ctc_beta_last<T>(s, length, target, p.blank, y);
        } else {
          for (int64_t s = 0; s <= 2 * length; ++s) beta[s] = ctc_beta_step<T>(next, s, length, target, p.blank, y);
        }
        for (int64_t s = 2 * length; s >= 0; --s) {
          T& collected = g[ctc_extended_label(target, s, p.blank)];
          collected = ctc_log_accumulate(collected, alpha[t * width + s] + beta[s]);
        }
        for (int64_t k = 0; k < c; ++k) g[k] = ctc_grad(static_cast<T>(y[k]), g[k], loss, gr);
      }
    }
  });
}

}  // namespace
}  // namespace colony::kernels::cpu

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the helpers above

void CtcLossForward::cpu(DType dtype, const void* log_probs, const int64_t* targets, const int64_t* target_offsets,
                         const int64_t* input_lengths, const int64_t* target_lengths, const CtcLossParams& p,
                         void* nll, void* log_alpha) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "ctc_loss", [&] {
    forward_typed(static_cast<const scalar_t*>(log_probs), targets, target_offsets, input_lengths, target_lengths, p,
                  static_cast<scalar_t*>(nll), static_cast<scalar_t*>(log_alpha));
  });
}

void CtcLossBackward::cpu(DType dtype, const void* grad_nll, const void* log_probs, const int64_t* targets,
                          const int64_t* target_offsets, const int64_t* input_lengths, const int64_t* target_lengths,
                          const void* nll, const void* log_alpha, const CtcLossParams& p, void* grad) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "ctc_loss_backward", [&] {
    backward_typed(static_cast<const scalar_t*>(grad_nll), static_cast<const scalar_t*>(log_probs), targets,
                   target_offsets, input_lengths, target_lengths, static_cast<const scalar_t*>(nll),
                   static_cast<const scalar_t*>(log_alpha), p, static_cast<scalar_t*>(grad));
  });
}

}  // namespace colony::kernels
