// Gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_).
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace colony::nn::utils {

// Scales all gradients by max_norm / (total_norm + 1e-6) when the total norm exceeds max_norm.
// norm_type: 2 for the Euclidean norm, INFINITY for the max norm. Returns the total norm
// (before clipping). Parameters without gradients are skipped.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0);
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

}  // namespace colony::nn::utils
