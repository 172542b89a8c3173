// The raw matrix decompositions (ops/raw_linalg_ops.h): checks, the host copy of the input the
// kernels work in, and the results on the input's device.
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cpu/linalg_decomp.h"
#include "ops/elementwise_detail.h"
#include "ops/op_checks.h"
#include "ops/raw_linalg_ops.h"
#include "ops/raw_ops.h"

namespace colony::raw {
namespace {

Shape batch_shape(const Tensor& t, int64_t trailing) { return Shape(t.sizes().begin(), t.sizes().end() - trailing); }

Shape with_tail(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

// A contiguous host copy the kernels may write (never the caller's memory).
Tensor host_copy(const Tensor& t) {
  Tensor h = to(t, kCPU, t.dtype());
  return h.impl_ptr() == t.impl_ptr() || !h.is_contiguous() ? clone(h) : h;
}

Tensor host_empty(const Shape& shape, DType dtype) { return empty(shape, TensorOptions(dtype)); }

Tensor on_device(const Tensor& t, Device device) { return t.defined() ? to(t, device, t.dtype()) : t; }

}  // namespace

void check_linalg_input(const Tensor& a, const char* op, bool square) {
  check_defined(a, op);
  if (a.dim() < 2) throw std::invalid_argument(std::string(op) + ": The input tensor A must have at least 2 dimensions.");
  if (a.dtype() == kFloat16 || a.dtype() == kBFloat16) {
    throw std::invalid_argument(std::string(op) + ": Low precision dtypes not supported. Got " +
                                detail::torch_type_name(a.dtype()));
  }
  if (!is_floating(a.dtype())) {
    throw std::invalid_argument(std::string(op) + ": Expected a floating point or complex tensor as input. Got " +
                                detail::torch_type_name(a.dtype()));
  }
  if (square && a.size(-1) != a.size(-2)) {
    throw std::invalid_argument(std::string(op) + ": A must be batches of square matrices, but they are " +
                                std::to_string(a.size(-2)) + " by " + std::to_string(a.size(-1)) + " matrices");
  }
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor(const Tensor& a, bool pivot) {
  check_linalg_input(a, "linalg.lu_factor", false);
  const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const Shape batch = batch_shape(a, 2);
  Tensor lu = host_copy(a);
  Tensor piv = host_empty(with_tail(batch, {k}), kInt32), info = zeros(batch, TensorOptions(kInt32));
  const int64_t nb = shape_numel(batch);
  if (nb > 0 && m > 0 && n > 0)
    kernels::cpu::lu_factor(a.dtype(), lu.data_ptr_raw(), piv.data_ptr<int32_t>(), info.data_ptr<int32_t>(), nb, m, n,
                            pivot);
  return {on_device(lu, a.device()), on_device(piv, a.device()), on_device(info, a.device())};
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu_det(const Tensor& lu, const Tensor& pivots) {
  const int64_t n = lu.size(-1);
  const Shape batch = batch_shape(lu, 2);
  const Tensor luh = contiguous(to(lu, kCPU, lu.dtype())), pivh = contiguous(to(pivots, kCPU, kInt32));
  Tensor det = host_empty(batch, lu.dtype()), sign = host_empty(batch, lu.dtype()), logabs = host_empty(batch, lu.dtype());
  const int64_t nb = shape_numel(batch);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* a = luh.data_ptr<T>();
    const int32_t* p = pivh.data_ptr<int32_t>();
    for (int64_t b = 0; b < nb; ++b) {
      // The product in T, as torch's det multiplies U's diagonal; log|det| summed separately so
      // that it does not overflow where the product does.
      T prod = 1, sgn = 1, log_sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const T d = a[b * n * n + i * n + i];
        prod *= d;
        if (d < T(0)) sgn = -sgn;
        if (d == T(0)) sgn = 0;
        log_sum += std::log(std::abs(d));
        if (p[b * n + i] != i + 1) prod = -prod, sgn = -sgn;
      }
      det.data_ptr<T>()[b] = prod;
      sign.data_ptr<T>()[b] = sgn;
      logabs.data_ptr<T>()[b] = log_sum;
    }
  };
  if (lu.dtype() == kFloat64) run(double{}); else run(float{});
  return {on_device(det, lu.device()), on_device(sign, lu.device()), on_device(logabs, lu.device())};
}

Tensor linalg_lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b) {
  check_linalg_input(lu, "linalg.lu_solve", true);
  check_defined(b, "linalg.lu_solve", "B");
  const int64_t n = lu.size(-1);
  if (b.dim() < 2 || b.size(-2) != n || b.dtype() != lu.dtype()) {
    throw std::invalid_argument("linalg.lu_solve: B " + shape_str(b.sizes()) + " " + dtype_name(b.dtype()) +
                                " does not fit LU " + shape_str(lu.sizes()) + " " + dtype_name(lu.dtype()));
  }
  const int64_t k = b.size(-1);
  const Shape batch = broadcast_shapes(batch_shape(lu, 2), batch_shape(b, 2), "linalg.lu_solve");
  Tensor luh = contiguous(to(expand(lu, with_tail(batch, {n, n})), kCPU, lu.dtype()));
  Tensor pivh = contiguous(to(expand(pivots, with_tail(batch, {n})), kCPU, kInt32));
  Tensor x = clone(to(expand(b, with_tail(batch, {n, k})), kCPU, b.dtype()));
  const int64_t nb = shape_numel(batch);
  if (nb > 0 && n > 0 && k > 0)
    kernels::cpu::lu_solve(lu.dtype(), luh.data_ptr_raw(), pivh.data_ptr<int32_t>(), x.data_ptr_raw(), nb, n, k);
  return on_device(x, b.device());
}

Tensor linalg_solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  check_linalg_input(a, op, true);
  check_linalg_input(b, op, false);
  if (a.dtype() != b.dtype()) {
    throw std::invalid_argument(std::string(op) + ": Expected A and B to have the same dtype, but found A of type " +
                                detail::torch_type_name(a.dtype()) + " and B of type " +
                                detail::torch_type_name(b.dtype()) + " instead");
  }
  const int64_t n = a.size(-1);
  if ((left ? b.size(-2) : b.size(-1)) != n) {
    throw std::invalid_argument(std::string(op) + ": Incompatible shapes of A and B for the equation " +
                                (left ? "AX = B" : "XA = B") + " (" + std::to_string(a.size(-2)) + "x" +
                                std::to_string(n) + " and " + std::to_string(b.size(-2)) + "x" +
                                std::to_string(b.size(-1)) + ")");
  }
  // X A = B is Aᵀ Xᵀ = Bᵀ: the other triangle of the transpose.
  const Tensor at = left ? a : transpose(a, -2, -1);
  const Tensor bt = left ? b : transpose(b, -2, -1);
  const bool up = left ? upper : !upper;
  const int64_t k = bt.size(-1);
  const Shape batch = broadcast_shapes(batch_shape(at, 2), batch_shape(bt, 2), op);
  Tensor ah = contiguous(to(expand(at, with_tail(batch, {n, n})), kCPU, a.dtype()));
  Tensor x = clone(to(expand(bt, with_tail(batch, {n, k})), kCPU, b.dtype()));
  const int64_t nb = shape_numel(batch);
  if (nb > 0 && n > 0 && k > 0)
    kernels::cpu::triangular_solve(a.dtype(), ah.data_ptr_raw(), x.data_ptr_raw(), nb, n, k, up, unitriangular);
  Tensor out = left ? x : contiguous(transpose(x, -2, -1));
  return on_device(out, b.device());
}

