// The poolings' input gradients as differentiable ops of grad_output, so that a pooling is
// differentiable twice. Each backward is linear in grad_output (the forward's adjoint), so its
// gradient is the forward map again: the average pools' is the pooling itself, the max pools' the
// gather at the saved indices (torch's max_pool2d_with_indices_backward's derivative). The pool's
// input takes no gradient from them: the windows and indices are constants of the graph.
#include "autograd/engine/function_node.h"
#include "autograd/nn_ops.h"
#include "autograd/ops.h"
#include "autograd/op_util.h"

namespace colony {
namespace {

using autograd::detail::Grads;
using autograd::detail::Needs;

// t's elements at `indices`, flat positions within each plane (or volume) of t's `spatial_dims`
// trailing dims, in indices' shape: the gradient of adding values at those positions.
Tensor gather_in_planes(const Tensor& t, const Tensor& indices, int64_t spatial_dims) {
  const int64_t batch_dims = t.dim() - spatial_dims;
  Tensor flat = flatten(t, batch_dims, -1);
  Tensor at = raw::flatten(indices, batch_dims, -1);
  return reshape(gather(flat, batch_dims, at), indices.sizes());
}

}  // namespace

Tensor avg_pool2d_backward(const Tensor& grad_output, const Shape& input_shape, Int2 kernel_size,
                           std::optional<Int2> stride, Int2 padding, bool ceil_mode, bool count_include_pad) {
  Tensor out =
      raw::avg_pool2d_backward(grad_output, input_shape, kernel_size, stride, padding, ceil_mode, count_include_pad);
  if (!autograd::needs_grad(grad_output)) return out;
  autograd::detail::record_differentiable("AvgPool2DBackwardBackward", {grad_output}, out, {},
                                          [=](const Grads& g, const Needs&) -> Grads {
                                            return {avg_pool2d(g[0], kernel_size, stride, padding, ceil_mode,
                                                               count_include_pad)};
                                          });
  return out;
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Shape& input_shape) {
  Tensor out = raw::adaptive_avg_pool2d_backward(grad_output, input_shape);
  if (!autograd::needs_grad(grad_output)) return out;
  const Int2 output_size{grad_output.size(-2), grad_output.size(-1)};
  autograd::detail::record_differentiable("AdaptiveAvgPool2DBackwardBackward", {grad_output}, out, {},
                                          [output_size](const Grads& g, const Needs&) -> Grads {
                                            return {adaptive_avg_pool2d(g[0], output_size)};
                                          });
  return out;
}

Tensor max_pool2d_backward(const Tensor& grad_output, const Tensor& indices, const Shape& input_shape,
                           bool windows_overlap) {
  Tensor out = raw::max_pool2d_backward(grad_output, indices, input_shape, windows_overlap);
  if (!autograd::needs_grad(grad_output)) return out;
  // int64 indices, never modified in place: no version check needed
  autograd::detail::record_differentiable("MaxPool2DWithIndicesBackwardBackward", {grad_output}, out, {},
                                          [indices](const Grads& g, const Needs&) -> Grads {
                                            return {gather_in_planes(g[0], indices, 2)};
                                          });
  return out;
}

Tensor max_pool3d_backward(const Tensor& grad_output, const Tensor& indices, const Shape& input_shape) {
  Tensor out = raw::max_pool3d_backward(grad_output, indices, input_shape);
  if (!autograd::needs_grad(grad_output)) return out;
  autograd::detail::record_differentiable("MaxPool3DWithIndicesBackwardBackward", {grad_output}, out, {},
                                          [indices](const Grads& g, const Needs&) -> Grads {
                                            return {gather_in_planes(g[0], indices, 3)};
                                          });
  return out;
}

Tensor avg_pool3d_backward(const Tensor& grad_output, const Shape& input_shape, Int3 kernel_size,
                           std::optional<Int3> stride, Int3 padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  Tensor out = raw::avg_pool3d_backward(grad_output, input_shape, kernel_size, stride, padding, ceil_mode,
                                        count_include_pad, divisor_override);
  if (!autograd::needs_grad(grad_output)) return out;
  autograd::detail::record_differentiable("AvgPool3DBackwardBackward", {grad_output}, out, {},
                                          [=](const Grads& g, const Needs&) -> Grads {
                                            return {avg_pool3d(g[0], kernel_size, stride, padding, ceil_mode,
                                                               count_include_pad, divisor_override)};
                                          });
  return out;
}

Tensor adaptive_avg_pool3d_backward(const Tensor& grad_output, const Shape& input_shape) {
  Tensor out = raw::adaptive_avg_pool3d_backward(grad_output, input_shape);
  if (!autograd::needs_grad(grad_output)) return out;
  const Int3 output_size{grad_output.size(-3), grad_output.size(-2), grad_output.size(-1)};
  autograd::detail::record_differentiable("AdaptiveAvgPool3DBackwardBackward", {grad_output}, out, {},
                                          [output_size](const Grads& g, const Needs&) -> Grads {
                                            return {adaptive_avg_pool3d(g[0], output_size)};
                                          });
  return out;
}

}  // namespace colony
