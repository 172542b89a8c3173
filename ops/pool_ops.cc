// Max, average, adaptive average and adaptive max pooling and their backward passes: PyTorch's shape rules and
// checks, then the kernels of kernels/common/pool.h (run_kernel).
#include <stdexcept>
#include <string>

#include "kernels/common/conv_geometry.h"
#include "kernels/common/pool.h"
#include "ops/cpu_widen.h"
#include "ops/op_checks.h"
#include "ops/pool_shape.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

std::string pair_str(Int2 p) { return "(" + std::to_string(p.h) + ", " + std::to_string(p.w) + ")"; }

void check_input(const Tensor& t, const char* op) {
  check_defined(t, op);
  const Shape& s = t.sizes();
  if (s.size() != 3 && s.size() != 4) {
    throw std::invalid_argument(std::string(op) + ": input must be 3-D (C,H,W) or 4-D (N,C,H,W), got " + shape_str(s));
  }
  // Only the batch may be empty, as in PyTorch.
  for (size_t d = s.size() - 3; d < s.size(); ++d) {
    if (s[d] == 0) {
      throw std::invalid_argument(std::string(op) + ": expected non-empty channel and spatial dims, got input " +
                                  shape_str(s));
    }
  }
  check_floating(t, op);
}

void check_shape_arg(const Shape& s, const char* op) {
  if (s.size() != 3 && s.size() != 4) {
    throw std::invalid_argument(std::string(op) + ": input_shape must be 3-D (C,H,W) or 4-D (N,C,H,W), got " +
                                shape_str(s));
  }
}

using detail::pooled_size;

kernels::Pool2dGeometry pool_geometry(const Shape& in, Int2 kernel, std::optional<Int2> stride_opt, Int2 padding,
                                      Int2 dilation, bool ceil_mode, const char* op) {
  const Int2 stride = stride_opt.value_or(kernel);
  if (kernel.h <= 0 || kernel.w <= 0) {
    throw std::invalid_argument(std::string(op) + ": kernel_size must be positive, got " + pair_str(kernel));
  }
  if (stride.h <= 0 || stride.w <= 0) {
    throw std::invalid_argument(std::string(op) + ": stride must be positive, got " + pair_str(stride));
  }
  if (dilation.h <= 0 || dilation.w <= 0) {
    throw std::invalid_argument(std::string(op) + ": dilation must be positive, got " + pair_str(dilation));
  }
  if (padding.h < 0 || padding.w < 0) {
    throw std::invalid_argument(std::string(op) + ": padding must be non-negative, got " + pair_str(padding));
  }
  if (2 * padding.h > kernel.h || 2 * padding.w > kernel.w) {
    throw std::invalid_argument(std::string(op) + ": padding " + pair_str(padding) +
                                " must be at most half of kernel_size " + pair_str(kernel));
  }
  kernels::Pool2dGeometry g;
  const size_t nd = in.size();
  g.planes = nd == 4 ? in[0] * in[1] : in[0];
  g.in_h = in[nd - 2];
  g.in_w = in[nd - 1];
  g.kernel_h = kernel.h;
  g.kernel_w = kernel.w;
  g.stride_h = stride.h;
  g.stride_w = stride.w;
  g.pad_h = padding.h;
  g.pad_w = padding.w;
  g.dilation_h = dilation.h;
  g.dilation_w = dilation.w;
  g.out_h = pooled_size(g.in_h, kernel.h, padding.h, stride.h, dilation.h, ceil_mode);
  g.out_w = pooled_size(g.in_w, kernel.w, padding.w, stride.w, dilation.w, ceil_mode);
  if (g.out_h < 1 || g.out_w < 1) {
    throw std::invalid_argument(std::string(op) + ": input " + shape_str(in) + " is too small for kernel_size " +
                                pair_str(kernel) + " (stride " + pair_str(stride) + ", padding " + pair_str(padding) +
                                ", dilation " + pair_str(dilation) + "): the output would be " +
                                std::to_string(g.out_h) + "x" + std::to_string(g.out_w));
  }
  return g;
}

Shape with_spatial(const Shape& in, int64_t h, int64_t w) {
  Shape out = in;
  out[out.size() - 2] = h;
  out[out.size() - 1] = w;
  return out;
}

void check_grad(const Tensor& grad, const Shape& expected, const char* op) {
  check_defined(grad, op, "grad_output");
  if (grad.sizes() != expected) {
    throw std::invalid_argument(std::string(op) + ": expected grad_output of shape " + shape_str(expected) +
                                ", got " + shape_str(grad.sizes()));
  }
}

}  // namespace

