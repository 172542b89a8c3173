// 3-D max, average, adaptive average and adaptive max pooling, and fractional max pooling (2-D and
// 3-D): torch's shape rules, checks and messages, then the kernels of kernels/common/pool.h
// (run_kernel). CPU float16/bfloat16 are widened to float32 (ops/cpu_widen.h).
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/pool.h"
#include "ops/cpu_widen.h"
#include "ops/op_checks.h"
#include "ops/pool_shape.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

std::string list_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// torch's check that only the batch dim may be empty: "<op>: Expected input to have non-zero size
// for non-batch dimensions, but input has sizes [2, 0, 4, 5, 6] with dimension 1 being empty".
void check_non_batch_non_empty(const Shape& s, size_t unbatched_dims, const std::string& op) {
  for (size_t d = s.size() == unbatched_dims ? 0 : 1; d < s.size(); ++d) {
    if (s[d] == 0) {
      throw std::invalid_argument(op + ": Expected input to have non-zero size for non-batch dimensions, but input "
                                  "has sizes " + list_str(s) + " with dimension " + std::to_string(d) +
                                  " being empty");
    }
  }
}

// [N, C, D, H, W] or [C, D, H, W], floating, only the batch empty.
void check_volume_input(const Tensor& t, const char* op, const std::string& rank_message) {
  check_defined(t, op);
  if (t.dim() != 4 && t.dim() != 5) throw std::invalid_argument(std::string(op) + ": " + rank_message);
  check_non_batch_non_empty(t.sizes(), 4, op);
  check_floating(t, op);
}

Shape with_volume(const Shape& in, int64_t d, int64_t h, int64_t w) {
  Shape out = in;
  const size_t n = out.size();
  out[n - 3] = d;
  out[n - 2] = h;
  out[n - 1] = w;
  return out;
}

kernels::Pool3dGeometry sizes_geometry(const Shape& in) {
  kernels::Pool3dGeometry g;
  const size_t nd = in.size();
  g.planes = nd == 5 ? in[0] * in[1] : in[0];
  g.in_d = in[nd - 3];
  g.in_h = in[nd - 2];
  g.in_w = in[nd - 1];
  return g;
}

// torch's pool3d_shape_check (max_pool3d, avg_pool3d; avg_pool3d also checks that the input is
// at least the kernel), in its words.
kernels::Pool3dGeometry pool3d_geometry(const Shape& in, Int3 k, std::optional<Int3> stride_opt, Int3 pad, Int3 dil,
                                        bool ceil_mode, bool check_input_size, const char* op) {
  const std::string o = op;
  const Int3 s = stride_opt.value_or(k);
  if (k.d <= 0 || k.h <= 0 || k.w <= 0) {
    throw std::invalid_argument(o + ": kernel size should be greater than zero, but got kT: " + std::to_string(k.d) +
                                " kH: " + std::to_string(k.h) + " kW: " + std::to_string(k.w));
  }
  if (s.d == 0 || s.h == 0 || s.w == 0) throw std::invalid_argument(o + ": stride should not be zero");
  if (s.d < 0 || s.h < 0 || s.w < 0) {
    throw std::invalid_argument(o + ": stride should be greater than zero, but got dT: " + std::to_string(s.d) +
                                " dH: " + std::to_string(s.h) + " dW: " + std::to_string(s.w));
  }
  if (dil.d <= 0 || dil.h <= 0 || dil.w <= 0) {
    throw std::invalid_argument(o + ": dilation should be greater than zero, but got dilationT: " +
                                std::to_string(dil.d) + " dilationH: " + std::to_string(dil.h) +
                                " dilationW: " + std::to_string(dil.w));
  }
  for (int64_t p : {pad.d, pad.h, pad.w}) {
    if (p < 0) throw std::invalid_argument(o + ": pad must be non-negative, but got pad: " + std::to_string(p));
  }
  kernels::Pool3dGeometry g = sizes_geometry(in);
  if (check_input_size && (g.in_d < k.d || g.in_h < k.h || g.in_w < k.w)) {
    throw std::invalid_argument(o + ": input image (T: " + std::to_string(g.in_d) + " H: " + std::to_string(g.in_h) +
                                " W: " + std::to_string(g.in_w) + ") smaller than kernel size (kT: " +
                                std::to_string(k.d) + " kH: " + std::to_string(k.h) + " kW: " + std::to_string(k.w) +
                                ")");
  }
  const int64_t ks[3] = {k.d, k.h, k.w}, ps[3] = {pad.d, pad.h, pad.w}, ds[3] = {dil.d, dil.h, dil.w};
  for (int i = 0; i < 3; ++i) {
    if (ps[i] > ((ks[i] - 1) * ds[i] + 1) / 2) {
      throw std::invalid_argument(o + ": pad should be at most half of effective kernel size, but got pad=" +
                                  std::to_string(ps[i]) + ", kernel_size=" + std::to_string(ks[i]) +
                                  " and dilation=" + std::to_string(ds[i]));
    }
  }
  g.kernel_d = k.d;
  g.kernel_h = k.h;
  g.kernel_w = k.w;
  g.stride_d = s.d;
  g.stride_h = s.h;
  g.stride_w = s.w;
  g.pad_d = pad.d;
  g.pad_h = pad.h;
  g.pad_w = pad.w;
  g.dilation_d = dil.d;
  g.dilation_h = dil.h;
  g.dilation_w = dil.w;
  g.out_d = detail::pooled_size(g.in_d, k.d, pad.d, s.d, dil.d, ceil_mode);
  g.out_h = detail::pooled_size(g.in_h, k.h, pad.h, s.h, dil.h, ceil_mode);
  g.out_w = detail::pooled_size(g.in_w, k.w, pad.w, s.w, dil.w, ceil_mode);
  if (g.out_d < 1 || g.out_h < 1 || g.out_w < 1) {
    const int64_t c = in[in.size() - 4];
    throw std::invalid_argument(o + ": Given input size: (" + std::to_string(c) + "x" + std::to_string(g.in_d) + "x" +
                                std::to_string(g.in_h) + "x" + std::to_string(g.in_w) + "). Calculated output size: (" +
                                std::to_string(c) + "x" + std::to_string(g.out_d) + "x" + std::to_string(g.out_h) +
                                "x" + std::to_string(g.out_w) + "). Output size is too small");
  }
  return g;
}

