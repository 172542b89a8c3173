// layer_norm, rms_norm and their backward: PyTorch's checks, then the fused kernels of
// kernels/common/norm.h over the input read as [rows, cols], cols = prod(normalized_shape).
#include <stdexcept>
#include <string>

#include "kernels/common/norm.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

struct Rows {
  int64_t rows = 1, cols = 1;
};

// The compute dtype of the statistics and of what the kernels take per column.
DType compute_dtype(DType input) { return input == kFloat16 || input == kBFloat16 ? kFloat32 : input; }

Rows check_input(const Tensor& input, const Shape& normalized_shape, const char* op) {
  check_defined(input, op);
  check_floating(input, op);
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  if (k == 0) {
    throw std::invalid_argument(std::string(op) + ": normalized_shape must have at least one dimension, got []");
  }
  bool matches = input.dim() >= k;
  for (int64_t i = 0; matches && i < k; ++i) matches = input.size(input.dim() - k + i) == normalized_shape[i];
  if (!matches) {
    throw std::invalid_argument(std::string(op) + ": expected input with shape [*, " +
                                shape_str(normalized_shape).substr(1) + " (its last " + std::to_string(k) +
                                " dims equal to normalized_shape), got input of shape " + shape_str(input.sizes()));
  }
  Rows r;
  for (int64_t i = 0; i < input.dim(); ++i) (i < input.dim() - k ? r.rows : r.cols) *= input.size(i);
  if (r.cols == 0 && r.rows > 0) {
    throw std::invalid_argument(std::string(op) + ": normalized_shape " + shape_str(normalized_shape) +
                                " has no elements to normalize over");
  }
  return r;
}

// weight / bias: normalized_shape, on input's device, in input's dtype or (beside a 16-bit input)
// float32.
void check_param(const Tensor& t, const char* name, const Tensor& input, const Shape& normalized_shape,
                 const char* op) {
  if (!t.defined()) return;
  if (t.sizes() != normalized_shape) {
    throw std::invalid_argument(std::string(op) + ": expected " + name + " of shape normalized_shape " +
                                shape_str(normalized_shape) + ", got " + shape_str(t.sizes()));
  }
  if (t.device() != input.device() || (t.dtype() != input.dtype() && t.dtype() != compute_dtype(input.dtype()))) {
    std::string dtypes = dtype_name(input.dtype());
    if (compute_dtype(input.dtype()) != input.dtype()) dtypes += " or float32";
    throw std::invalid_argument(std::string(op) + ": expected " + name + " as " + dtypes + " on " +
                                input.device().str() + " (the input's), got " + dtype_name(t.dtype()) + " on " +
                                t.device().str());
  }
}

// A parameter as the kernels read it: contiguous, in the compute dtype (a 16-bit weight is widened;
// it has one row's worth of elements).
Tensor kernel_param(const Tensor& t, DType compute) {
  if (!t.defined()) return t;
  return contiguous(to(t, t.device(), compute));
}

void* ptr(const Tensor& t) { return t.defined() ? t.data_ptr_raw() : nullptr; }

void check_stat(const Tensor& t, const char* name, const Tensor& input, int64_t rows, const char* op) {
  const DType c = compute_dtype(input.dtype());
  if (!t.defined() || t.numel() != rows || t.dtype() != c || t.device() != input.device()) {
    throw std::invalid_argument(std::string(op) + ": expected " + name + " from the forward: " + std::to_string(rows) +
                                " " + dtype_name(c) + " values on " + input.device().str() + ", got " +
                                (t.defined() ? std::string(dtype_name(t.dtype())) + " " + shape_str(t.sizes()) + " on " +
                                                   t.device().str()
                                             : std::string("undefined")));
  }
}

void check_grad_output(const Tensor& grad_output, const Tensor& input, const char* op) {
  if (!grad_output.defined() || grad_output.sizes() != input.sizes() || grad_output.dtype() != input.dtype() ||
      grad_output.device() != input.device()) {
    throw std::invalid_argument(
        std::string(op) + ": expected grad_output as " + dtype_name(input.dtype()) + " " + shape_str(input.sizes()) +
        " on " + input.device().str() + " like input, got " +
        (grad_output.defined() ? std::string(dtype_name(grad_output.dtype())) + " " + shape_str(grad_output.sizes()) +
                                     " on " + grad_output.device().str()
                               : std::string("undefined")));
  }
}

