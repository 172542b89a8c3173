// Fused cross-entropy / nll_loss over [rows, classes] logits (or log-probabilities): one pass per
// row forward, one backward, the math of kernels/common/cross_entropy.h. Targets are checked here
// (CPU checks are free) and a bad one throws std::out_of_range naming the op.
#pragma once

#include <cstdint>

#include "kernels/common/cross_entropy.h"
#include "kernels/common/dtype.h"

namespace colony::kernels::cpu {

// x [rows, classes] contiguous of `dtype`; target [rows] int64. loss: `dtype`, [rows] for None,
// one element otherwise. lse [rows, 2] (each row's max and log(sum(exp(x - max)))) and counted [1]
// in compute_t<dtype> (float32 for 16-bit types): what the backward needs; lse is not written for
// log_probs.
void cross_entropy_forward(DType dtype, const void* x, const int64_t* target, const CrossEntropyParams& p, void* loss,
                           void* lse, void* counted);

// grad_x [rows, classes] of `dtype`; grad_output of `dtype` ([rows] for None, one element otherwise).
void cross_entropy_backward(DType dtype, const void* grad_output, const void* x, const int64_t* target,
                            const void* lse, const void* counted, const CrossEntropyParams& p, void* grad_x);

}  // namespace colony::kernels::cpu