const char* kPool3dRank = "non-empty 4D or 5D (batch mode) tensor expected for input";

void check_grad(const Tensor& grad, const Shape& expected, const char* op) {
  check_defined(grad, op, "grad_output");
  if (grad.sizes() != expected) {
    throw std::invalid_argument(std::string(op) + ": expected grad_output of shape " + shape_str(expected) +
                                ", got " + shape_str(grad.sizes()));
  }
}

void check_shape_arg(const Shape& s, const char* op) {
  if (s.size() != 4 && s.size() != 5) {
    throw std::invalid_argument(std::string(op) + ": input_shape must be 4-D (C,D,H,W) or 5-D (N,C,D,H,W), got " +
                                shape_str(s));
  }
}

// The output and indices of a max pooling kernel over `input`, allocated and run.
template <typename Kernel, typename... Args>
MaxPool2dResult run_max(const Tensor& input, const kernels::Pool3dGeometry& g, Args... args) {
  const Shape out_shape = with_volume(input.sizes(), g.out_d, g.out_h, g.out_w);
  MaxPool2dResult r;
  r.output = empty(out_shape, TensorOptions(input.dtype()).device(input.device()));
  r.indices = empty(out_shape, TensorOptions(kInt64).device(input.device()));
  if (r.output.numel() == 0) return r;
  Tensor x = contiguous(input);
  run_kernel<Kernel>(x.device(), x.dtype(), g, args..., x.data_ptr_raw(), r.output.data_ptr_raw(),
                     r.indices.data_ptr<int64_t>());
  return r;
}

}  // namespace

MaxPool2dResult max_pool3d(const Tensor& input, Int3 kernel_size, std::optional<Int3> stride, Int3 padding,
                           Int3 dilation, bool ceil_mode) {
  const char* op = "max_pool3d";
  check_volume_input(input, op, kPool3dRank);
  const kernels::Pool3dGeometry g =
      pool3d_geometry(input.sizes(), kernel_size, stride, padding, dilation, ceil_mode, false, op);
  if (detail::widened_on_cpu(input)) {
    MaxPool2dResult r = max_pool3d(detail::widen(input), kernel_size, stride, padding, dilation, ceil_mode);
    r.output = detail::narrow_to(r.output, input.dtype());  // a maximum is one of the inputs: exact
    return r;
  }
  return run_max<kernels::MaxPool3dForward>(input, g);
}

