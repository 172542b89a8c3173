// Softmax family over one dim, read in place as [outer, dim, inner] (no permute).
#include <stdexcept>
#include <string>

#include "kernels/common/softmax.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

struct Axis {
  int64_t outer = 1, dim = 1, inner = 1;
};

Axis split_axis(const Tensor& t, int64_t dim, const char* op) {
  Axis a;
  if (t.dim() == 0) {
    wrap_dim(dim, 0, op);
    return a;
  }
  int64_t d = wrap_dim(dim, t.dim(), op);
  for (int64_t i = 0; i < d; ++i) a.outer *= t.size(i);
  a.dim = t.size(d);
  for (int64_t i = d + 1; i < t.dim(); ++i) a.inner *= t.size(i);
  return a;
}

Tensor softmax_forward(const Tensor& t, int64_t dim, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  check_floating(t, op, "tensor");
  Axis a = split_axis(t, dim, op);
  Tensor x = contiguous(t);
  Tensor y = empty(t.sizes(), TensorOptions(t.dtype()).device(t.device()));
  if (y.numel() == 0) return y;
  run_kernel<kernels::SoftmaxForward>(x.device(), x.dtype(), x.data_ptr_raw(), y.data_ptr_raw(), a.outer, a.dim,
                                      a.inner, log);
  return y;
}

Tensor softmax_grad(const Tensor& grad, const Tensor& output, int64_t dim, bool log) {
  const char* op = log ? "log_softmax_backward" : "softmax_backward";
  if (grad.sizes() != output.sizes()) {
    throw std::invalid_argument(std::string(op) + ": grad has shape " + shape_str(grad.sizes()) +
                                " but output has shape " + shape_str(output.sizes()));
  }
  if (grad.dtype() != output.dtype() || grad.device() != output.device()) {
    throw std::invalid_argument(std::string(op) + ": grad is " + dtype_name(grad.dtype()) + " on " +
                                grad.device().str() + " but output is " + dtype_name(output.dtype()) + " on " +
                                output.device().str());
  }
  check_floating(output, op, "tensor");
  Axis a = split_axis(output, dim, op);
  Tensor g = contiguous(grad), y = contiguous(output);
  Tensor gx = empty(output.sizes(), TensorOptions(output.dtype()).device(output.device()));
  if (gx.numel() == 0) return gx;
  run_kernel<kernels::SoftmaxBackward>(y.device(), y.dtype(), g.data_ptr_raw(), y.data_ptr_raw(), gx.data_ptr_raw(),
                                       a.outer, a.dim, a.inner, log);
  return gx;
}

}  // namespace

Tensor softmax(const Tensor& t, int64_t dim) { return softmax_forward(t, dim, false); }
Tensor log_softmax(const Tensor& t, int64_t dim) { return softmax_forward(t, dim, true); }

Tensor softmax_backward(const Tensor& grad, const Tensor& output, int64_t dim) {
  return softmax_grad(grad, output, dim, false);
}

Tensor log_softmax_backward(const Tensor& grad, const Tensor& output, int64_t dim) {
  return softmax_grad(grad, output, dim, true);
}

}  // namespace colony::raw
