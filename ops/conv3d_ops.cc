// conv3d, its backward and conv_transpose3d: argument checks in torch's words, then the kernels of
// kernels/common/conv.h (vol2col and GEMM on the CPU, cuDNN on CUDA) through run_kernel.
#include <stdexcept>
#include <string>

#include "kernels/common/conv.h"
#include "kernels/common/conv_geometry.h"
#include "ops/cpu_widen.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

std::string triple_str(Int3 v, const char* sep = ", ") {
  return "(" + std::to_string(v.d) + sep + std::to_string(v.h) + sep + std::to_string(v.w) + ")";
}

// torch's convolution parameter checks ("non-positive stride is not supported", ...).
void check_params(Int3 stride, Int3 padding, Int3 dilation, int64_t groups, const char* op) {
  auto positive = [](Int3 v) { return v.d > 0 && v.h > 0 && v.w > 0; };
  if (!positive(stride)) {
    throw std::invalid_argument(std::string(op) + ": non-positive stride is not supported, got stride " +
                                triple_str(stride));
  }
  if (padding.d < 0 || padding.h < 0 || padding.w < 0) {
    throw std::invalid_argument(std::string(op) + ": negative padding is not supported, got padding " +
                                triple_str(padding));
  }
  if (!positive(dilation)) {
    throw std::invalid_argument(std::string(op) + ": non-positive dilation is not supported, got dilation " +
                                triple_str(dilation));
  }
  if (groups <= 0) {
    throw std::invalid_argument(std::string(op) + ": non-positive groups is not supported, got groups " +
                                std::to_string(groups));
  }
}

void check_ranks(const Shape& in, const Shape& wt, const char* op) {
  if (in.size() != 5) {
    throw std::invalid_argument(std::string(op) + ": Expected 5D (batched) input to " + op +
                                ", but got input of size: " + shape_str(in));
  }
  if (wt.size() != 5) {
    throw std::invalid_argument(std::string(op) + ": expected a 5-D weight, got weight of size: " + shape_str(wt));
  }
}

void check_groups_divide(const Shape& wt, int64_t groups, const char* op) {
  if (wt[0] % groups != 0) {
    throw std::invalid_argument(std::string(op) + ": Given groups=" + std::to_string(groups) +
                                ", expected weight to be divisible by " + std::to_string(groups) +
                                " at dimension 0, but got weight of size " + shape_str(wt) + " instead");
  }
}

void check_bias(const Tensor& input, const Tensor& bias, const Shape& wt, int64_t out_channels, const char* op) {
  if (!bias.defined()) return;
  check_same_device_dtype(input, "input", bias, "bias", op);
  if (bias.dim() != 1 || bias.size(0) != out_channels) {
    throw std::invalid_argument(std::string(op) + ": Given weight of size " + shape_str(wt) +
                                ", expected bias to be 1-dimensional with " + std::to_string(out_channels) +
                                " elements, but got bias of size " + shape_str(bias.sizes()) + " instead");
  }
}

// Checks everything about the shapes and parameters and returns the kernels' view of them.
kernels::Conv3dGeometry conv3d_geometry(const Shape& in, const Shape& wt, const Conv3dParams& p, const char* op) {
  check_ranks(in, wt, op);
  check_params(p.stride, p.padding, p.dilation, p.groups, op);
  check_groups_divide(wt, p.groups, op);
  if (in[1] != wt[1] * p.groups) {
    throw std::invalid_argument(std::string(op) + ": Given groups=" + std::to_string(p.groups) + ", weight of size " +
                                shape_str(wt) + ", expected input" + shape_str(in) + " to have " +
                                std::to_string(wt[1] * p.groups) + " channels, but got " + std::to_string(in[1]) +
                                " channels instead");
  }
  kernels::Conv3dGeometry g;
  g.batch = in[0];
  g.in_channels = in[1];
  g.in_d = in[2];
  g.in_h = in[3];
  g.in_w = in[4];
  g.out_channels = wt[0];
  g.kernel_d = wt[2];
  g.kernel_h = wt[3];
  g.kernel_w = wt[4];
  g.stride_d = p.stride.d;
  g.stride_h = p.stride.h;
  g.stride_w = p.stride.w;
  g.pad_d = p.padding.d;
  g.pad_h = p.padding.h;
  g.pad_w = p.padding.w;
  g.dilation_d = p.dilation.d;
  g.dilation_h = p.dilation.h;
  g.dilation_w = p.dilation.w;
  g.groups = p.groups;
  const Int3 padded(g.in_d + 2 * g.pad_d, g.in_h + 2 * g.pad_h, g.in_w + 2 * g.pad_w);
  const Int3 span(g.dilation_d * (g.kernel_d - 1) + 1, g.dilation_h * (g.kernel_h - 1) + 1,
                  g.dilation_w * (g.kernel_w - 1) + 1);
  if (wt[2] <= 0 || wt[3] <= 0 || wt[4] <= 0 || span.d > padded.d || span.h > padded.h || span.w > padded.w) {
    throw std::invalid_argument(std::string(op) + ": Calculated padded input size per channel: " +
                                triple_str(padded, " x ") + ". Kernel size: " + triple_str(span, " x ") +
                                ". Kernel size can't be greater than actual input size");
  }
  g.out_d = (padded.d - span.d) / g.stride_d + 1;
  g.out_h = (padded.h - span.h) / g.stride_h + 1;
  g.out_w = (padded.w - span.w) / g.stride_w + 1;
  return g;
}