Tensor max_pool3d_backward(const Tensor& grad_output, const Tensor& indices, const Shape& input_shape) {
  check_shape_arg(input_shape, "max_pool3d_backward");
  if (!grad_output.defined() || !indices.defined() || grad_output.dim() != indices.dim() ||
      indices.dim() != static_cast<int64_t>(input_shape.size())) {
    throw std::invalid_argument("max_pool3d_backward: expected grad_output and indices of " +
                                std::to_string(input_shape.size()) + " dims (input_shape " + shape_str(input_shape) +
                                ")");
  }
  // Every volume is a plane of D * H rows of W: the 2-D scatter with the same flat indices.
  auto planes = [](const Shape& s) {
    Shape r(s.begin(), s.end() - 3);
    r.push_back(s[s.size() - 3] * s[s.size() - 2]);
    r.push_back(s.back());
    return r;
  };
  const Tensor g = reshape(grad_output, planes(grad_output.sizes()));
  const Tensor i = reshape(indices, planes(indices.sizes()));
  return reshape(max_pool2d_backward(g, i, planes(input_shape), /*windows_overlap=*/true), input_shape);
}

Tensor avg_pool3d(const Tensor& input, Int3 kernel_size, std::optional<Int3> stride, Int3 padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool3d";
  check_volume_input(input, op, kPool3dRank);
  if (divisor_override && *divisor_override == 0) throw std::invalid_argument("avg_pool3d: divisor must be not zero");
  const kernels::Pool3dGeometry g =
      pool3d_geometry(input.sizes(), kernel_size, stride, padding, 1, ceil_mode, true, op);
  if (detail::widened_on_cpu(input)) {
    return detail::narrow_to(avg_pool3d(detail::widen(input), kernel_size, stride, padding, ceil_mode,
                                        count_include_pad, divisor_override),
                             input.dtype());
  }
  Tensor y = empty(with_volume(input.sizes(), g.out_d, g.out_h, g.out_w),
                   TensorOptions(input.dtype()).device(input.device()));
  if (y.numel() == 0) return y;
  Tensor x = contiguous(input);
  run_kernel<kernels::AvgPool3dForward>(x.device(), x.dtype(), g, count_include_pad, divisor_override.value_or(0),
                                        x.data_ptr_raw(), y.data_ptr_raw());
  return y;
}

Tensor avg_pool3d_backward(const Tensor& grad_output, const Shape& input_shape, Int3 kernel_size,
                           std::optional<Int3> stride, Int3 padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool3d_backward";
  check_shape_arg(input_shape, op);
  if (divisor_override && *divisor_override == 0) {
    throw std::invalid_argument("avg_pool3d_backward: divisor must be not zero");
  }
  const kernels::Pool3dGeometry g = pool3d_geometry(input_shape, kernel_size, stride, padding, 1, ceil_mode, true, op);
  check_grad(grad_output, with_volume(input_shape, g.out_d, g.out_h, g.out_w), op);
  if (detail::widened_on_cpu(grad_output)) {
    return detail::narrow_to(avg_pool3d_backward(detail::widen(grad_output), input_shape, kernel_size, stride,
                                                 padding, ceil_mode, count_include_pad, divisor_override),
                             grad_output.dtype());
  }
  Tensor gx = empty(input_shape, TensorOptions(grad_output.dtype()).device(grad_output.device()));
  if (gx.numel() == 0) return gx;
  Tensor gy = contiguous(grad_output);
  run_kernel<kernels::AvgPool3dBackward>(gy.device(), gy.dtype(), g, count_include_pad, divisor_override.value_or(0),
                                         gy.data_ptr_raw(), gx.data_ptr_raw());
  return gx;
}

namespace {

kernels::Pool3dGeometry adaptive3d_geometry(const Shape& in, Int3 size, const char* op) {
  if (size.d < 0 || size.h < 0 || size.w < 0) {
    // torch's message, spacing included.
    throw std::invalid_argument(std::string(op) + ": elements of output_size must be greater than or equal to 0 but "
                                "received {" + std::to_string(size.d) + ", " + std::to_string(size.h) + "," +
                                std::to_string(size.w) + "}");
  }
  kernels::Pool3dGeometry g = sizes_geometry(in);
  g.out_d = size.d;
  g.out_h = size.h;
  g.out_w = size.w;
  return g;
}

}  // namespace

