// The convolutions' gradients as differentiable ops, so that a convolution is differentiable twice
// (torch's _convolution_double_backward): conv2d's input gradient is conv_transpose2d of grad_output
// and the weight, an op already; its weight gradient is conv2d_weight_grad, bilinear in (input,
// grad_output), whose own gradients are conv2d's input gradient again and conv2d. Each is the raw
// kernel while grad mode is off.
#include <string>

#include "autograd/engine/function_node.h"
#include "autograd/nn_ops.h"
#include "autograd/op_util.h"

namespace colony {
namespace {

using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

// The rows at the end of one dim that the forward's stride skipped: the output_padding that makes
// the transposed convolution of an output of size `out` come back `in` long. In [0, stride), so
// conv_transpose's own check always passes.
int64_t skipped_rows(int64_t in, int64_t kernel, int64_t out, int64_t stride, int64_t padding, int64_t dilation) {
  return in - ((out - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1);
}

// A zero broadcast to the weight's shape (no memory): raw::conv2d_backward and conv3d_backward
// read only the weight's shape, dtype and device when they compute the weight gradient alone.
Tensor weight_stand_in(const Shape& weight_shape, const Tensor& like) {
  return raw::expand(autograd::detail::scalar_like(0.0, like), weight_shape);
}

// A convolution's weight gradient as an op of (input, grad_output), for conv2d and conv3d alike:
// the raw kernel's value, recorded as bilinear: the input's gradient reads grad_output (the
// transposed convolution `input_grad`), grad_output's reads the input (the convolution `conv`).
template <typename Params, typename RawBackward, typename InputGrad, typename Conv>
Tensor weight_grad_recorded(const Tensor& input, const Tensor& grad_output, const Shape& weight_shape, const Params& p,
                            RawBackward raw_backward, InputGrad input_grad, Conv conv) {
  Tensor out = raw_backward(grad_output, input, weight_stand_in(weight_shape, input), p, {false, true, false}).grad_weight;
  if (!autograd::needs_grad(input, grad_output)) return out;
  SavedTensor si = autograd::detail::save_if(autograd::needs_grad(grad_output), input),
              sg = autograd::detail::save_if(autograd::needs_grad(input), grad_output);
  const Shape input_shape = input.sizes();
  autograd::detail::record_differentiable(
      "ConvolutionBackwardBackward", {input, grad_output}, out, {si, sg},
      [si, sg, input_shape, p, input_grad, conv](const Grads& g, const Needs& needs) -> Grads {
        Tensor grad_input, grad_grad_output;
        if (needs[0]) grad_input = input_grad(sg.unpack(), g[0], input_shape, p);
        if (needs[1]) grad_grad_output = conv(si.unpack(), g[0], p);
        return {grad_input, grad_grad_output};
      });
  return out;
}

}  // namespace

Tensor conv2d_input_grad(const Tensor& grad_output, const Tensor& weight, const Shape& input_shape,
                         const raw::Conv2dParams& p) {
  const Shape& w = weight.sizes();
  const Shape& o = grad_output.sizes();
  const Int2 output_padding{skipped_rows(input_shape[2], w[2], o[2], p.stride.h, p.padding.h, p.dilation.h),
                            skipped_rows(input_shape[3], w[3], o[3], p.stride.w, p.padding.w, p.dilation.w)};
  return conv_transpose2d(grad_output, weight, Tensor(), p.stride, p.padding, output_padding, p.dilation, p.groups);
}

Tensor conv2d_weight_grad(const Tensor& input, const Tensor& grad_output, const Shape& weight_shape,
                          const raw::Conv2dParams& p) {
  return weight_grad_recorded(
      input, grad_output, weight_shape, p, raw::conv2d_backward, conv2d_input_grad,
      [](const Tensor& x, const Tensor& w, const raw::Conv2dParams& q) {
        return conv2d(x, w, Tensor(), q.stride, q.padding, q.dilation, q.groups);
      });
}

Tensor conv3d_input_grad(const Tensor& grad_output, const Tensor& weight, const Shape& input_shape,
                         const raw::Conv3dParams& p) {
  const Shape& w = weight.sizes();
  const Shape& o = grad_output.sizes();
  const Int3 output_padding{skipped_rows(input_shape[2], w[2], o[2], p.stride.d, p.padding.d, p.dilation.d),
                            skipped_rows(input_shape[3], w[3], o[3], p.stride.h, p.padding.h, p.dilation.h),
                            skipped_rows(input_shape[4], w[4], o[4], p.stride.w, p.padding.w, p.dilation.w)};
  return conv_transpose3d(grad_output, weight, Tensor(), p.stride, p.padding, output_padding, p.dilation, p.groups);
}

Tensor conv3d_weight_grad(const Tensor& input, const Tensor& grad_output, const Shape& weight_shape,
                          const raw::Conv3dParams& p) {
  return weight_grad_recorded(
      input, grad_output, weight_shape, p, raw::conv3d_backward, conv3d_input_grad,
      [](const Tensor& x, const Tensor& w, const raw::Conv3dParams& q) {
        return conv3d(x, w, Tensor(), q.stride, q.padding, q.dilation, q.groups);
      });
}

}  // namespace colony
