// torch.nn.utils' helpers for batches of sequences and for parameters as one vector:
//
//   Tensor batch = nn::utils::rnn::pad_sequence({a, b, c}, /*batch_first=*/true);   // [3, max_len, *]
//   Tensor flat = nn::utils::parameters_to_vector(model->parameters());
//   nn::utils::vector_to_parameters(flat, model->parameters());
#pragma once

#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace colony::nn::utils {

namespace rnn {

// torch.nn.utils.rnn.pad_sequence: sequences [L_i, *] (the same trailing dims, dtype and device)
// stacked into [max L_i, B, *] (or [B, max L_i, *] with batch_first), each padded with
// padding_value after its end (padding_side "right") or before its start ("left").
// Differentiable in each sequence.
Tensor pad_sequence(const std::vector<Tensor>& sequences, bool batch_first = false, double padding_value = 0.0,
                    const std::string& padding_side = "right");

}  // namespace rnn

// torch.nn.utils.parameters_to_vector: the parameters flattened and concatenated in order (one
// device; differentiable, as torch's).
Tensor parameters_to_vector(const std::vector<Tensor>& parameters);

// torch.nn.utils.vector_to_parameters: copies consecutive slices of the 1-D `vec` into the
// parameters, in order, outside autograd (as torch's assignment to .data). vec's length must equal
// the parameters' total size.
void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters);

}  // namespace colony::nn::utils