Tensor adaptive_avg_pool3d(const Tensor& input, Int3 output_size) {
  const char* op = "adaptive_avg_pool3d";
  check_defined(input, op);
  check_volume_input(input, op, "Expected 4D or 5D tensor, but got " + list_str(input.sizes()));
  const kernels::Pool3dGeometry g = adaptive3d_geometry(input.sizes(), output_size, op);
  if (detail::widened_on_cpu(input)) {
    return detail::narrow_to(adaptive_avg_pool3d(detail::widen(input), output_size), input.dtype());
  }
  Tensor y = empty(with_volume(input.sizes(), g.out_d, g.out_h, g.out_w),
                   TensorOptions(input.dtype()).device(input.device()));
  if (y.numel() == 0) return y;
  Tensor x = contiguous(input);
  run_kernel<kernels::AdaptiveAvgPool3dForward>(x.device(), x.dtype(), g, x.data_ptr_raw(), y.data_ptr_raw());
  return y;
}

Tensor adaptive_avg_pool3d_backward(const Tensor& grad_output, const Shape& input_shape) {
  const char* op = "adaptive_avg_pool3d_backward";
  check_shape_arg(input_shape, op);
  if (!grad_output.defined() || grad_output.dim() != static_cast<int64_t>(input_shape.size())) {
    throw std::invalid_argument(std::string(op) + ": expected grad_output with as many dims as input_shape " +
                                shape_str(input_shape));
  }
  const size_t nd = input_shape.size();
  const kernels::Pool3dGeometry g = adaptive3d_geometry(
      input_shape, {grad_output.size(nd - 3), grad_output.size(nd - 2), grad_output.size(nd - 1)}, op);
  check_grad(grad_output, with_volume(input_shape, g.out_d, g.out_h, g.out_w), op);
  if (detail::widened_on_cpu(grad_output)) {
    return detail::narrow_to(adaptive_avg_pool3d_backward(detail::widen(grad_output), input_shape),
                             grad_output.dtype());
  }
  Tensor gx = empty(input_shape, TensorOptions(grad_output.dtype()).device(grad_output.device()));
  if (gx.numel() == 0) return gx;
  if (grad_output.numel() == 0) return gx.zero_();
  Tensor gy = contiguous(grad_output);
  run_kernel<kernels::AdaptiveAvgPool3dBackward>(gy.device(), gy.dtype(), g, gy.data_ptr_raw(), gx.data_ptr_raw());
  return gx;
}

MaxPool2dResult adaptive_max_pool3d(const Tensor& input, Int3 output_size) {
  const char* op = "adaptive_max_pool3d";
  check_defined(input, op);
  check_volume_input(input, op, "Expected 4D or 5D tensor, but got: " + list_str(input.sizes()));
  const kernels::Pool3dGeometry g = adaptive3d_geometry(input.sizes(), output_size, op);
  if (detail::widened_on_cpu(input)) {
    MaxPool2dResult r = adaptive_max_pool3d(detail::widen(input), output_size);
    r.output = detail::narrow_to(r.output, input.dtype());
    return r;
  }
  return run_max<kernels::AdaptiveMaxPool3dForward>(input, g);
}

