#include "autograd/nn_ops.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/engine/function_node.h"
#include "autograd/ops.h"
#include "autograd/op_util.h"

namespace colony {
namespace {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;

}  // namespace

Tensor conv2d(const Tensor& input_arg, const Tensor& weight_arg, const Tensor& bias_arg, Int2 stride,
              Int2 padding, Int2 dilation, int64_t groups) {
  const Tensor input = autocast::cast(autocast::Op::conv2d, input_arg),
               weight = autocast::cast(autocast::Op::conv2d, weight_arg), bias = autocast::cast(autocast::Op::conv2d, bias_arg);
  Tensor out = raw::conv2d(input, weight, bias, stride, padding, dilation, groups);
  if (!autograd::needs_grad(input, weight, bias)) return out;
  raw::Conv2dParams params{stride, padding, dilation, groups};
  bool has_bias = bias.defined();
  std::vector<Tensor> inputs = {input, weight};
  if (has_bias) inputs.push_back(bias);
  SavedTensor si(input), sw(weight);
  autograd::detail::record_differentiable(
      "ConvolutionBackward", inputs, out, {si, sw}, [si, sw, params, has_bias](const Grads& g, const Needs& needs) -> Grads {
        if (!GradMode::is_enabled()) {
          // An ordinary backward: the fused kernel, which computes the input, weight and bias
          // gradients in one pass over grad_output.
          raw::Conv2dGrads r = raw::conv2d_backward(g[0], si.unpack(), sw.unpack(), params,
                                                    {needs[0], needs[1], has_bias && needs[2]});
          if (has_bias) return {r.grad_input, r.grad_weight, r.grad_bias};
          return {r.grad_input, r.grad_weight};
        }
        // create_graph: the same gradients as differentiable ops, which record their own graph.
        const Tensor x = si.unpack(), w = sw.unpack();
        Grads out = {needs[0] ? conv2d_input_grad(g[0], w, x.sizes(), params) : Tensor(),
                     needs[1] ? conv2d_weight_grad(x, g[0], w.sizes(), params) : Tensor()};
        if (has_bias) out.push_back(needs[2] ? sum(g[0], {0, 2, 3}) : Tensor());
        return out;
      });
  return out;
}

Tensor conv_transpose2d(const Tensor& input_arg, const Tensor& weight_arg, const Tensor& bias_arg, Int2 stride,
                        Int2 padding, Int2 output_padding, Int2 dilation, int64_t groups) {
  auto cast = [](const Tensor& t) { return autocast::cast(autocast::Op::conv_transpose2d, t); };
  const Tensor input = cast(input_arg), weight = cast(weight_arg), bias = cast(bias_arg);
  Tensor out = raw::conv_transpose2d(input, weight, bias, stride, padding, output_padding, dilation, groups);
  if (!autograd::needs_grad(input, weight, bias)) return out;
  raw::Conv2dParams params{stride, padding, dilation, groups};
  bool has_bias = bias.defined();
  std::vector<Tensor> inputs = {input, weight};
  if (has_bias) inputs.push_back(bias);
  SavedTensor si(input), sw(weight);
  // The forward is conv2d's input gradient, so its input gradient is conv2d itself and its weight
  // gradient is conv2d's, with grad_output in the input's place and the input in grad_output's.
  // The differentiable ops are the raw kernels while grad mode is off (an ordinary backward).
  autograd::detail::record_differentiable(
      "ConvolutionBackward", inputs, out, {si, sw}, [si, sw, params, has_bias](const Grads& g, const Needs& needs) -> Grads {
        Tensor grad_input, grad_weight, grad_bias;
        if (needs[0]) {
          grad_input = conv2d(g[0], sw.unpack(), Tensor(), params.stride, params.padding, params.dilation, params.groups);
        }
        if (needs[1]) grad_weight = conv2d_weight_grad(g[0], si.unpack(), sw.unpack().sizes(), params);
        if (has_bias && needs[2]) grad_bias = sum(g[0], {0, 2, 3});
        if (has_bias) return {grad_input, grad_weight, grad_bias};
        return {grad_input, grad_weight};
      });
  return out;
}

Tensor conv3d(const Tensor& input_arg, const Tensor& weight_arg, const Tensor& bias_arg, Int3 stride, Int3 padding,
              Int3 dilation, int64_t groups) {
  auto cast = [](const Tensor& t) { return autocast::cast(autocast::Op::conv3d, t); };
  const Tensor input = cast(input_arg), weight = cast(weight_arg), bias = cast(bias_arg);
  Tensor out = raw::conv3d(input, weight, bias, stride, padding, dilation, groups);
  if (!autograd::needs_grad(input, weight, bias)) return out;
  raw::Conv3dParams params{stride, padding, dilation, groups};
  bool has_bias = bias.defined();
  std::vector<Tensor> inputs = {input, weight};
  if (has_bias) inputs.push_back(bias);
  SavedTensor si(input), sw(weight);
  autograd::detail::record_differentiable(
      "ConvolutionBackward", inputs, out, {si, sw}, [si, sw, params, has_bias](const Grads& g, const Needs& needs) -> Grads {
        if (!GradMode::is_enabled()) {
          // An ordinary backward: the fused kernel, one pass for all three gradients (as conv2d's).
          raw::Conv2dGrads r = raw::conv3d_backward(g[0], si.unpack(), sw.unpack(), params,
                                                    {needs[0], needs[1], has_bias && needs[2]});
          if (has_bias) return {r.grad_input, r.grad_weight, r.grad_bias};
          return {r.grad_input, r.grad_weight};
        }
        const Tensor x = si.unpack(), w = sw.unpack();
        Grads out = {needs[0] ? conv3d_input_grad(g[0], w, x.sizes(), params) : Tensor(),
                     needs[1] ? conv3d_weight_grad(x, g[0], w.sizes(), params) : Tensor()};
        if (has_bias) out.push_back(needs[2] ? sum(g[0], {0, 2, 3, 4}) : Tensor());
        return out;
      });
  return out;
}

Tensor conv_transpose3d(const Tensor& input_arg, const Tensor& weight_arg, const Tensor& bias_arg, Int3 stride,
                        Int3 padding, Int3 output_padding, Int3 dilation, int64_t groups) {
  auto cast = [](const Tensor& t) { return autocast::cast(autocast::Op::conv_transpose3d, t); };
  const Tensor input = cast(input_arg), weight = cast(weight_arg), bias = cast(bias_arg);
  Tensor out = raw::conv_transpose3d(input, weight, bias, stride, padding, output_padding, dilation, groups);
  if (!autograd::needs_grad(input, weight, bias)) return out;
  raw::Conv3dParams params{stride, padding, dilation, groups};
  bool has_bias = bias.defined();
  std::vector<Tensor> inputs = {input, weight};
  if (has_bias) inputs.push_back(bias);
  SavedTensor si(input), sw(weight);
  // As conv_transpose2d's: the input gradient is conv3d itself, the weight gradient conv3d's with
  // grad_output in the input's place and the input in grad_output's.
  autograd::detail::record_differentiable(
      "ConvolutionBackward", inputs, out, {si, sw}, [si, sw, params, has_bias](const Grads& g, const Needs& needs) -> Grads {
        Tensor grad_input, grad_weight, grad_bias;
        if (needs[0]) {
          grad_input = conv3d(g[0], sw.unpack(), Tensor(), params.stride, params.padding, params.dilation, params.groups);
        }
        if (needs[1]) grad_weight = conv3d_weight_grad(g[0], si.unpack(), sw.unpack().sizes(), params);
        if (has_bias && needs[2]) grad_bias = sum(g[0], {0, 2, 3, 4});
        if (has_bias) return {grad_input, grad_weight, grad_bias};
        return {grad_input, grad_weight};
      });
  return out;
}

namespace {

// out and indices of a max pooling, recorded with the backward that adds each output's gradient at
// its index. windows_overlap: whether one input element may be the maximum of several windows
// (raw::max_pool2d_backward's fast path for disjoint windows stores instead of adding).
void record_max_pool(const char* name, const Tensor& input, Tensor& out, const Tensor& indices,
                     bool windows_overlap) {
  if (!autograd::needs_grad(input)) return;
  Shape input_shape = input.sizes();
  // int64 indices, never modified in place: no version check needed
  autograd::detail::record_differentiable(
      name, {input}, out, {}, [indices, input_shape, windows_overlap](const Grads& g, const Needs&) -> Grads {
        return {max_pool2d_backward(g[0], indices, input_shape, windows_overlap)};
      });
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, Int2 kernel_size, std::optional<Int2> stride,
                                                   Int2 padding, Int2 dilation, bool ceil_mode) {
  raw::MaxPool2dResult r = raw::max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode);
  const Int2 s = stride.value_or(kernel_size);
  const bool overlap = s.h < (kernel_size.h - 1) * dilation.h + 1 || s.w < (kernel_size.w - 1) * dilation.w + 1;
  record_max_pool("MaxPool2DWithIndicesBackward", input, r.output, r.indices, overlap);
  return {r.output, r.indices};
}

Tensor max_pool2d(const Tensor& input, Int2 kernel_size, std::optional<Int2> stride, Int2 padding,
                  Int2 dilation, bool ceil_mode) {
  return std::get<0>(max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode));
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, Int2 output_size) {
  raw::MaxPool2dResult r = raw::adaptive_max_pool2d(input, output_size);
  // Adaptive windows overlap whenever an output dim does not divide its input dim.
  record_max_pool("AdaptiveMaxPool2DBackward", input, r.output, r.indices, /*windows_overlap=*/true);
  return {r.output, r.indices};
}

