// F::unfold and F::fold: the differentiable im2col / col2im of autograd/nn_ops.h (one kernel each
// way, kernels/common/fold.h), which hold torch's checks.
#include "autograd/nn_ops.h"
#include "nn/functional.h"

namespace colony::nn::functional {

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options) {
  return colony::im2col(input, options.kernel_size(), options.dilation(), options.padding(), options.stride());
}

Tensor fold(const Tensor& input, const FoldFuncOptions& options) {
  return colony::col2im(input, options.output_size(), options.kernel_size(), options.dilation(), options.padding(),
                        options.stride());
}

}  // namespace colony::nn::functional
