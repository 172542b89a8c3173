// The scans besides cumsum (cumsum.cc) and the product, which is cumprod's last element:
//   cumprod        dL/dx_k = sum_{i>=k} g_i prod_{j<=i, j!=k} x_j (raw::cumprod_backward: no division,
//                  so one zero or several give torch's exact values);
//   prod           narrow(cumprod, last), so its gradient is cumprod's with g zero but at the end:
//                  g * prod_{j!=k} x_j, torch's prod_backward with and without zeros;
//   cummax/cummin  the gradient of each value goes to the position it came from (scatter_add);
//   logcumsumexp   dL/dx_k = sum_{i>=k} g_i exp(x_k - y_i), summed as a reversed logcumsumexp of
//                  log|g| - y, the positive and negative parts of g apart (torch's formula, which
//                  neither overflows nor underflows where the terms themselves do not).
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::largest_finite;
using autograd::detail::Needs;
using autograd::detail::reversed_along;

Tensor cumprod(const Tensor& t_arg, int64_t dim) {
  // Under autocast a float16/bfloat16 running product would round every step: float32, as PyTorch.
  const Tensor t = autocast::cast(autocast::Op::cumprod, t_arg);
  Tensor out = raw::cumprod(t, dim);
  if (autograd::needs_grad(t)) {
    const int64_t d = t.dim() == 0 ? 0 : wrap_dim(dim, t.dim(), "cumprod");
    SavedTensor sx(t);
    record("CumprodBackward", {t}, out, {sx}, [sx, d](const Grads& g, const Needs&) -> Grads {
      return {raw::cumprod_backward(g[0], sx.unpack(), d)};
    });
  }
  return out;
}

Tensor prod(const Tensor& t) {
  if (!t.defined()) throw std::invalid_argument("prod: expected a defined input tensor");
  if (t.numel() == 0) {
    return raw::ones({}, TensorOptions(is_floating(t.dtype()) ? t.dtype() : kInt64).device(t.device()));
  }
  Tensor flat = reshape(t, {-1});
  return reshape(narrow(cumprod(flat, 0), 0, flat.numel() - 1, 1), {});
}

Tensor prod(const Tensor& t, int64_t dim, bool keepdim) {
  if (!t.defined()) throw std::invalid_argument("prod: expected a defined input tensor");
  if (t.dim() == 0) {
    wrap_dim(dim, 0, "prod");
    return cumprod(t, 0);
  }
  const int64_t d = wrap_dim(dim, t.dim(), "prod");
  const int64_t n = t.size(d);
  if (n == 0) {  // the empty product is 1
    Shape shape = t.sizes();
    shape[d] = 1;
    Tensor ones = raw::ones(shape, TensorOptions(is_floating(t.dtype()) ? t.dtype() : kInt64).device(t.device()));
    return keepdim ? ones : raw::squeeze(ones, d);
  }
  Tensor last = narrow(cumprod(t, d), d, n - 1, 1);
  return keepdim ? last : squeeze(last, d);
}

namespace {

std::pair<Tensor, Tensor> running_extreme(bool is_max, const char* name, const Tensor& t, int64_t dim) {
  auto [values, indices] = is_max ? raw::cummax(t, dim) : raw::cummin(t, dim);
  if (autograd::needs_grad(t)) {
    const int64_t d = t.dim() == 0 ? 0 : wrap_dim(dim, t.dim(), name);
    SavedTensor si(indices, /*is_output=*/true);
    Shape in_shape = t.sizes();
    record(name, {t}, values, {si}, [si, d, in_shape](const Grads& g, const Needs&) -> Grads {
      if (in_shape.empty()) return {g[0]};
      return {raw::scatter_add(in_shape, d, si.unpack(), g[0])};
    });
  }
  return {values, indices};
}

}  // namespace

std::pair<Tensor, Tensor> cummax(const Tensor& t, int64_t dim) {
  return running_extreme(true, "CummaxBackward", t, dim);
}
std::pair<Tensor, Tensor> cummin(const Tensor& t, int64_t dim) {
  return running_extreme(false, "CumminBackward", t, dim);
}

Tensor logcumsumexp(const Tensor& t, int64_t dim) {
  Tensor out = raw::logcumsumexp(t, dim);
  if (autograd::needs_grad(t)) {
    const int64_t d = t.dim() == 0 ? 0 : wrap_dim(dim, t.dim(), "logcumsumexp");
    SavedTensor sx(t), sy(out, /*is_output=*/true);
    record("LogcumsumexpBackward", {t}, out, {sx, sy}, [sx, sy, d](const Grads& g, const Needs&) -> Grads {
      const Tensor& grad = g[0];
      if (grad.dim() == 0 || grad.numel() == 0) return {grad};
      Tensor x = sx.unpack(), y = sy.unpack();
      // log|g| where g has the sign, the dtype's lowest value elsewhere (a finite "log 0", so that
      // lowest - y stays finite where y is -inf, as torch's grad_min).
      Tensor lowest = autograd::detail::scalar_like(-largest_finite(grad.dtype()), grad);
      Tensor log_abs = raw::log(raw::abs(grad));
      auto part = [&](raw::BinaryOp sign) {
        Tensor log_g = raw::where(raw::binary(sign, grad, 0.0), log_abs, lowest);
        Tensor tail = reversed_along(raw::logcumsumexp(reversed_along(raw::sub(log_g, y), d), d), d);
        return raw::exp(raw::add(tail, x));
      };
      return {raw::sub(part(raw::BinaryOp::Gt), part(raw::BinaryOp::Lt))};
    });
  }
  return out;
}

}  // namespace colony