Tensor avg_pool2d(const Tensor& input, Int2 kernel_size, std::optional<Int2> stride, Int2 padding,
                  bool ceil_mode, bool count_include_pad) {
  Tensor out = raw::avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad);
  if (!autograd::needs_grad(input)) return out;
  Shape input_shape = input.sizes();
  autograd::detail::record_differentiable("AvgPool2DBackward", {input}, out, {}, [=](const Grads& g, const Needs&) -> Grads {
    return {avg_pool2d_backward(g[0], input_shape, kernel_size, stride, padding, ceil_mode, count_include_pad)};
  });
  return out;
}

Tensor adaptive_avg_pool2d(const Tensor& input, Int2 output_size) {
  Tensor out = raw::adaptive_avg_pool2d(input, output_size);
  if (!autograd::needs_grad(input)) return out;
  Shape input_shape = input.sizes();
  autograd::detail::record_differentiable("AdaptiveAvgPool2DBackward", {input}, out, {},
                                          [input_shape](const Grads& g, const Needs&) -> Grads {
                                            return {adaptive_avg_pool2d_backward(g[0], input_shape)};
                                          });
  return out;
}

namespace {

// A volume max pooling's out and indices, recorded with max_pool3d_backward.
void record_max_pool3d(const char* name, const Tensor& input, Tensor& out, const Tensor& indices) {
  if (!autograd::needs_grad(input)) return;
  Shape input_shape = input.sizes();
  autograd::detail::record_differentiable(name, {input}, out, {}, [indices, input_shape](const Grads& g, const Needs&) -> Grads {
    return {max_pool3d_backward(g[0], indices, input_shape)};
  });
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, Int3 kernel_size, std::optional<Int3> stride,
                                                   Int3 padding, Int3 dilation, bool ceil_mode) {
  raw::MaxPool2dResult r = raw::max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode);
  record_max_pool3d("MaxPool3DWithIndicesBackward", input, r.output, r.indices);
  return {r.output, r.indices};
}

