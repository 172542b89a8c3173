// The LU family of torch.linalg: inv, det, slogdet, solve, and solve_triangular, each with its
// own node and torch's backward (FunctionsManual.cpp: linalg_det_backward, slogdet_backward,
// linalg_solve backward, linalg_solve_triangular's derivatives.yaml row).
#include "autograd/linalg.h"

#include "autograd/autocast.h"
#include "autograd/linalg_detail.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"
#include "ops/elementwise_detail.h"

namespace colony::linalg {
namespace {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::reduce_to;
using detail::mT;

std::string inv_singular(int32_t info) {
  return "The diagonal element " + std::to_string(info) +
         " is zero, the inversion could not be completed because the input matrix is singular.";
}

// Σ_{j≠i} s_j for each i of s [..., n], without dividing (s may hold zeros): the exclusive
// products from the left times those from the right.
Tensor products_of_others(const Tensor& s) {
  const int64_t n = s.size(-1);
  const Tensor ones = raw::ones(Shape(s.sizes().begin(), s.sizes().end() - 1), TensorOptions(s.dtype()).device(s.device()));
  auto exclusive = [&](const Tensor& v) {
    return raw::cat({raw::unsqueeze(ones, -1), raw::narrow(raw::cumprod(v, -1), -1, 0, n - 1)}, -1);
  };
  const Tensor left = exclusive(s);
  const Tensor right = autograd::detail::reversed_along(exclusive(autograd::detail::reversed_along(s, -1)), -1);
  return raw::mul(left, right);
}

// d det(A) / dA = det(A) A^-T where A is invertible; the cofactor matrix det(U) det(Vh) U adj(S) Vh
// (A = U S Vh) otherwise, as torch's linalg_det_backward takes the SVD for singular inputs.
Tensor det_gradient(const Tensor& a, const Tensor& det) {
  auto [lu, piv, info] = raw::linalg_lu_factor(a);
  const Tensor info_h = raw::contiguous(raw::to(info, kCPU, kInt32));
  bool singular = false;
  for (int64_t b = 0; b < info_h.numel(); ++b) singular = singular || info_h.data_ptr<int32_t>()[b] != 0;
  if (!singular) {
    const Tensor inv = raw::linalg_lu_solve(lu, piv, detail::identity_like(a));
    return raw::mul(mT(inv), raw::unsqueeze(raw::unsqueeze(det, -1), -1));
  }
  auto [u, s, vh, svd_info] = raw::linalg_svd(a, false, true);
  (void)svd_info;
  auto [lu_u, piv_u, iu] = raw::linalg_lu_factor(u);
  auto [lu_v, piv_v, iv] = raw::linalg_lu_factor(vh);
  const Tensor sign = raw::mul(std::get<0>(raw::linalg_lu_det(lu_u, piv_u)), std::get<0>(raw::linalg_lu_det(lu_v, piv_v)));
  const Tensor cof = raw::matmul(raw::mul(u, raw::unsqueeze(products_of_others(s), -2)), vh);
  return raw::mul(cof, raw::unsqueeze(raw::unsqueeze(sign, -1), -1));
}

// torch's rule for solve's B: a batch of vectors when 1-D or shaped as A less its last dim.
bool vector_rhs(const Tensor& a, const Tensor& b) {
  if (b.dim() == 1) return true;
  if (b.dim() != a.dim() - 1) return false;
  return Shape(a.sizes().begin(), a.sizes().end() - 1) == b.sizes();
}

}  // namespace

std::tuple<Tensor, Tensor> inv_ex(const Tensor& A_arg, bool check_errors) {
  const Tensor A = autocast::cast(autocast::Op::linalg_inv, A_arg);
  raw::check_linalg_input(A, "linalg.inv", true);
  auto [lu, piv, info] = raw::linalg_lu_factor(A);
  if (check_errors) detail::check_info(info, A.dim(), "linalg.inv", inv_singular);
  Tensor out = raw::linalg_lu_solve(lu, piv, detail::identity_like(A));
  if (autograd::needs_grad(A)) {
    SavedTensor so(out, /*is_output=*/true);
    // d(A^-1) = -A^-1 dA A^-1, so gA = -A^-T g A^-T.
    record("LinalgInvExBackward0", {A}, out, {so}, [so](const Grads& g, const Needs&) -> Grads {
      const Tensor xt = mT(so.unpack());
      return {raw::neg(raw::matmul(raw::matmul(xt, g[0]), xt))};
    });
  }
  return {out, info};
}

Tensor inv(const Tensor& A) { return std::get<0>(inv_ex(A, /*check_errors=*/true)); }

Tensor det(const Tensor& A) {
  raw::check_linalg_input(A, "linalg.det", true);
  auto [lu, piv, info] = raw::linalg_lu_factor(A);
  (void)info;
  Tensor out = std::get<0>(raw::linalg_lu_det(lu, piv));
  if (autograd::needs_grad(A)) {
    SavedTensor sa(A), so(out, /*is_output=*/true);
    record("LinalgDetBackward0", {A}, out, {sa, so}, [sa, so](const Grads& g, const Needs&) -> Grads {
      return {raw::mul(det_gradient(sa.unpack(), so.unpack()), raw::unsqueeze(raw::unsqueeze(g[0], -1), -1))};
    });
  }
  return out;
}

std::tuple<Tensor, Tensor> slogdet(const Tensor& A) {
  raw::check_linalg_input(A, "linalg.slogdet", true);
  auto [lu, piv, info] = raw::linalg_lu_factor(A);
  (void)info;
  auto [d, sign, logabs] = raw::linalg_lu_det(lu, piv);
  if (autograd::needs_grad(A)) {
    SavedTensor sa(A);
    std::vector<Tensor> outs{sign, logabs};
    // sign is piecewise constant: only log|det| has a gradient, g A^-T.
    autograd::record("LinalgSlogdetBackward0", {A}, outs, {sa}, [sa](const Grads& g, const Needs&) -> Grads {
      const Tensor a = sa.unpack();
      const Tensor inv_t = mT(detail::lu_solve_any(a, detail::identity_like(a), true));
      return {raw::mul(inv_t, raw::unsqueeze(raw::unsqueeze(g[1], -1), -1))};
    });
    return {outs[0], outs[1]};
  }
  return {sign, logabs};
}

Tensor solve(const Tensor& A_arg, const Tensor& B_arg, bool left) {
  const Tensor A = autocast::cast(autocast::Op::linalg_solve, A_arg), B = autocast::cast(autocast::Op::linalg_solve, B_arg);
  raw::check_linalg_input(A, "linalg.solve", true);
  if (!B.defined()) throw std::invalid_argument("linalg.solve: expected a defined B");
  if (A.dtype() != B.dtype()) {
    throw std::invalid_argument("linalg.solve: Expected A and B to have the same dtype, but found A of type " +
                                std::string(raw::detail::torch_type_name(A.dtype())) + " and B of type " +
                                raw::detail::torch_type_name(B.dtype()) + " instead");
  }
  const bool vec = vector_rhs(A, B);
  const Tensor b = vec ? raw::unsqueeze(B, left ? -1 : -2) : B;
  const int64_t n = A.size(-1);
  if ((left ? b.size(-2) : b.size(-1)) != n) {
    throw std::invalid_argument(std::string("linalg.solve: Incompatible shapes of A and B for the equation ") +
                                (left ? "AX = B" : "XA = B") + " (" + std::to_string(n) + "x" + std::to_string(n) +
                                " and " + std::to_string(b.size(-2)) + "x" + std::to_string(b.size(-1)) + ")");
  }
  auto [lu, piv, info] = raw::linalg_lu_factor(left ? A : mT(A));
  detail::check_info(info, A.dim(), "torch.linalg.solve",
                     [](int32_t) { return std::string("The solver failed because the input matrix is singular."); });
  Tensor x = raw::linalg_lu_solve(lu, piv, left ? b : mT(b));
  if (!left) x = raw::contiguous(mT(x));
  Tensor out = vec ? raw::squeeze(x, left ? -1 : -2) : x;
  if (autograd::needs_grad(A, B)) {
    SavedTensor sa(A), sx(out, /*is_output=*/true);
    const Shape a_shape = A.sizes(), b_shape = B.sizes();
    record("LinalgSolveExBackward0", {A, B}, out, {sa, sx},
           [sa, sx, vec, left, a_shape, b_shape](const Grads& g, const Needs& needs) -> Grads {
             // Left: gB = A^-T g, gA = -gB Xᵀ. Right (X A = B): gB = g A^-T, gA = -Xᵀ gB.
             const Tensor gm = vec ? raw::unsqueeze(g[0], left ? -1 : -2) : g[0];
             const Tensor xm = vec ? raw::unsqueeze(sx.unpack(), left ? -1 : -2) : sx.unpack();
             const Tensor gb = detail::lu_solve_any(mT(sa.unpack()), gm, left);
             Tensor ga;
             if (needs[0]) ga = reduce_to(raw::neg(left ? raw::matmul(gb, mT(xm)) : raw::matmul(mT(xm), gb)), a_shape);
             Tensor gB;
             if (needs[1]) gB = reduce_to(vec ? raw::squeeze(gb, left ? -1 : -2) : gb, b_shape);
             return {ga, gB};
           });
  }
  return out;
}

Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  Tensor out = raw::linalg_solve_triangular(A, B, upper, left, unitriangular);
  if (autograd::needs_grad(A, B)) {
    SavedTensor sa(A), sx(out, /*is_output=*/true);
    const Shape a_shape = A.sizes(), b_shape = B.sizes();
    record("LinalgSolveTriangularBackward0", {A, B}, out, {sa, sx},
           [sa, sx, upper, left, unitriangular, a_shape, b_shape](const Grads& g, const Needs& needs) -> Grads {
             // As solve's, with Tᵀ's triangle, and A's gradient kept to the triangle it read
             // (without the diagonal when unitriangular).
             const Tensor gb = raw::linalg_solve_triangular(mT(sa.unpack()), g[0], !upper, left, unitriangular);
             Tensor ga;
             if (needs[0]) {
               const Tensor x = sx.unpack();
               Tensor full = raw::neg(left ? raw::matmul(gb, mT(x)) : raw::matmul(mT(x), gb));
               const int64_t off = unitriangular ? 1 : 0;
               ga = reduce_to(upper ? raw::triu(full, off) : raw::tril(full, -off), a_shape);
             }
             Tensor gB;
             if (needs[1]) gB = reduce_to(gb, b_shape);
             return {ga, gB};
           });
  }
  return out;
}

}  // namespace colony::linalg