std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor& a, bool upper) {
  check_linalg_input(a, "linalg.cholesky", true);
  const int64_t n = a.size(-1);
  const Shape batch = batch_shape(a, 2);
  // The upper factor of A is the transpose of the lower factor of Aᵀ (A's upper triangle read).
  Tensor l = host_copy(upper ? transpose(a, -2, -1) : a);
  Tensor info = zeros(batch, TensorOptions(kInt32));
  const int64_t nb = shape_numel(batch);
  if (nb > 0 && n > 0) kernels::cpu::cholesky(a.dtype(), l.data_ptr_raw(), info.data_ptr<int32_t>(), nb, n);
  if (upper) l = contiguous(transpose(l, -2, -1));
  return {on_device(l, a.device()), on_device(info, a.device())};
}

std::tuple<Tensor, Tensor> linalg_qr(const Tensor& a, const std::string& mode) {
  if (mode != "reduced" && mode != "complete" && mode != "r") {
    throw std::invalid_argument("qr received unrecognized mode '" + mode +
                                "' but expected one of 'reduced' (default), 'r', or 'complete'");
  }
  check_linalg_input(a, "linalg.qr", false);
  const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const bool complete = mode == "complete";
  const Shape batch = batch_shape(a, 2);
  const Tensor ah = contiguous(to(a, kCPU, a.dtype()));
  Tensor r = host_empty(with_tail(batch, {complete ? m : k, n}), a.dtype());
  Tensor q = mode == "r" ? host_empty({0}, a.dtype()) : host_empty(with_tail(batch, {m, complete ? m : k}), a.dtype());
  const int64_t nb = shape_numel(batch);
  if (nb > 0 && m > 0 && n > 0) {
    kernels::cpu::householder_qr(a.dtype(), ah.data_ptr_raw(), mode == "r" ? nullptr : q.data_ptr_raw(),
                                 r.data_ptr_raw(), nb, m, n, complete);
  } else if (nb > 0 && complete && m > 0) {
    q = eye(m, m, TensorOptions(a.dtype()));  // n == 0: Q is the identity, R empty
    q = contiguous(expand(q, with_tail(batch, {m, m})));
  }
  return {on_device(q, a.device()), on_device(r, a.device())};
}

