// Differentiable convolution, pooling and batch normalization: the raw ops of ops/raw_nn_ops.h
// with fused backward nodes (the backward kernels compute all input gradients in one pass). Under
// create_graph the convolutions', pools' and batch norm's backward compose differentiable ops
// instead (the gradient ops below), so they can be differentiated twice.
// nn::functional (F::) is the user-facing API over these.
#pragma once

#include <optional>
#include <tuple>
#include <vector>

#include "ops/raw_nn_ops.h"

namespace colony {

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), Int2 stride = 1,
              Int2 padding = 0, Int2 dilation = 1, int64_t groups = 1);
// raw::conv_transpose2d with its gradients (conv2d and conv2d's weight gradient, the same kernels);
// autocast's LowerPrecision row, as torch's conv_transpose2d.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), Int2 stride = 1,
                        Int2 padding = 0, Int2 output_padding = 0, Int2 dilation = 1, int64_t groups = 1);
// raw::conv3d and raw::conv_transpose3d with their gradients (conv3d_backward: the same kernels
// in both, as the 2-D pair); autocast's LowerPrecision rows, as torch's conv3d and conv_transpose3d.
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), Int3 stride = 1,
              Int3 padding = 0, Int3 dilation = 1, int64_t groups = 1);
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), Int3 stride = 1,
                        Int3 padding = 0, Int3 output_padding = 0, Int3 dilation = 1, int64_t groups = 1);
// The convolutions' gradients as differentiable ops (autograd/conv_grad.cc), which their backward
// composes under create_graph so that a convolution is differentiable twice (torch's
// _convolution_double_backward). conv2d_input_grad: conv_transpose2d(grad_output, weight) with the
// output_padding that gives input_shape. conv2d_weight_grad: raw::conv2d_backward's weight gradient
// for a weight of weight_shape, bilinear in (input, grad_output); its gradients are
// conv2d_input_grad(grad_output, gg) for the input and conv2d(input, gg) for grad_output.
Tensor conv2d_input_grad(const Tensor& grad_output, const Tensor& weight, const Shape& input_shape,
                         const raw::Conv2dParams& params);
Tensor conv2d_weight_grad(const Tensor& input, const Tensor& grad_output, const Shape& weight_shape,
                          const raw::Conv2dParams& params);
Tensor conv3d_input_grad(const Tensor& grad_output, const Tensor& weight, const Shape& input_shape,
                         const raw::Conv3dParams& params);
Tensor conv3d_weight_grad(const Tensor& input, const Tensor& grad_output, const Shape& weight_shape,
                          const raw::Conv3dParams& params);
Tensor max_pool2d(const Tensor& input, Int2 kernel_size, std::optional<Int2> stride = std::nullopt,
                  Int2 padding = 0, Int2 dilation = 1, bool ceil_mode = false);
// max_pool2d's output and the int64 indices of its maxima (flat ih * W + iw within each input
// plane, as torch's return_indices); the indices take no gradient.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, Int2 kernel_size,
                                                   std::optional<Int2> stride = std::nullopt, Int2 padding = 0,
                                                   Int2 dilation = 1, bool ceil_mode = false);
// Adaptive max pooling (raw::adaptive_max_pool2d): the output and its indices, as
// max_pool2d_with_indices; the gradient goes to each window's maximum (max_pool2d's backward).
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, Int2 output_size);
// im2col / col2im (raw::im2col, raw::col2im; F::unfold / F::fold): adjoint linear maps, so each
// one's gradient is the other (autograd/fold.cc).
Tensor im2col(const Tensor& input, Int2 kernel_size, Int2 dilation = 1, Int2 padding = 0, Int2 stride = 1);
Tensor col2im(const Tensor& input, Int2 output_size, Int2 kernel_size, Int2 dilation = 1, Int2 padding = 0,
              Int2 stride = 1);
// raw::pad_by_mode (F::pad's reflect, replicate and circular modes) with its gradient,
// raw::pad_by_mode_backward (autograd/pad.cc).
Tensor pad_by_mode(const Tensor& input, kernels::PadMode mode, const std::vector<int64_t>& pad);
// raw::grid_sampler with its gradients w.r.t. input and grid (F::grid_sample; autograd/grid_sample.cc);
// autocast's grid_sampler row (float32).
Tensor grid_sampler(const Tensor& input, const Tensor& grid, kernels::GridSampleMode mode,
                    kernels::GridSamplePadding padding, bool align_corners);
Tensor avg_pool2d(const Tensor& input, Int2 kernel_size, std::optional<Int2> stride = std::nullopt,
                  Int2 padding = 0, bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& input, Int2 output_size);

// The pools' input gradients as differentiable ops of grad_output (autograd/pool_grad.cc), which
// their backward runs so that a pooling is differentiable twice: each is linear in grad_output, the
// adjoint of the forward. avg_pool2d_backward's and adaptive_avg_pool2d_backward's gradient is the
// forward pooling of their incoming gradient; max_pool2d_backward (each output's gradient added at
// its index; windows_overlap as raw::max_pool2d_backward's) has the gather at the indices. None
// takes a gradient toward the pool's input (torch's zero). The 3-D ones: the same for the volume
// pools.
Tensor avg_pool2d_backward(const Tensor& grad_output, const Shape& input_shape, Int2 kernel_size,
                           std::optional<Int2> stride, Int2 padding, bool ceil_mode, bool count_include_pad);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Shape& input_shape);
Tensor max_pool2d_backward(const Tensor& grad_output, const Tensor& indices, const Shape& input_shape,
                           bool windows_overlap);
Tensor max_pool3d_backward(const Tensor& grad_output, const Tensor& indices, const Shape& input_shape);
Tensor avg_pool3d_backward(const Tensor& grad_output, const Shape& input_shape, Int3 kernel_size,
                           std::optional<Int3> stride, Int3 padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override);