namespace {

// torch's fractional_max_pool{2,3}d checks and the kernel call; `dims` is 2 or 3, kernel and
// output_size (depth, height, width) with depth 1 for 2-D.
MaxPool2dResult fractional_max_pool(const Tensor& input, Int3 k, Int3 out, const Tensor& samples, int dims) {
  const std::string op = dims == 2 ? "fractional_max_pool2d()" : "fractional_max_pool3d()";
  const std::string out_op = dims == 2 ? "fractional_max_pool2d()" : "fractional_max_pool3d_out()";
  check_defined(input, op.c_str());
  if (input.dim() != dims + 1 && input.dim() != dims + 2) {
    throw std::invalid_argument(op + ": Expected " + std::to_string(dims + 1) + "D or " + std::to_string(dims + 2) +
                                "D tensor, but got: " + list_str(input.sizes()));
  }
  const bool batched = input.dim() == dims + 2;
  for (int64_t d = batched ? 1 : 0; d < input.dim(); ++d) {
    if (input.size(d) == 0) {
      throw std::invalid_argument(out_op + ": Expected input to have non-zero size for non-batch dimensions, but "
                                  "got" + list_str(input.sizes()) + " with dimension " + std::to_string(d) +
                                  " being empty.");
    }
  }
  check_floating(input, op.c_str());
  if (k.d <= 0 || k.h <= 0 || k.w <= 0) {
    throw std::invalid_argument(op + ": kernel size should be greater than zero, but got " +
                                (dims == 3 ? std::to_string(k.d) + "x" : std::string()) + std::to_string(k.h) + "x" +
                                std::to_string(k.w));
  }
  if (out.d < 0 || out.h < 0 || out.w < 0) {
    throw std::invalid_argument(op + ": output_size must be non-negative, got " +
                                (dims == 3 ? std::to_string(out.d) + "x" : std::string()) + std::to_string(out.h) +
                                "x" + std::to_string(out.w));
  }
  const int64_t n = batched ? input.size(0) : 1, c = input.size(batched ? 1 : 0);
  check_defined(samples, op.c_str(), "_random_samples");
  if (samples.dim() != 3) {
    throw std::invalid_argument(op + ": Expect _random_samples to have 3 dimensions, got " +
                                std::to_string(samples.dim()));
  }
  if (samples.dtype() != input.dtype()) {
    throw std::invalid_argument(op + ": Expect _random_samples to have the same dtype as input");
  }
  if (samples.device() != input.device()) {
    throw std::invalid_argument(op + ": _random_samples is on " + samples.device().str() + ", input on " +
                                input.device().str());
  }
  if (samples.size(0) < n) {
    throw std::invalid_argument(op + ": Expect _random_samples.size(0) no less then input batch size.");
  }
  if (samples.size(1) != c) {
    throw std::invalid_argument(op + ": Expect _random_samples.size(1) equals to input channel size.");
  }
  if (samples.size(2) != dims) {
    throw std::invalid_argument(op + ": Expect _random_samples.size(2) equals to " + std::to_string(dims) + "; got " +
                                std::to_string(samples.size(2)) + ".");
  }
  kernels::Pool3dGeometry g;
  g.planes = n * c;
  g.in_d = dims == 3 ? input.size(-3) : 1;
  g.in_h = input.size(-2);
  g.in_w = input.size(-1);
  g.out_d = out.d;
  g.out_h = out.h;
  g.out_w = out.w;
  g.kernel_d = k.d;
  g.kernel_h = k.h;
  g.kernel_w = k.w;
  // torch's bounds: 2-D lets the last window end at the input's end, 3-D asks one more.
  const int64_t slack = dims == 3 ? 1 : 0;
  auto check_fits = [&](int64_t o, int64_t kk, int64_t in, const char* what) {
    if (o + kk - 1 + slack > in) {
      throw std::invalid_argument(out_op + ": pool " + what + " " + std::to_string(kk) + " too large relative to input " +
                                  what + " " + std::to_string(in));
    }
  };
  if (dims == 3) check_fits(out.d, k.d, g.in_d, "time");
  check_fits(out.w, k.w, g.in_w, "width");
  check_fits(out.h, k.h, g.in_h, "height");
  if (detail::widened_on_cpu(input)) {
    MaxPool2dResult r = fractional_max_pool(detail::widen(input), k, out, detail::widen(samples), dims);
    r.output = detail::narrow_to(r.output, input.dtype());
    return r;
  }
  Shape out_shape = input.sizes();
  const size_t nd = out_shape.size();
  if (dims == 3) out_shape[nd - 3] = out.d;
  out_shape[nd - 2] = out.h;
  out_shape[nd - 1] = out.w;
  MaxPool2dResult r;
  r.output = empty(out_shape, TensorOptions(input.dtype()).device(input.device()));
  r.indices = empty(out_shape, TensorOptions(kInt64).device(input.device()));
  if (r.output.numel() == 0) return r;
  Tensor x = contiguous(input), s = contiguous(samples);
  run_kernel<kernels::FractionalMaxPoolForward>(x.device(), x.dtype(), g, dims, s.data_ptr_raw(), x.data_ptr_raw(),
                                                r.output.data_ptr_raw(), r.indices.data_ptr<int64_t>());
  return r;
}

}  // namespace

MaxPool2dResult fractional_max_pool2d(const Tensor& input, Int2 kernel_size, Int2 output_size,
                                      const Tensor& random_samples) {
  return fractional_max_pool(input, {1, kernel_size.h, kernel_size.w}, {1, output_size.h, output_size.w},
                             random_samples, 2);
}

MaxPool2dResult fractional_max_pool3d(const Tensor& input, Int3 kernel_size, Int3 output_size,
                                      const Tensor& random_samples) {
  return fractional_max_pool(input, kernel_size, output_size, random_samples, 3);
}

}  // namespace colony::raw