Tensor avg_pool3d(const Tensor& input_arg, Int3 kernel_size, std::optional<Int3> stride, Int3 padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  const Tensor input = autocast::cast(autocast::Op::avg_pool3d, input_arg);
  Tensor out = raw::avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  if (!autograd::needs_grad(input)) return out;
  Shape input_shape = input.sizes();
  autograd::detail::record_differentiable("AvgPool3DBackward", {input}, out, {}, [=](const Grads& g, const Needs&) -> Grads {
    return {avg_pool3d_backward(g[0], input_shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                divisor_override)};
  });
  return out;
}

Tensor adaptive_avg_pool3d(const Tensor& input, Int3 output_size) {
  Tensor out = raw::adaptive_avg_pool3d(input, output_size);
  if (!autograd::needs_grad(input)) return out;
  Shape input_shape = input.sizes();
  autograd::detail::record_differentiable("AdaptiveAvgPool3DBackward", {input}, out, {},
                                          [input_shape](const Grads& g, const Needs&) -> Grads {
                                            return {adaptive_avg_pool3d_backward(g[0], input_shape)};
                                          });
  return out;
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& input_arg, Int3 output_size) {
  const Tensor input = autocast::cast(autocast::Op::adaptive_max_pool3d, input_arg);
  raw::MaxPool2dResult r = raw::adaptive_max_pool3d(input, output_size);
  record_max_pool3d("AdaptiveMaxPool3DBackward", input, r.output, r.indices);
  return {r.output, r.indices};
}

