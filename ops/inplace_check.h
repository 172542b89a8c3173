// The one rule for the raw in-place writes through Tensor members (copy_, fill_, zero_, uniform_,
// normal_, bernoulli_): they are not recorded by autograd, so while grad mode is on they are
// refused on any tensor that requires grad. On a leaf as in PyTorch (writing into a parameter
// must happen under NoGradGuard, as optimizers and nn::init do), and on a non-leaf because the
// graph would not see the write and backward would return wrong gradients silently. The in-place
// math (add_, mul_, relu_, ...) is recorded instead (autograd/inplace.cc). Internal to tensor/.
#pragma once

#include "tensor/tensor.h"

namespace colony::detail {

// Throws std::runtime_error naming `op` when the write must be refused.
void check_inplace_write(const Tensor& t, const char* op);

}  // namespace colony::detail