MaxPool2dResult max_pool2d(const Tensor& input, Int2 kernel_size, std::optional<Int2> stride, Int2 padding,
                           Int2 dilation, bool ceil_mode) {
  const char* op = "max_pool2d";
  check_input(input, op);
  const kernels::Pool2dGeometry g = pool_geometry(input.sizes(), kernel_size, stride, padding, dilation, ceil_mode, op);
  const Shape out_shape = with_spatial(input.sizes(), g.out_h, g.out_w);
  if (detail::widened_on_cpu(input) && input.dtype() != kBFloat16) {  // bfloat16: kernels/common/pool.h
    MaxPool2dResult r = max_pool2d(detail::widen(input), kernel_size, stride, padding, dilation, ceil_mode);
    r.output = detail::narrow_to(r.output, input.dtype());
    return r;
  }
  MaxPool2dResult r;
  r.output = empty(out_shape, TensorOptions(input.dtype()).device(input.device()));
  r.indices = empty(out_shape, TensorOptions(kInt64).device(input.device()));
  if (r.output.numel() == 0) return r;
  Tensor x = contiguous(input);
  run_kernel<kernels::MaxPool2dForward>(x.device(), x.dtype(), g, x.data_ptr_raw(), r.output.data_ptr_raw(),
                                        r.indices.data_ptr<int64_t>());
  return r;
}

Tensor max_pool2d_backward(const Tensor& grad_output, const Tensor& indices, const Shape& input_shape,
                           bool windows_overlap) {
  const char* op = "max_pool2d_backward";
  check_shape_arg(input_shape, op);
  if (!grad_output.defined() || !indices.defined()) {
    throw std::invalid_argument("max_pool2d_backward: expected defined grad_output and indices");
  }
  if (indices.dtype() != kInt64) {
    throw std::invalid_argument(std::string("max_pool2d_backward: expected int64 indices, got ") +
                                dtype_name(indices.dtype()));
  }
  if (indices.device() != grad_output.device()) {
    throw std::invalid_argument("max_pool2d_backward: grad_output is on " + grad_output.device().str() +
                                " but indices are on " + indices.device().str());
  }
  if (indices.dim() != static_cast<int64_t>(input_shape.size())) {
    throw std::invalid_argument("max_pool2d_backward: indices " + shape_str(indices.sizes()) +
                                " do not match input_shape " + shape_str(input_shape));
  }
  const Shape out_shape = indices.sizes();
  for (size_t d = 0; d + 2 < input_shape.size(); ++d) {
    if (out_shape[d] != input_shape[d]) {
      throw std::invalid_argument("max_pool2d_backward: indices " + shape_str(out_shape) +
                                  " do not match input_shape " + shape_str(input_shape) + " outside the last two dims");
    }
  }
  check_grad(grad_output, out_shape, op);
  if (detail::widened_on_cpu(grad_output) && grad_output.dtype() != kBFloat16) {
    return detail::narrow_to(max_pool2d_backward(detail::widen(grad_output), indices, input_shape, windows_overlap),
                             grad_output.dtype());
  }
  kernels::Pool2dGeometry g;
  const size_t nd = input_shape.size();
  g.planes = nd == 4 ? input_shape[0] * input_shape[1] : input_shape[0];
  g.in_h = input_shape[nd - 2];
  g.in_w = input_shape[nd - 1];
  g.out_h = out_shape[nd - 2];
  g.out_w = out_shape[nd - 1];
  // The kernel reads from the window's geometry only whether windows can overlap: a 2-wide window
  // at stride 1 can, the default 1-wide one at stride 1 cannot.
  if (windows_overlap) g.kernel_h = g.kernel_w = 2;
  Tensor gx = empty(input_shape, TensorOptions(grad_output.dtype()).device(grad_output.device()));
  check_input(gx, op);
  if (gx.numel() == 0) return gx;
  Tensor gy = contiguous(grad_output), idx = contiguous(indices);
  run_kernel<kernels::MaxPool2dBackward>(gy.device(), gy.dtype(), g, gy.data_ptr_raw(), idx.data_ptr<int64_t>(),
                                         gx.data_ptr_raw());
  return gx;
}

Tensor avg_pool2d(const Tensor& input, Int2 kernel_size, std::optional<Int2> stride, Int2 padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  check_input(input, op);
  if (divisor_override && *divisor_override == 0) {
    throw std::invalid_argument("avg_pool2d: divisor_override must not be zero");
  }
  const kernels::Pool2dGeometry g = pool_geometry(input.sizes(), kernel_size, stride, padding, 1, ceil_mode, op);
  if (detail::widened_on_cpu(input)) {
    return detail::narrow_to(avg_pool2d(detail::widen(input), kernel_size, stride, padding, ceil_mode,
                                        count_include_pad, divisor_override),
                             input.dtype());
  }
  Tensor y = empty(with_spatial(input.sizes(), g.out_h, g.out_w), TensorOptions(input.dtype()).device(input.device()));
  if (y.numel() == 0) return y;
  Tensor x = contiguous(input);
  const int64_t divisor = divisor_override.value_or(0);
  run_kernel<kernels::AvgPool2dForward>(x.device(), x.dtype(), g, count_include_pad, divisor, x.data_ptr_raw(),
                                        y.data_ptr_raw());
  return y;
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Shape& input_shape, Int2 kernel_size,
                           std::optional<Int2> stride, Int2 padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d_backward";
  check_shape_arg(input_shape, op);
  if (divisor_override && *divisor_override == 0) {
    throw std::invalid_argument("avg_pool2d_backward: divisor_override must not be zero");
  }
  const kernels::Pool2dGeometry g = pool_geometry(input_shape, kernel_size, stride, padding, 1, ceil_mode, op);
  check_grad(grad_output, with_spatial(input_shape, g.out_h, g.out_w), op);
  if (detail::widened_on_cpu(grad_output)) {
    return detail::narrow_to(avg_pool2d_backward(detail::widen(grad_output), input_shape, kernel_size, stride, padding,
                                                 ceil_mode, count_include_pad, divisor_override),
                             grad_output.dtype());
  }
  Tensor gx = empty(input_shape, TensorOptions(grad_output.dtype()).device(grad_output.device()));
  check_input(gx, op);
  if (gx.numel() == 0) return gx;
  Tensor gy = contiguous(grad_output);
  const int64_t divisor = divisor_override.value_or(0);
  run_kernel<kernels::AvgPool2dBackward>(gy.device(), gy.dtype(), g, count_include_pad, divisor, gy.data_ptr_raw(),
                                         gx.data_ptr_raw());
  return gx;
}