Tensor adaptive_avg_pool3d_backward(const Tensor& grad_output, const Shape& input_shape);

// The 3-D pools and fractional max pooling (ops/raw_nn_ops.h), differentiable in input: the max
// pools send each output's gradient to its index (raw::max_pool3d_backward, max_pool2d_backward),
// the average pools spread it over the window. The indices take no gradient.
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, Int3 kernel_size,
                                                   std::optional<Int3> stride = std::nullopt, Int3 padding = 0,
                                                   Int3 dilation = 1, bool ceil_mode = false);
Tensor avg_pool3d(const Tensor& input, Int3 kernel_size, std::optional<Int3> stride = std::nullopt, Int3 padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor adaptive_avg_pool3d(const Tensor& input, Int3 output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& input, Int3 output_size);
std::tuple<Tensor, Tensor> fractional_max_pool2d(const Tensor& input, Int2 kernel_size, Int2 output_size,
                                                 const Tensor& random_samples);
std::tuple<Tensor, Tensor> fractional_max_pool3d(const Tensor& input, Int3 kernel_size, Int3 output_size,
                                                 const Tensor& random_samples);
// running_mean/var may be undefined (no running statistics). In training mode they are updated in
// place (not recorded by autograd).
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum = 0.1, double eps = 1e-5);

// Layer normalization over the trailing dims of input equal to normalized_shape (PyTorch's
// torch.nn.functional.layer_norm): (x - mean) / sqrt(var + eps) * weight + bias, with the biased
// variance; weight and bias of shape normalized_shape or undefined. One fused kernel forward (the
// per-row mean and rstd kept for backward) and one backward giving every gradient. Under autocast
// the input and parameters are widened to float32 and the output is float32 (PyTorch's CUDA
// policy; autograd/autocast.h).
Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
// RMS normalization (torch.nn.functional.rms_norm): x / sqrt(mean(x^2) + eps) * weight. eps defaults
// to the machine epsilon of the type the op accumulates in, as PyTorch's: float32's 1.19e-7 for
// float32, float16 and bfloat16 inputs, float64's for float64. Fused like layer_norm, and float32
// under autocast likewise.
Tensor rms_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                std::optional<double> eps = std::nullopt);

// Group normalization (torch.nn.functional.group_norm): input [N, C, *] with its C channels in
// num_groups groups; each (sample, group) normalized by its mean and biased variance, then
// * weight[c] + bias[c] (each [C] or undefined). Composite: layer_norm's fused kernel over
// [N, num_groups, C / num_groups * prod(*)] without affine, then the per-channel affine broadcast.
// Under autocast it computes and returns float32 (torch's CUDA float32 list).
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

// Rows of weight [num_embeddings, dim] picked by integer indices (int64 or int32) of any shape:
// output indices.shape + [dim] (torch.nn.functional.embedding). The gradient adds each output
// row's gradient into its weight row (deterministically on the CPU); the row padding_idx (negative
// counts from the end) gets none. An index outside [0, num_embeddings) is an error naming it (on
// CUDA, reported at the next synchronization). Autocast leaves it alone, as PyTorch's does.
Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx = std::nullopt);

// The per-sample CTC losses [N] of log_probs [T, N, C] (raw::ctc_loss, torch's _ctc_loss): one
// kernel forward (alpha), one backward (beta and the gradient with respect to log_probs, torch's
// formula; autograd/ctc_loss.cc). zero_infinity zeroes the gradient of a sample whose loss is inf;
// replacing the loss itself and the reduction are F::ctc_loss's, as in torch.
Tensor ctc_loss_per_sample(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                           const std::vector<int64_t>& target_lengths, int64_t blank, bool zero_infinity);

// The fused bags of raw::embedding_bag (weight [num_embeddings, dim], flat int64 indices, int64
// offsets [bags + 1], per_sample_weights or undefined, padding_idx or -1): output [bags, dim], with
// gradients for weight (the sum in position order on the CPU) and per_sample_weights
// (autograd/embedding_bag.cc). F::embedding_bag builds these from torch's input forms.
Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                     const Tensor& per_sample_weights, raw::EmbeddingBagMode mode, int64_t padding_idx);

// Fused cross-entropy / nll_loss over input [N, C] and int64 target [N] (raw::cross_entropy_loss):
// one kernel forward, one backward.
Tensor cross_entropy_loss(const Tensor& input, const Tensor& target, const raw::CrossEntropyOptions& options);

// mean/sum/none of (input - target)^2; input and target of one shape. Composite: the gradient comes
// from sub, mul and the reduction. Under autocast it runs in float32.
Tensor mse_loss(const Tensor& input, const Tensor& target, raw::LossReduction reduction = raw::LossReduction::Mean);

// One LSTM / GRU step's gate math after its two products, fused (raw::lstm_cell, raw::gru_cell:
// one kernel forward, one backward): xg, hg [N, G*H] or [G*H] are the input's and the hidden
// state's gate pre-activations (one dtype), in torch's gate order. LSTM: c [N, H] in
// raw::rnn_cell_state_dtype(xg's dtype) (float32 for 16-bit xg); returns (h' = o tanh(c') in xg's
// dtype, c' = f c + i g in c's). GRU: h [N, H] in xg's dtype; returns h' = (h - n) z + n with
// n = tanh(xg_n + r hg_n). Gradients flow to all three inputs (first order only).
std::tuple<Tensor, Tensor> lstm_cell_gates(const Tensor& xg, const Tensor& hg, const Tensor& c);
Tensor gru_cell_gates(const Tensor& xg, const Tensor& hg, const Tensor& h);

}  // namespace colony