NormResult norm_forward(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                        double eps, bool rms) {
  const char* op = rms ? "rms_norm" : "layer_norm";
  const Rows r = check_input(input, normalized_shape, op);
  check_param(weight, "weight", input, normalized_shape, op);
  check_param(bias, "bias", input, normalized_shape, op);
  if (!(eps >= 0)) throw std::invalid_argument(std::string(op) + ": eps must be >= 0, got " + std::to_string(eps));
  const DType c = compute_dtype(input.dtype());
  const TensorOptions stats = TensorOptions(c).device(input.device());
  NormResult res;
  res.output = empty(input.sizes(), TensorOptions(input.dtype()).device(input.device()));
  if (!rms) res.mean = empty({r.rows}, stats);
  res.rstd = empty({r.rows}, stats);
  if (r.rows == 0) return res;
  Tensor x = contiguous(input), w = kernel_param(weight, c), b = kernel_param(bias, c);
  run_kernel<kernels::RowNormForward>(x.device(), x.dtype(), x.data_ptr_raw(), ptr(w), ptr(b),
                                      res.output.data_ptr_raw(), ptr(res.mean), res.rstd.data_ptr_raw(), r.rows,
                                      r.cols, eps, rms);
  return res;
}

NormGrads norm_backward(const Tensor& grad_output, const Tensor& input, const Shape& normalized_shape,
                        const Tensor& mean, const Tensor& rstd, const Tensor& weight, std::array<bool, 3> mask,
                        bool rms) {
  const char* op = rms ? "rms_norm_backward" : "layer_norm_backward";
  const Rows r = check_input(input, normalized_shape, op);
  check_grad_output(grad_output, input, op);
  check_param(weight, "weight", input, normalized_shape, op);
  if (!rms) check_stat(mean, "mean", input, r.rows, op);
  check_stat(rstd, "rstd", input, r.rows, op);
  const DType c = compute_dtype(input.dtype());
  const TensorOptions copts = TensorOptions(c).device(input.device());
  NormGrads g;
  if (mask[0]) g.grad_input = empty(input.sizes(), TensorOptions(input.dtype()).device(input.device()));
  if (mask[1]) g.grad_weight = empty(normalized_shape, copts);
  if (mask[2] && !rms) g.grad_bias = empty(normalized_shape, copts);
  if (!g.grad_input.defined() && !g.grad_weight.defined() && !g.grad_bias.defined()) return g;
  Tensor x = contiguous(input), dy = contiguous(grad_output), w = kernel_param(weight, c);
  Tensor m = rms ? Tensor() : contiguous(mean), rs = contiguous(rstd);
  run_kernel<kernels::RowNormBackward>(x.device(), x.dtype(), dy.data_ptr_raw(), x.data_ptr_raw(), ptr(m),
                                       rs.data_ptr_raw(), ptr(w), ptr(g.grad_input), ptr(g.grad_weight),
                                       ptr(g.grad_bias), r.rows, r.cols, rms);
  return g;
}

}  // namespace

NormResult layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                      double eps) {
  return norm_forward(input, normalized_shape, weight, bias, eps, /*rms=*/false);
}

NormResult rms_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, double eps) {
  return norm_forward(input, normalized_shape, weight, Tensor(), eps, /*rms=*/true);
}

NormGrads layer_norm_backward(const Tensor& grad_output, const Tensor& input, const Shape& normalized_shape,
                              const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                              std::array<bool, 3> output_mask) {
  return norm_backward(grad_output, input, normalized_shape, mean, rstd, weight, output_mask, /*rms=*/false);
}

NormGrads rms_norm_backward(const Tensor& grad_output, const Tensor& input, const Shape& normalized_shape,
                            const Tensor& rstd, const Tensor& weight, std::array<bool, 2> output_mask) {
  return norm_backward(grad_output, input, normalized_shape, Tensor(), rstd, weight,
                       {output_mask[0], output_mask[1], false}, /*rms=*/true);
}

}  // namespace colony::raw