Shape output_shape(const kernels::Conv3dGeometry& g) {
  return {g.batch, g.out_channels, g.out_d, g.out_h, g.out_w};
}

void check_defined_operands(const Tensor& input, const Tensor& weight, const char* op) {
  if (!input.defined() || !weight.defined()) {
    throw std::invalid_argument(std::string(op) + ": expected defined input and weight tensors");
  }
}

}  // namespace

Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int3 stride, Int3 padding, Int3 dilation,
              int64_t groups) {
  const char* op = "conv3d";
  check_defined_operands(input, weight, op);
  const kernels::Conv3dGeometry g =
      conv3d_geometry(input.sizes(), weight.sizes(), {stride, padding, dilation, groups}, op);
  check_same_device_dtype(input, "input", weight, "weight", op);
  check_floating(input, op);
  check_bias(input, bias, weight.sizes(), g.out_channels, op);
  if (detail::widened_on_cpu(input)) {
    return detail::narrow_to(conv3d(detail::widen(input), detail::widen(weight), detail::widen(bias), stride, padding,
                                    dilation, groups),
                             input.dtype());
  }
  Tensor x = contiguous(input), w = contiguous(weight);
  Tensor b = bias.defined() ? contiguous(bias) : Tensor();
  Tensor y = empty(output_shape(g), TensorOptions(input.dtype()).device(input.device()));
  if (y.numel() == 0) return y;
  const void* bp = b.defined() ? b.data_ptr_raw() : nullptr;
  run_kernel<kernels::Conv3dForward>(x.device(), x.dtype(), g, x.data_ptr_raw(), w.data_ptr_raw(), bp,
                                     y.data_ptr_raw());
  return y;
}