namespace {

kernels::Pool2dGeometry adaptive_geometry(const Shape& in, Int2 output_size, const char* op) {
  if (output_size.h < 0 || output_size.w < 0) {
    throw std::invalid_argument(std::string(op) + ": output_size must be non-negative, got " + pair_str(output_size));
  }
  kernels::Pool2dGeometry g;
  const size_t nd = in.size();
  g.planes = nd == 4 ? in[0] * in[1] : in[0];
  g.in_h = in[nd - 2];
  g.in_w = in[nd - 1];
  g.out_h = output_size.h;
  g.out_w = output_size.w;
  return g;
}

}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& input, Int2 output_size) {
  const char* op = "adaptive_avg_pool2d";
  check_input(input, op);
  const kernels::Pool2dGeometry g = adaptive_geometry(input.sizes(), output_size, op);
  if (detail::widened_on_cpu(input)) {
    return detail::narrow_to(adaptive_avg_pool2d(detail::widen(input), output_size), input.dtype());
  }
  Tensor y = empty(with_spatial(input.sizes(), g.out_h, g.out_w), TensorOptions(input.dtype()).device(input.device()));
  if (y.numel() == 0) return y;
  Tensor x = contiguous(input);
  run_kernel<kernels::AdaptiveAvgPool2dForward>(x.device(), x.dtype(), g, x.data_ptr_raw(), y.data_ptr_raw());
  return y;
}

MaxPool2dResult adaptive_max_pool2d(const Tensor& input, Int2 output_size) {
  const char* op = "adaptive_max_pool2d";
  check_input(input, op);
  const kernels::Pool2dGeometry g = adaptive_geometry(input.sizes(), output_size, op);
  if (detail::widened_on_cpu(input)) {
    MaxPool2dResult r = adaptive_max_pool2d(detail::widen(input), output_size);
    r.output = detail::narrow_to(r.output, input.dtype());  // a maximum is one of the inputs: exact
    return r;
  }
  const Shape out_shape = with_spatial(input.sizes(), g.out_h, g.out_w);
  MaxPool2dResult r;
  r.output = empty(out_shape, TensorOptions(input.dtype()).device(input.device()));
  r.indices = empty(out_shape, TensorOptions(kInt64).device(input.device()));
  if (r.output.numel() == 0) return r;
  Tensor x = contiguous(input);
  run_kernel<kernels::AdaptiveMaxPool2dForward>(x.device(), x.dtype(), g, x.data_ptr_raw(), r.output.data_ptr_raw(),
                                                r.indices.data_ptr<int64_t>());
  return r;
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Shape& input_shape) {
  const char* op = "adaptive_avg_pool2d_backward";
  check_shape_arg(input_shape, op);
  if (!grad_output.defined() || grad_output.dim() != static_cast<int64_t>(input_shape.size())) {
    throw std::invalid_argument(std::string(op) + ": expected grad_output with as many dims as input_shape " +
                                shape_str(input_shape) + ", got " +
                                (grad_output.defined() ? shape_str(grad_output.sizes()) : std::string("undefined")));
  }
  const size_t nd = input_shape.size();
  const kernels::Pool2dGeometry g =
      adaptive_geometry(input_shape, {grad_output.size(nd - 2), grad_output.size(nd - 1)}, op);
  check_grad(grad_output, with_spatial(input_shape, g.out_h, g.out_w), op);
  if (detail::widened_on_cpu(grad_output)) {
    return detail::narrow_to(adaptive_avg_pool2d_backward(detail::widen(grad_output), input_shape),
                             grad_output.dtype());
  }
  Tensor gx = empty(input_shape, TensorOptions(grad_output.dtype()).device(grad_output.device()));
  check_input(gx, op);
  if (gx.numel() == 0) return gx;
  if (grad_output.numel() == 0) return gx.zero_();
  Tensor gy = contiguous(grad_output);
  run_kernel<kernels::AdaptiveAvgPool2dBackward>(gy.device(), gy.dtype(), g, gy.data_ptr_raw(), gx.data_ptr_raw());
  return gx;
}

}  // namespace colony::raw