std::tuple<Tensor, Tensor, Tensor> linalg_eigh(const Tensor& a, bool upper, bool want_vectors) {
  check_linalg_input(a, "linalg.eigh", true);
  const int64_t n = a.size(-1);
  const Shape batch = batch_shape(a, 2);
  // The symmetric matrix from the named triangle: that triangle mirrored over the diagonal.
  const Tensor tri = upper ? triu(a) : tril(a);
  const Tensor strict = upper ? triu(a, 1) : tril(a, -1);
  Tensor sym = host_copy(add(tri, transpose(strict, -2, -1)));
  Tensor w = host_empty(with_tail(batch, {n}), a.dtype());
  Tensor v = want_vectors ? host_empty(with_tail(batch, {n, n}), a.dtype()) : Tensor();
  Tensor info = zeros(batch, TensorOptions(kInt32));
  const int64_t nb = shape_numel(batch);
  if (nb > 0 && n > 0) {
    kernels::cpu::eigh(a.dtype(), sym.data_ptr_raw(), w.data_ptr_raw(), want_vectors ? v.data_ptr_raw() : nullptr,
                       info.data_ptr<int32_t>(), nb, n);
  }
  return {on_device(w, a.device()), on_device(v, a.device()), on_device(info, a.device())};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_svd(const Tensor& a, bool full_matrices, bool want_vectors) {
  check_linalg_input(a, "linalg.svd", false);
  const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const Shape batch = batch_shape(a, 2);
  const Tensor ah = contiguous(to(a, kCPU, a.dtype()));
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  Tensor s = host_empty(with_tail(batch, {k}), a.dtype());
  Tensor u, vh;
  if (want_vectors) {
    u = zeros(with_tail(batch, {m, ucols}), TensorOptions(a.dtype()));
    vh = zeros(with_tail(batch, {vrows, n}), TensorOptions(a.dtype()));
  }
  Tensor info = zeros(batch, TensorOptions(kInt32));
  const int64_t nb = shape_numel(batch);
  if (nb > 0 && k > 0) {
    kernels::cpu::svd(a.dtype(), ah.data_ptr_raw(), want_vectors ? u.data_ptr_raw() : nullptr, s.data_ptr_raw(),
                      want_vectors ? vh.data_ptr_raw() : nullptr, info.data_ptr<int32_t>(), nb, m, n, full_matrices);
  } else if (want_vectors && nb > 0) {  // an empty matrix: the full bases are identities
    if (full_matrices && m > 0) u = contiguous(expand(eye(m, m, TensorOptions(a.dtype())), with_tail(batch, {m, m})));
    if (full_matrices && n > 0) vh = contiguous(expand(eye(n, n, TensorOptions(a.dtype())), with_tail(batch, {n, n})));
  }
  return {on_device(u, a.device()), on_device(s, a.device()), on_device(vh, a.device()), on_device(info, a.device())};
}

}  // namespace colony::raw
