// Gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_, and the two halves of
// clip_grad_norm_ that torch 2.6 made public: get_total_norm and clip_grads_with_norm_). Norms are
// returned as doubles, as libtorch's clip_grad_norm_ returns them.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace colony::nn::utils {

// The norm of all the tensors together, as if concatenated into one vector: norm_type 2 for the
// Euclidean norm, INFINITY for the largest magnitude, any other positive p. Undefined tensors are
// skipped. error_if_nonfinite: a NaN or infinite total throws (torch's words) instead of returning it.
double get_total_norm(const std::vector<Tensor>& tensors, double norm_type = 2.0, bool error_if_nonfinite = false);

// Scales every gradient by max_norm / (total_norm + 1e-6) when that is below 1 (torch clamps the
// coefficient to 1 and multiplies; the same values). total_norm is usually get_total_norm of the
// gradients, taken before a DDP or ZeRO step changed them, or gathered from shards.
void clip_grads_with_norm_(const std::vector<Tensor>& parameters, double max_norm, double total_norm);

// get_total_norm of the parameters' gradients, then clip_grads_with_norm_ by it. Returns the total
// norm (before clipping). Parameters without gradients are skipped.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

}  // namespace colony::nn::utils
