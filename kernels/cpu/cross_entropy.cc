#include "kernels/common/cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/activation_simd.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {
namespace {

constexpr int64_t kGrainElements = 16384;

const char* op_name(const CrossEntropyParams& p) { return p.log_probs ? "nll_loss" : "cross_entropy"; }

template <typename T>
void forward_typed(const T* x, const int64_t* target, const CrossEntropyParams& p, T* loss, compute_t<T>* lse,
                   compute_t<T>* counted) {
  using C = compute_t<T>;
  const int64_t n = p.rows, k = p.classes;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t t = target[r];
    if (t != p.ignore_index && (t < 0 || t >= k)) {
      throw std::out_of_range(std::string(op_name(p)) + ": target " + std::to_string(t) + " is out of bounds for " +
                              std::to_string(k) + " classes");
    }
  }
  // Per-row losses first (in parallel), then one ordered sum: the result does not depend on the
  // number of threads.
  std::vector<C> rows(static_cast<size_t>(n));
  parallel_for(n, std::max<int64_t>(1, kGrainElements / std::max<int64_t>(k, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * k;
      C m = C(0), log_sum = C(0);
      bool stats_done = false;
      if constexpr (std::is_same_v<T, float>) {
        if (!p.log_probs) {
          // activation_simd.h's vector loop: the scalar one below took 16 ms of a [4096, 1000]
          // loss's forward against torch's 3.1 (op_sweep, 1 thread, 2026-12-07).
          const float s = active_activation_simd_fns().max_and_sum_exp_row(xr, k, &m);
          log_sum = std::log(s);
          lse[2 * r] = m;
          lse[2 * r + 1] = log_sum;
          stats_done = true;
        }
      }
      if (!p.log_probs && !stats_done) {
        m = -std::numeric_limits<C>::infinity();
        for (int64_t c = 0; c < k; ++c) {
          const C v = static_cast<C>(xr[c]);
          m = (v > m || std::isnan(v)) ? v : m;  // a NaN reaches the loss, as in PyTorch
        }
        C s = C(0);
        for (int64_t c = 0; c < k; ++c) s += std::exp(static_cast<C>(xr[c]) - m);
        log_sum = std::log(s);
        lse[2 * r] = m;
        lse[2 * r + 1] = log_sum;
      }
      C l = C(0);
      const int64_t t = target[r];
      if (t != p.ignore_index) {
        C sum_shifted = C(0);
        if (p.label_smoothing != 0.0) {
          for (int64_t c = 0; c < k; ++c) sum_shifted += static_cast<C>(xr[c]) - m;
        }
        l = cross_entropy_row_loss(m, log_sum, static_cast<C>(xr[t]), sum_shifted, p);
      }
      rows[static_cast<size_t>(r)] = l;
    }
  });
  C total = C(0), count = C(0);
  for (int64_t r = 0; r < n; ++r) {
    if (p.reduction == LossReduction::None) {
      loss[r] = static_cast<T>(rows[static_cast<size_t>(r)]);
    } else {
      total += rows[static_cast<size_t>(r)];
    }
    if (target[r] != p.ignore_index) count += C(1);
  }
  counted[0] = count;
  if (p.reduction == LossReduction::Sum) loss[0] = static_cast<T>(total);
  if (p.reduction == LossReduction::Mean) loss[0] = static_cast<T>(total / count);
}

template <typename T>
void backward_typed(const T* grad_output, const T* x, const int64_t* target, const compute_t<T>* lse,
                    const compute_t<T>* counted, const CrossEntropyParams& p, T* gx) {
  using C = compute_t<T>;
  const int64_t k = p.classes;
  parallel_for(p.rows, std::max<int64_t>(1, kGrainElements / std::max<int64_t>(k, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      T* gr = gx + r * k;
      const int64_t t = target[r];
      if (t == p.ignore_index) {
        for (int64_t c = 0; c < k; ++c) gr[c] = T(0);
        continue;
      }
      const T* xr = x + r * k;
      const C g = cross_entropy_row_grad(static_cast<C>(grad_output[cross_entropy_grad_slot(r, p)]), counted, p);
      const C m = p.log_probs ? C(0) : lse[2 * r], log_sum = p.log_probs ? C(0) : lse[2 * r + 1];
      if constexpr (std::is_same_v<T, float>) {
        if (!p.log_probs) {  // the probabilities by the vector loop, into gr, then the formula
          active_activation_simd_fns().exp_log_softmax_row(xr, gr, k, m, log_sum);
          for (int64_t c = 0; c < k; ++c) gr[c] = cross_entropy_grad(gr[c], c == t, g, p);
          continue;
        }
      }
      for (int64_t c = 0; c < k; ++c) {
        const C prob = p.log_probs ? C(0) : std::exp(log_softmax_value(static_cast<C>(xr[c]), m, log_sum));
        gr[c] = static_cast<T>(cross_entropy_grad(prob, c == t, g, p));
      }
    }
  });
}

}  // namespace

}  // namespace colony::kernels::cpu

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the helpers above

void CrossEntropyForward::cpu(DType dtype, const void* x, const int64_t* target, const CrossEntropyParams& p,
                              void* loss, void* lse, void* counted) {
  COLONY_DISPATCH_FLOATING(dtype, op_name(p), [&] {
    using C = compute_t<scalar_t>;
    forward_typed(static_cast<const scalar_t*>(x), target, p, static_cast<scalar_t*>(loss), static_cast<C*>(lse),
                  static_cast<C*>(counted));
  });
}

void CrossEntropyBackward::cpu(DType dtype, const void* grad_output, const void* x, const int64_t* target,
                               const void* lse, const void* counted, const CrossEntropyParams& p, void* grad_x) {
  COLONY_DISPATCH_FLOATING(dtype, op_name(p), [&] {
    using C = compute_t<scalar_t>;
    backward_typed(static_cast<const scalar_t*>(grad_output), static_cast<const scalar_t*>(x), target,
                   static_cast<const C*>(lse), static_cast<const C*>(counted), p, static_cast<scalar_t*>(grad_x));
  });
}

}  // namespace colony::kernels