std::tuple<Tensor, Tensor> fractional_max_pool2d(const Tensor& input_arg, Int2 kernel_size, Int2 output_size,
                                                 const Tensor& samples) {
  const Tensor input = autocast::cast(autocast::Op::fractional_max_pool2d, input_arg);
  const Tensor s = autocast::cast(autocast::Op::fractional_max_pool2d, samples);
  raw::MaxPool2dResult r = raw::fractional_max_pool2d(input, kernel_size, output_size, s);
  record_max_pool("FractionalMaxPool2DBackward", input, r.output, r.indices, /*windows_overlap=*/true);
  return {r.output, r.indices};
}

std::tuple<Tensor, Tensor> fractional_max_pool3d(const Tensor& input_arg, Int3 kernel_size, Int3 output_size,
                                                 const Tensor& samples) {
  const Tensor input = autocast::cast(autocast::Op::fractional_max_pool3d, input_arg);
  const Tensor s = autocast::cast(autocast::Op::fractional_max_pool3d, samples);
  raw::MaxPool2dResult r = raw::fractional_max_pool3d(input, kernel_size, output_size, s);
  record_max_pool3d("FractionalMaxPool3DBackward", input, r.output, r.indices);
  return {r.output, r.indices};
}

namespace {

// Batch norm's gradients written with the differentiable ops, for a backward under create_graph
// (torch's batchnorm_double_backward). Evaluation: a per-channel affine map of x, the running
// statistics (mean, invstd) constants. Training: the batch statistics are functions of x,
// recomputed here so that their derivatives are part of the recorded graph.
raw::BatchNormGrads batch_norm_grads_recorded(const Tensor& g, const Tensor& x, const Tensor& weight,
                                              const Tensor& saved_mean, const Tensor& saved_invstd, bool training,
                                              double eps, std::array<bool, 3> output_mask) {
  std::vector<int64_t> dims = {0};
  Shape per_channel(static_cast<size_t>(x.dim()), 1);
  per_channel[1] = x.size(1);
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  Tensor mu, invstd;
  if (training) {
    mu = mean(x, dims, /*keepdim=*/true);
    invstd = rsqrt(add(mean(square(sub(x, mu)), dims, true), eps));
  } else {
    mu = reshape(saved_mean, per_channel);
    invstd = reshape(saved_invstd, per_channel);
  }
  const Tensor xhat = mul(sub(x, mu), invstd);
  raw::BatchNormGrads r;
  if (output_mask[0]) {
    const Tensor scale = weight.defined() ? mul(reshape(weight, per_channel), invstd) : invstd;
    // Training: g less its mean and its projection on xhat, the parts the statistics absorb.
    const Tensor centered =
        training ? sub(sub(g, mean(g, dims, true)), mul(xhat, mean(mul(g, xhat), dims, true))) : g;
    r.grad_input = mul(centered, scale);
  }
  if (output_mask[1]) r.grad_weight = sum(mul(g, xhat), dims);
  if (output_mask[2]) r.grad_bias = sum(g, dims);
  return r;
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps) {
  if (autocast::casts(autocast::Op::batch_norm, input)) {
    // Statistics and normalization in float32 (with the float32 running buffers), the output in
    // the input's dtype, as cuDNN's mixed-precision batch norm gives it.
    auto f32 = [](const Tensor& t) { return autocast::cast(autocast::Op::batch_norm, t); };
    Tensor out = batch_norm(f32(input), f32(weight), f32(bias), running_mean, running_var, training, momentum, eps);
    return to(out, input.device(), input.dtype());
  }
  raw::BatchNormResult r = raw::batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
  if (!autograd::needs_grad(input, weight, bias)) return r.output;
  // weight and bias each may be undefined (a module with affine but no bias passes weight alone).
  const bool has_weight = weight.defined(), has_bias = bias.defined();
  std::vector<Tensor> inputs = {input};
  if (has_weight) inputs.push_back(weight);
  if (has_bias) inputs.push_back(bias);
  SavedTensor si(input), sw = has_weight ? SavedTensor(weight) : SavedTensor();
  Tensor mean = r.save_mean, invstd = r.save_invstd;
  autograd::detail::record_differentiable(
      "NativeBatchNormBackward", inputs, r.output, {si, sw},
      [si, sw, mean, invstd, training, eps, has_weight, has_bias](const Grads& g, const Needs& needs) -> Grads {
        Tensor w = has_weight ? sw.unpack() : Tensor();
        const bool need_weight = has_weight && needs[1];
        const bool need_bias = has_bias && needs[has_weight ? 2 : 1];
        // An ordinary backward runs the fused kernel; under create_graph the composite records.
        raw::BatchNormGrads gr =
            GradMode::is_enabled()
                ? batch_norm_grads_recorded(g[0], si.unpack(), w, mean, invstd, training, eps,
                                            {needs[0], need_weight, need_bias})
                : raw::batch_norm_backward(g[0], si.unpack(), w, mean, invstd, training,
                                           {needs[0], need_weight, need_bias});
        Grads out = {gr.grad_input};
        if (has_weight) out.push_back(gr.grad_weight);
        if (has_bias) out.push_back(gr.grad_bias);
        return out;
      });
  return r.output;
}

Tensor group_norm(const Tensor& input_arg, int64_t num_groups, const Tensor& weight_arg, const Tensor& bias_arg,
                  double eps) {
  if (!input_arg.defined() || input_arg.dim() < 2) {
    throw std::invalid_argument("group_norm: expected input of at least 2 dims (N, C, *), got " +
                                (input_arg.defined() ? shape_str(input_arg.sizes()) : std::string("undefined")));
  }
  const int64_t n = input_arg.size(0), c = input_arg.size(1);
  if (num_groups <= 0 || c % num_groups != 0) {
    throw std::invalid_argument("group_norm: expected the number of channels (" + std::to_string(c) + " in input " +
                                shape_str(input_arg.sizes()) + ") to be divisible by num_groups (" +
                                std::to_string(num_groups) + ")");
  }
  for (const Tensor* p : {&weight_arg, &bias_arg}) {
    if (p->defined() && (p->dim() != 1 || p->size(0) != c)) {
      throw std::invalid_argument(std::string("group_norm: expected ") + (p == &weight_arg ? "weight" : "bias") +
                                  " of shape [" + std::to_string(c) + "] (one per channel), got " +
                                  shape_str(p->sizes()));
    }
  }
  auto f32 = [](const Tensor& t) { return autocast::cast(autocast::Op::group_norm, t); };
  const Tensor input = f32(input_arg), weight = f32(weight_arg), bias = f32(bias_arg);
  // Each (sample, group) is a row of layer_norm's fused kernel, without its affine (which is per
  // normalized position there, per channel here); the per-channel affine follows broadcast.
  const int64_t group_size = input.numel() / std::max<int64_t>(n * num_groups, 1);
  Tensor y = layer_norm(reshape(input, {n, num_groups, group_size}), {group_size}, Tensor(), Tensor(), eps);
  y = reshape(y, input.sizes());
  Shape channel_shape(input.dim(), 1);
  channel_shape[1] = c;
  if (weight.defined()) y = mul(y, reshape(weight, channel_shape));
  if (bias.defined()) y = add(y, reshape(bias, channel_shape));
  return y;
}

Tensor mse_loss(const Tensor& input_arg, const Tensor& target_arg, raw::LossReduction reduction) {
  if (input_arg.sizes() != target_arg.sizes()) {
    throw std::invalid_argument("mse_loss: input " + shape_str(input_arg.sizes()) + " and target " +
                                shape_str(target_arg.sizes()) + " must have the same shape");
  }
  const Tensor d = sub(autocast::cast(autocast::Op::mse_loss, input_arg), autocast::cast(autocast::Op::mse_loss, target_arg));
  const Tensor squared = mul(d, d);
  switch (reduction) {
    case raw::LossReduction::Mean: return mean(squared);
    case raw::LossReduction::Sum: return sum(squared);
    case raw::LossReduction::None: return squared;
  }
  return squared;
}

}  // namespace colony
