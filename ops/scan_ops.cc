// cumprod, cummax, cummin, logcumsumexp and cumprod's gradient: scans along one dim, read in place
// as [outer, dim, inner] (no permute), as cumsum_ops.cc.
#include <string>
#include <utility>

#include "kernels/common/scan.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

struct Axis {
  int64_t outer = 1, len = 1, inner = 1;
};

Axis axis_of(const Tensor& t, int64_t dim, const char* op) {
  check_defined(t, op);
  const int64_t d = wrap_dim(dim, t.dim(), op);
  Axis a;
  if (t.dim() > 0) {
    for (int64_t i = 0; i < d; ++i) a.outer *= t.size(i);
    a.len = t.size(d);
    for (int64_t i = d + 1; i < t.dim(); ++i) a.inner *= t.size(i);
  }
  return a;
}

Tensor scan(kernels::ScanOp op, const char* name, const Tensor& t, int64_t dim, DType out_dtype, Tensor* indices) {
  const Axis a = axis_of(t, dim, name);
  Tensor x = contiguous(t);
  Tensor y = empty(t.sizes(), TensorOptions(out_dtype).device(t.device()));
  if (indices != nullptr) *indices = empty(t.sizes(), TensorOptions(kInt64).device(t.device()));
  if (y.numel() == 0) return y;
  run_kernel<kernels::Scan>(y.device(), op, t.dtype(), x.data_ptr_raw(), y.data_ptr_raw(),
                            indices != nullptr ? indices->data_ptr<int64_t>() : nullptr, a.outer, a.len, a.inner);
  return y;
}

std::pair<Tensor, Tensor> scan_extreme(bool is_max, const Tensor& t, int64_t dim) {
  Tensor indices;
  Tensor values = scan(is_max ? kernels::ScanOp::Max : kernels::ScanOp::Min, is_max ? "cummax" : "cummin", t, dim,
                       t.defined() ? t.dtype() : kFloat32, &indices);
  return {values, indices};
}

}  // namespace

Tensor cumprod(const Tensor& t, int64_t dim) {
  check_defined(t, "cumprod");
  // Integral and bool inputs multiply in int64, as torch.cumprod (and prod).
  return scan(kernels::ScanOp::Prod, "cumprod", t, dim, is_floating(t.dtype()) ? t.dtype() : kInt64, nullptr);
}

std::pair<Tensor, Tensor> cummax(const Tensor& t, int64_t dim) { return scan_extreme(true, t, dim); }
std::pair<Tensor, Tensor> cummin(const Tensor& t, int64_t dim) { return scan_extreme(false, t, dim); }

Tensor logcumsumexp(const Tensor& t, int64_t dim) {
  check_defined(t, "logcumsumexp");
  check_floating(t, "logcumsumexp");
  return scan(kernels::ScanOp::LogSumExp, "logcumsumexp", t, dim, t.dtype(), nullptr);
}

Tensor cumprod_backward(const Tensor& grad, const Tensor& input, int64_t dim) {
  const char* op = "cumprod_backward";
  check_defined(grad, op, "grad_output");
  check_floating(input, op);
  if (grad.sizes() != input.sizes() || grad.device() != input.device()) {
    throw std::invalid_argument(std::string(op) + ": grad_output " + shape_str(grad.sizes()) + " on " +
                                grad.device().str() + " does not match the input " + shape_str(input.sizes()) +
                                " on " + input.device().str());
  }
  const Axis a = axis_of(input, dim, op);
  Tensor x = contiguous(input);
  Tensor g = contiguous(to(grad, input.device(), input.dtype()));
  Tensor out = empty(input.sizes(), TensorOptions(input.dtype()).device(input.device()));
  if (out.numel() == 0) return out;
  run_kernel<kernels::CumprodBackward>(out.device(), input.dtype(), x.data_ptr_raw(), g.data_ptr_raw(),
                                       out.data_ptr_raw(), a.outer, a.len, a.inner);
  return out;
}

}  // namespace colony::raw
