// conv2d and its backward: argument checks in PyTorch's terms, then the kernels of
// kernels/common/conv.h (the CPU's direct/im2col kernels, or cuDNN) through run_kernel.
#include <stdexcept>
#include <string>

#include "kernels/common/conv.h"
#include "kernels/common/conv_geometry.h"
#include "ops/cpu_widen.h"
#include "runtime/run_kernel.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"

namespace colony::raw {
namespace {

std::string pair_str(Int2 p) { return "(" + std::to_string(p.h) + ", " + std::to_string(p.w) + ")"; }

void check_positive(Int2 p, const char* what, const char* op, bool allow_zero) {
  bool ok = allow_zero ? (p.h >= 0 && p.w >= 0) : (p.h > 0 && p.w > 0);
  if (!ok) {
    throw std::invalid_argument(std::string(op) + ": " + what + " must be " +
                                (allow_zero ? "non-negative" : "positive") + ", got " + pair_str(p));
  }
}

// Checks everything about the shapes and parameters and returns the kernels' view of them.
kernels::Conv2dGeometry conv_geometry(const Shape& in, const Shape& wt, const Conv2dParams& p, const char* op) {
  if (in.size() != 4) {
    throw std::invalid_argument(std::string(op) + ": input must be 4-D (N,C,H,W), got " + shape_str(in));
  }
  if (wt.size() != 4) {
    throw std::invalid_argument(std::string(op) + ": weight must be 4-D (O,C/groups,kH,kW), got " + shape_str(wt));
  }
  check_positive(p.stride, "stride", op, false);
  check_positive(p.padding, "padding", op, true);
  check_positive(p.dilation, "dilation", op, false);
  if (p.groups <= 0) {
    throw std::invalid_argument(std::string(op) + ": groups must be positive, got " + std::to_string(p.groups));
  }
  if (wt[0] % p.groups != 0) {
    throw std::invalid_argument(std::string(op) + ": weight " + shape_str(wt) + " has " + std::to_string(wt[0]) +
                                " output channels, which groups " + std::to_string(p.groups) + " does not divide");
  }
  if (in[1] != wt[1] * p.groups) {
    throw std::invalid_argument(std::string(op) + ": expected input with " + std::to_string(wt[1] * p.groups) +
                                " channels (weight " + shape_str(wt) + ", groups " + std::to_string(p.groups) +
                                "), got " + shape_str(in));
  }
  if (wt[2] <= 0 || wt[3] <= 0) {
    throw std::invalid_argument(std::string(op) + ": weight " + shape_str(wt) + " has an empty kernel");
  }
  kernels::Conv2dGeometry g;
  g.batch = in[0];
  g.in_channels = in[1];
  g.in_h = in[2];
  g.in_w = in[3];
  g.out_channels = wt[0];
  g.kernel_h = wt[2];
  g.kernel_w = wt[3];
  g.stride_h = p.stride.h;
  g.stride_w = p.stride.w;
  g.pad_h = p.padding.h;
  g.pad_w = p.padding.w;
  g.dilation_h = p.dilation.h;
  g.dilation_w = p.dilation.w;
  g.groups = p.groups;
  const int64_t padded_h = g.in_h + 2 * g.pad_h, padded_w = g.in_w + 2 * g.pad_w;
  const int64_t span_h = g.dilation_h * (g.kernel_h - 1) + 1, span_w = g.dilation_w * (g.kernel_w - 1) + 1;
  if (span_h > padded_h || span_w > padded_w) {
    std::string dilated = g.dilation_h == 1 && g.dilation_w == 1
                              ? ""
                              : " (" + std::to_string(span_h) + "x" + std::to_string(span_w) + " with dilation " +
                                    pair_str(p.dilation) + ")";
    throw std::invalid_argument(std::string(op) + ": kernel " + std::to_string(g.kernel_h) + "x" +
                                std::to_string(g.kernel_w) + dilated + " is larger than the padded input " +
                                std::to_string(padded_h) + "x" + std::to_string(padded_w) + " (input " +
                                shape_str(in) + ", padding " + pair_str(p.padding) + ")");
  }
  g.out_h = (padded_h - span_h) / g.stride_h + 1;
  g.out_w = (padded_w - span_w) / g.stride_w + 1;
  return g;
}

Shape output_shape(const kernels::Conv2dGeometry& g) { return {g.batch, g.out_channels, g.out_h, g.out_w}; }

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int2 stride, Int2 padding, Int2 dilation,
              int64_t groups) {
  const char* op = "conv2d";
  if (!input.defined() || !weight.defined()) {
    throw std::invalid_argument("conv2d: expected defined input and weight tensors");
  }
  const kernels::Conv2dGeometry g = conv_geometry(input.sizes(), weight.sizes(), {stride, padding, dilation, groups}, op);
  check_same_device_dtype(input, "input", weight, "weight", op);
  check_floating(input, op);
  if (bias.defined()) {
    check_same_device_dtype(input, "input", bias, "bias", op);
    if (bias.dim() != 1 || bias.size(0) != g.out_channels) {
      throw std::invalid_argument("conv2d: expected bias of shape [" + std::to_string(g.out_channels) +
                                  "] (one per output channel of weight " + shape_str(weight.sizes()) + "), got " +
                                  shape_str(bias.sizes()));
    }
  }
  if (detail::conv_widened_on_cpu(input, g)) {
    return detail::narrow_to(conv2d(detail::widen(input), detail::widen(weight), detail::widen(bias), stride, padding,
                                    dilation, groups),
                             input.dtype());
  }
  Tensor x = contiguous(input), w = contiguous(weight);
  Tensor b = bias.defined() ? contiguous(bias) : Tensor();
  Tensor y = empty(output_shape(g), TensorOptions(input.dtype()).device(input.device()));
  if (y.numel() == 0) return y;
  const void* bp = b.defined() ? b.data_ptr_raw() : nullptr;
  run_kernel<kernels::Conv2dForward>(x.device(), x.dtype(), g, x.data_ptr_raw(), w.data_ptr_raw(), bp,
                                     y.data_ptr_raw());
  return y;
}

Conv2dGrads conv2d_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                            const Conv2dParams& params, std::array<bool, 3> output_mask) {
  const char* op = "conv2d_backward";
  if (!grad_output.defined() || !input.defined() || !weight.defined()) {
    throw std::invalid_argument("conv2d_backward: expected defined grad_output, input and weight tensors");
  }
  const kernels::Conv2dGeometry g = conv_geometry(input.sizes(), weight.sizes(), params, op);
  check_same_device_dtype(input, "input", weight, "weight", op);
  check_same_device_dtype(input, "input", grad_output, "grad_output", op);
  check_floating(input, op);
  if (grad_output.sizes() != output_shape(g)) {
    throw std::invalid_argument("conv2d_backward: expected grad_output of shape " + shape_str(output_shape(g)) +
                                " (the output of input " + shape_str(input.sizes()) + " and weight " +
                                shape_str(weight.sizes()) + "), got " + shape_str(grad_output.sizes()));
  }
  if (detail::conv_widened_on_cpu(input, g)) {
    Conv2dGrads g32 = conv2d_backward(detail::widen(grad_output), detail::widen(input), detail::widen(weight), params,
                                      output_mask);
    return {detail::narrow_to(g32.grad_input, input.dtype()), detail::narrow_to(g32.grad_weight, input.dtype()),
            detail::narrow_to(g32.grad_bias, input.dtype())};
  }
  const TensorOptions opts = TensorOptions(input.dtype()).device(input.device());
  Conv2dGrads grads;
  if (output_mask[0]) grads.grad_input = empty(input.sizes(), opts);
  if (output_mask[1]) grads.grad_weight = empty(weight.sizes(), opts);
  if (output_mask[2]) grads.grad_bias = empty({g.out_channels}, opts);
  if (!output_mask[0] && !output_mask[1] && !output_mask[2]) return grads;
  if (input.numel() == 0 || grad_output.numel() == 0) {
    // Nothing flows: an empty batch gives zero weight and bias gradients.
    if (grads.grad_weight.defined()) grads.grad_weight.zero_();
    if (grads.grad_bias.defined()) grads.grad_bias.zero_();
    if (grads.grad_input.defined()) grads.grad_input.zero_();
    return grads;
  }
  Tensor gy = contiguous(grad_output);
  Tensor x = output_mask[1] ? contiguous(input) : Tensor();
  Tensor w = output_mask[0] ? contiguous(weight) : Tensor();
  auto ptr = [](const Tensor& t) -> void* { return t.defined() ? t.data_ptr_raw() : nullptr; };
  run_kernel<kernels::Conv2dBackward>(input.device(), input.dtype(), g, gy.data_ptr_raw(), ptr(x), ptr(w),
                                      ptr(grads.grad_input), ptr(grads.grad_weight), ptr(grads.grad_bias));
  return grads;
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int2 stride, Int2 padding,
                        Int2 output_padding, Int2 dilation, int64_t groups) {
  const char* op = "conv_transpose2d";
  if (!input.defined() || !weight.defined()) {
    throw std::invalid_argument("conv_transpose2d: expected defined input and weight tensors");
  }
  if (input.dim() != 4) {
    throw std::invalid_argument("conv_transpose2d: input must be 4-D (N,C,H,W), got " + shape_str(input.sizes()));
  }
  if (weight.dim() != 4) {
    throw std::invalid_argument("conv_transpose2d: weight must be 4-D (C_in,C_out/groups,kH,kW), got " +
                                shape_str(weight.sizes()));
  }
  check_positive(stride, "stride", op, false);
  check_positive(padding, "padding", op, true);
  check_positive(output_padding, "output_padding", op, true);
  check_same_device_dtype(input, "input", weight, "weight", op);
  check_floating(input, op);
  check_positive(dilation, "dilation", op, false);
  if (groups <= 0) throw std::invalid_argument("conv_transpose2d: groups must be positive, got " + std::to_string(groups));
  // The output is conv2d's input gradient for an input of the output's size, which exists for
  // output_padding < stride only. PyTorch also takes stride <= output_padding < dilation (the extra
  // rows then hold the bias alone); that case is refused here.
  if (output_padding.h >= stride.h || output_padding.w >= stride.w) {
    throw std::invalid_argument("conv_transpose2d: output_padding " + pair_str(output_padding) +
                                " must be smaller than stride " + pair_str(stride) + " in each dim");
  }
  const Shape& in = input.sizes();
  const Shape& wt = weight.sizes();
  if (in[1] != wt[0]) {
    throw std::invalid_argument("conv_transpose2d: expected input with " + std::to_string(wt[0]) +
                                " channels (weight " + shape_str(wt) + " is (C_in,C_out/groups,kH,kW)), got " +
                                shape_str(in));
  }
  if (wt[0] % groups != 0) {
    throw std::invalid_argument("conv_transpose2d: weight " + shape_str(wt) + " has " + std::to_string(wt[0]) +
                                " input channels, which groups " + std::to_string(groups) + " does not divide");
  }
  const int64_t out_h = (in[2] - 1) * stride.h - 2 * padding.h + dilation.h * (wt[2] - 1) + output_padding.h + 1;
  const int64_t out_w = (in[3] - 1) * stride.w - 2 * padding.w + dilation.w * (wt[3] - 1) + output_padding.w + 1;
  if (wt[2] <= 0 || wt[3] <= 0 || out_h <= 0 || out_w <= 0) {
    throw std::invalid_argument("conv_transpose2d: input " + shape_str(in) + ", weight " + shape_str(wt) +
                                ", stride " + pair_str(stride) + ", padding " + pair_str(padding) +
                                ", output_padding " + pair_str(output_padding) + " and dilation " +
                                pair_str(dilation) + " give an empty output " + std::to_string(out_h) + "x" +
                                std::to_string(out_w));
  }
  const Shape out = {in[0], wt[1] * groups, out_h, out_w};
  if (bias.defined()) {
    check_same_device_dtype(input, "input", bias, "bias", op);
    if (bias.dim() != 1 || bias.size(0) != out[1]) {
      throw std::invalid_argument("conv_transpose2d: expected bias of shape [" + std::to_string(out[1]) +
                                  "] (one per output channel of weight " + shape_str(wt) + " with groups " +
                                  std::to_string(groups) + "), got " + shape_str(bias.sizes()));
    }
  }
  if (bias.defined() && detail::widened_on_cpu(input)) {
    // The bias is added after the kernel: a 16-bit result would round twice (the sum, then the
    // sum with the bias). Widened, it rounds once, as conv2d's fused bias does. (On CUDA the add
    // is in the 16-bit dtype, as PyTorch's cuDNN path adds it.)
    return detail::narrow_to(conv_transpose2d(detail::widen(input), detail::widen(weight), detail::widen(bias), stride,
                                              padding, output_padding, dilation, groups),
                             input.dtype());
  }
  // conv2d_backward reads only the shape of its input when it computes the input gradient alone:
  // a stride-0 view of one element stands in for it.
  const Tensor shape_only = expand(empty({}, TensorOptions(input.dtype()).device(input.device())), out);
  Tensor y = conv2d_backward(input, shape_only, weight, {stride, padding, dilation, groups}, {true, false, false})
                 .grad_input;
  if (bias.defined()) binary_(BinaryOp::Add, y, reshape(bias, {1, out[1], 1, 1}));
  return y;
}

}  // namespace colony::raw