Conv2dGrads conv3d_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                            const Conv3dParams& params, std::array<bool, 3> output_mask) {
  const char* op = "conv3d_backward";
  check_defined_operands(input, weight, op);
  if (!grad_output.defined()) throw std::invalid_argument("conv3d_backward: expected a defined grad_output");
  const kernels::Conv3dGeometry g = conv3d_geometry(input.sizes(), weight.sizes(), params, op);
  check_same_device_dtype(input, "input", weight, "weight", op);
  check_same_device_dtype(input, "input", grad_output, "grad_output", op);
  check_floating(input, op);
  if (grad_output.sizes() != output_shape(g)) {
    throw std::invalid_argument("conv3d_backward: expected grad_output of shape " + shape_str(output_shape(g)) +
                                " (the output of input " + shape_str(input.sizes()) + " and weight " +
                                shape_str(weight.sizes()) + "), got " + shape_str(grad_output.sizes()));
  }
  if (detail::widened_on_cpu(input)) {
    Conv2dGrads g32 = conv3d_backward(detail::widen(grad_output), detail::widen(input), detail::widen(weight), params,
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
    for (Tensor* t : {&grads.grad_input, &grads.grad_weight, &grads.grad_bias})
      if (t->defined()) t->zero_();
    return grads;
  }
  Tensor gy = contiguous(grad_output);
  Tensor x = output_mask[1] ? contiguous(input) : Tensor();
  Tensor w = output_mask[0] ? contiguous(weight) : Tensor();
  auto ptr = [](const Tensor& t) -> void* { return t.defined() ? t.data_ptr_raw() : nullptr; };
  run_kernel<kernels::Conv3dBackward>(input.device(), input.dtype(), g, gy.data_ptr_raw(), ptr(x), ptr(w),
                                      ptr(grads.grad_input), ptr(grads.grad_weight), ptr(grads.grad_bias));
  return grads;
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int3 stride, Int3 padding,
                        Int3 output_padding, Int3 dilation, int64_t groups) {
  const char* op = "conv_transpose3d";
  check_defined_operands(input, weight, op);
  const Shape& in = input.sizes();
  const Shape& wt = weight.sizes();
  check_ranks(in, wt, op);
  check_params(stride, padding, dilation, groups, op);
  if (output_padding.d < 0 || output_padding.h < 0 || output_padding.w < 0) {
    throw std::invalid_argument("conv_transpose3d: negative output_padding is not supported, got output_padding " +
                                triple_str(output_padding));
  }
  // The output is conv3d's input gradient for an input of the output's size, which exists for
  // output_padding < stride only. torch also takes stride <= output_padding < dilation; refused here
  // (as conv_transpose2d does).
  if (output_padding.d >= stride.d || output_padding.h >= stride.h || output_padding.w >= stride.w) {
    throw std::invalid_argument("conv_transpose3d: output padding must be smaller than stride, but got output_padding " +
                                triple_str(output_padding) + " and stride " + triple_str(stride) +
                                " (torch also takes output_padding < dilation; Colony does not)");
  }
  check_same_device_dtype(input, "input", weight, "weight", op);
  check_floating(input, op);
  check_groups_divide(wt, groups, op);
  if (in[1] != wt[0]) {
    throw std::invalid_argument("conv_transpose3d: Given transposed=1, weight of size " + shape_str(wt) +
                                ", expected input" + shape_str(in) + " to have " + std::to_string(wt[0]) +
                                " channels, but got " + std::to_string(in[1]) + " channels instead");
  }
  const int64_t out_d = (in[2] - 1) * stride.d - 2 * padding.d + dilation.d * (wt[2] - 1) + output_padding.d + 1;
  const int64_t out_h = (in[3] - 1) * stride.h - 2 * padding.h + dilation.h * (wt[3] - 1) + output_padding.h + 1;
  const int64_t out_w = (in[4] - 1) * stride.w - 2 * padding.w + dilation.w * (wt[4] - 1) + output_padding.w + 1;
  if (wt[2] <= 0 || wt[3] <= 0 || wt[4] <= 0 || out_d <= 0 || out_h <= 0 || out_w <= 0) {
    throw std::invalid_argument("conv_transpose3d: input " + shape_str(in) + ", weight " + shape_str(wt) +
                                ", stride " + triple_str(stride) + ", padding " + triple_str(padding) +
                                ", output_padding " + triple_str(output_padding) + " and dilation " +
                                triple_str(dilation) + " give an empty output " +
                                triple_str(Int3(out_d, out_h, out_w), "x"));
  }
  const Shape out = {in[0], wt[1] * groups, out_d, out_h, out_w};
  check_bias(input, bias, wt, out[1], op);
  if (bias.defined() && detail::widened_on_cpu(input)) {
    // The bias is added after the kernel: widened, a 16-bit result rounds once (conv_transpose2d).
    return detail::narrow_to(conv_transpose3d(detail::widen(input), detail::widen(weight), detail::widen(bias), stride,
                                              padding, output_padding, dilation, groups),
                             input.dtype());
  }
  // conv3d_backward reads only the shape of its input when it computes the input gradient alone:
  // a stride-0 view of one element stands in for it.
  const Tensor shape_only = expand(empty({}, TensorOptions(input.dtype()).device(input.device())), out);
  Tensor y = conv3d_backward(input, shape_only, weight, {stride, padding, dilation, groups}, {true, false, false})
                 .grad_input;
  if (bias.defined()) binary_(BinaryOp::Add, y, reshape(bias, {1, out[1], 1, 1, 1}));
  return y;
}

}  // namespace colony::raw
