// One element of a log-softmax, written once for softmax and cross-entropy on the CPU and CUDA.
#pragma once

#include "kernels/common/macros.h"

namespace colony::kernels {

// log_softmax(x)_c = x_c - m - log_sum, with the row's max m and log_sum = log(sum_c exp(x_c - m)),
// computed as (x_c - m) - log_sum, as PyTorch does. Their sum m + log_sum (the log-sum-exp) is
// never formed: rounded to float it drops log_sum's low bits once |m| is large, and logits
// [1e8, 1e8] then get log-probabilities 0 instead of -log 2 (and 1e4 is already off by 2e-4).
template <typename C>
COLONY_INLINE C log_softmax_value(C x, C m, C log_sum) {
  return (x - m) - log_sum;
}

}  // namespace colony::kernels
