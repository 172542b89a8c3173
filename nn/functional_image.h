// The views the 1-D and unbatched F:: layers take to reach the 2-D ops: [N, C, L] or [C, L] as
// [N, C, 1, L], and back. Shared by nn/functional_conv.cc and nn/functional_pool.cc.
#pragma once

#include "tensor/tensor.h"

namespace colony::nn::functional::detail {

// [N, C, L] or [C, L] (unbatched) as [N, C, 1, L]; `op` names the caller in the error.
Tensor as_image(const Tensor& input, const char* op);
// as_image's inverse: [N, C, 1, L] back to the rank of `input`.
Tensor from_image(const Tensor& y, const Tensor& input);

}  // namespace colony::nn::functional::detail
