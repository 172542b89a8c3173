// im2col and col2im: each is a linear map whose transpose is the other (a column element copies
// one image element; fold sums them back), so the gradient of one is the other with the same
// window, and the image size im2col's gradient needs is its input's.
#include "autograd/nn_ops.h"
#include "autograd/op_util.h"

namespace colony {

using autograd::record;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::record_differentiable;

Tensor im2col(const Tensor& input, Int2 kernel_size, Int2 dilation, Int2 padding, Int2 stride) {
  Tensor out = raw::im2col(input, kernel_size, dilation, padding, stride);
  if (autograd::needs_grad(input)) {
    const Int2 image(input.size(-2), input.size(-1));
    record_differentiable("Im2ColBackward", {input}, out, {}, [=](const Grads& g, const Needs&) -> Grads {
      return {col2im(g[0], image, kernel_size, dilation, padding, stride)};
    });
  }
  return out;
}

Tensor col2im(const Tensor& input, Int2 output_size, Int2 kernel_size, Int2 dilation, Int2 padding, Int2 stride) {
  Tensor out = raw::col2im(input, output_size, kernel_size, dilation, padding, stride);
  if (autograd::needs_grad(input)) {
    record_differentiable("Col2ImBackward", {input}, out, {}, [=](const Grads& g, const Needs&) -> Grads {
      return {im2col(g[0], kernel_size, dilation, padding, stride)};
    });
  }
  return out;
}

}  // namespace colony
