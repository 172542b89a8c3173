// The LU factorization as torch.linalg exposes it: lu_factor, lu_factor_ex (packed LU and
// pivots), lu (P, L, U) and lu_solve, with torch's backward formulas (FunctionsManual.cpp:
// linalg_lu_backward, lu_factor_ex_backward, linalg_lu_solve_LU). pivot = false factors without
// pivoting on either device (torch's CUDA does; its CPU refuses).
#include <stdexcept>

#include "autograd/linalg.h"
#include "autograd/linalg_detail.h"
#include "autograd/op_util.h"
#include "ops/elementwise_detail.h"

namespace colony::linalg {
namespace {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::reduce_to;
using detail::mT;

// P [..., m, m] with A = P L U from LAPACK's 1-based row swaps [..., k]: row i of LU is row
// perm[i] of A, perm the swaps applied in order to 0..m-1.
Tensor permutation(const Tensor& pivots, int64_t m, DType dtype, Device device) {
  const Tensor piv = raw::contiguous(raw::to(pivots, kCPU, kInt32));
  const int64_t k = piv.size(-1);
  Shape shape(pivots.sizes().begin(), pivots.sizes().end() - 1);
  const int64_t nb = shape_numel(shape);
  shape.push_back(m);
  shape.push_back(m);
  Tensor p = raw::zeros(shape, TensorOptions(kFloat64));
  double* out = p.data_ptr<double>();
  const int32_t* sw = piv.data_ptr<int32_t>();
  std::vector<int64_t> perm(m);
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t i = 0; i < m; ++i) perm[i] = i;
    for (int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[sw[b * k + i] - 1]);
    for (int64_t i = 0; i < m; ++i) out[b * m * m + perm[i] * m + i] = 1.0;
  }
  return raw::to(p, device, dtype);
}

// L (unit lower, [..., m, k]) and U (upper, [..., k, n]) out of the packed LU.
Tensor lower_of(const Tensor& lu) {
  const int64_t m = lu.size(-2), k = std::min(m, lu.size(-1));
  const Tensor l = raw::tril(raw::narrow(lu, -1, 0, k), -1);
  return raw::add(l, raw::eye(m, k, TensorOptions(lu.dtype()).device(lu.device())));
}
Tensor upper_of(const Tensor& lu) {
  const int64_t k = std::min(lu.size(-2), lu.size(-1));
  return raw::triu(raw::narrow(lu, -2, 0, k));
}

// torch's linalg_lu_backward: the gradient of A from those of L [..., m, k] and U [..., k, n]
// (both defined: zeros stand for a gradient that did not arrive); P undefined: A = L U (no pivoting).
Tensor lu_backward(const Tensor& gL, const Tensor& gU, const Tensor& P, const Tensor& L, const Tensor& U) {
  const int64_t m = L.size(-2), n = U.size(-1), k = std::min(m, n);
  Tensor ga;
  if (m == n) {
    // P L^-T [Lᵀ gL ∘ 1_L + gU Uᵀ ∘ 1_U] U^-T
    ga = raw::add(raw::tril(raw::matmul(mT(L), gL), -1), raw::triu(raw::matmul(gU, mT(U))));
    ga = raw::linalg_solve_triangular(mT(U), ga, /*upper=*/false, /*left=*/false, false);
    ga = raw::linalg_solve_triangular(mT(L), ga, /*upper=*/true, /*left=*/true, /*unitriangular=*/true);
  } else if (m < n) {
    // Wide: A1 from U1 = U[:, :k], A2 = P L^-T gU2.
    const Tensor u1 = raw::narrow(U, -1, 0, k);
    ga = raw::sub(raw::matmul(mT(L), gL), raw::matmul(raw::triu(gU), mT(U)));
    ga = raw::linalg_solve_triangular(mT(u1), raw::tril(ga, -1), /*upper=*/false, /*left=*/false, false);
    ga = raw::cat({raw::add(ga, raw::triu(raw::narrow(gU, -1, 0, k))), raw::narrow(gU, -1, k, n - k)}, -1);
    ga = raw::linalg_solve_triangular(mT(L), ga, /*upper=*/true, /*left=*/true, /*unitriangular=*/true);
  } else {
    // Tall: A1 from L1 = L[:k], A2 = P gL2 U^-T.
    const Tensor l1 = raw::narrow(L, -2, 0, k);
    ga = raw::sub(raw::matmul(gU, mT(U)), raw::matmul(mT(L), raw::tril(gL, -1)));
    ga = raw::linalg_solve_triangular(mT(l1), raw::triu(ga), /*upper=*/true, /*left=*/true, /*unitriangular=*/true);
    ga = raw::cat({raw::add(ga, raw::tril(raw::narrow(gL, -2, 0, k), -1)), raw::narrow(gL, -2, k, m - k)}, -2);
    ga = raw::linalg_solve_triangular(mT(U), ga, /*upper=*/false, /*left=*/false, false);
  }
  return P.defined() ? raw::matmul(P, ga) : ga;
}

std::string lu_factor_singular(int32_t info) {
  return "U[" + std::to_string(info) + "," + std::to_string(info) +
         "] is zero and using it on lu_solve would result in a division by zero. If you still want to perform the "
         "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)";
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot, bool check_errors) {
  raw::check_linalg_input(A, "linalg.lu_factor", false);
  auto [lu, piv, info] = raw::linalg_lu_factor(A, pivot);
  if (check_errors) detail::check_info(info, A.dim(), "torch.linalg.lu_factor", lu_factor_singular);
  if (autograd::needs_grad(A)) {
    SavedTensor so(lu, /*is_output=*/true);
    const Tensor piv_saved = piv;
    record("LinalgLuFactorExBackward0", {A}, lu, {so}, [so, piv_saved](const Grads& g, const Needs&) -> Grads {
      const Tensor packed = so.unpack();
      const int64_t k = std::min(packed.size(-2), packed.size(-1));
      const Tensor L = lower_of(packed), U = upper_of(packed);
      const Tensor P = permutation(piv_saved, packed.size(-2), packed.dtype(), packed.device());
      return {lu_backward(raw::narrow(g[0], -1, 0, k), raw::narrow(g[0], -2, 0, k), P, L, U)};
    });
  }
  return {lu, piv, info};
}

std::tuple<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot) {
  auto [lu, piv, info] = lu_factor_ex(A, pivot, /*check_errors=*/true);
  (void)info;
  return {lu, piv};
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot) {
  raw::check_linalg_input(A, "linalg.lu", false);
  auto [packed, piv, info] = raw::linalg_lu_factor(A, pivot);
  (void)info;
  const Tensor P = pivot ? permutation(piv, A.size(-2), A.dtype(), A.device())
                         : raw::empty({0}, TensorOptions(A.dtype()).device(A.device()));
  Tensor L = raw::contiguous(lower_of(packed)), U = raw::contiguous(upper_of(packed));
  if (autograd::needs_grad(A)) {
    SavedTensor sp(pivot ? P : Tensor()), sl(L, /*is_output=*/true), su(U, /*is_output=*/true);
    std::vector<Tensor> outs{L, U};
    record("LinalgLuBackward0", {A}, outs, {sp, sl, su}, [sp, sl, su](const Grads& g, const Needs&) -> Grads {
      return {lu_backward(g[0], g[1], sp.unpack(), sl.unpack(), su.unpack())};
    });
    L = outs[0];
    U = outs[1];
  }
  return {P, L, U};
}

Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  const char* op = "linalg.lu_solve";
  raw::check_linalg_input(LU, op, true);
  if (!B.defined() || B.dim() < 2) throw std::invalid_argument("linalg.lu_solve: The input tensor B must have at least 2 dimensions.");
  if (LU.dtype() != B.dtype()) {
    throw std::invalid_argument("linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type " +
                                std::string(raw::detail::torch_type_name(LU.dtype())) + " and B of type " +
                                raw::detail::torch_type_name(B.dtype()) + " instead");
  }
  if (!pivots.defined() || pivots.dtype() != kInt32) {
    throw std::invalid_argument("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32");
  }
  const int64_t n = LU.size(-1);
  if ((left ? B.size(-2) : B.size(-1)) != n) {
    throw std::invalid_argument(std::string("linalg.lu_solve: Incompatible shapes of A and B for the equation ") +
                                (left ? "AX = B" : "XA = B") + " (" + std::to_string(n) + "x" + std::to_string(n) +
                                " and " + std::to_string(B.size(-2)) + "x" + std::to_string(B.size(-1)) + ")");
  }
  // X A = B is Aᵀ Xᵀ = Bᵀ, so the right-side solves are the left ones with adjoint flipped.
  auto solve_left = [](const Tensor& lu, const Tensor& piv, const Tensor& b, bool adj) {
    if (!adj) return raw::linalg_lu_solve(lu, piv, b);
    // Aᵀ X = B with A = P L U: X = P L^-T U^-T B.
    Tensor y = raw::linalg_solve_triangular(mT(lu), b, /*upper=*/false, true, false);
    y = raw::linalg_solve_triangular(mT(lu), y, /*upper=*/true, true, /*unitriangular=*/true);
    return raw::matmul(permutation(piv, lu.size(-1), lu.dtype(), lu.device()), y);
  };
  Tensor x = left ? solve_left(LU, pivots, B, adjoint) : raw::contiguous(mT(solve_left(LU, pivots, mT(B), !adjoint)));
  if (autograd::needs_grad(LU, B)) {
    SavedTensor slu(LU), sx(x, /*is_output=*/true);
    const Tensor piv = pivots;
    const Shape lu_shape = LU.sizes(), b_shape = B.sizes();
    record("LinalgLuSolveBackward0", {LU, B}, x, {slu, sx},
           [slu, sx, piv, left, adjoint, solve_left, lu_shape, b_shape](const Grads& g, const Needs& needs) -> Grads {
             const Tensor packed = slu.unpack(), X = sx.unpack(), gX = g[0];
             Tensor gB;
             if (needs[1]) {
               // B's gradient solves the adjoint system.
               gB = left ? solve_left(packed, piv, gX, !adjoint)
                         : raw::contiguous(mT(solve_left(packed, piv, mT(gX), adjoint)));
               gB = reduce_to(gB, b_shape);
             }
             Tensor gLU;
             if (needs[0]) {
               const Tensor L = lower_of(packed), U = upper_of(packed);
               if (left != adjoint) {
                 // gR = U^-T (-op(gX)) op(X)ᵀ; gLU = tril(L^-T gR Uᵀ, -1) + triu(gR).
                 const Tensor gR = raw::linalg_solve_triangular(
                     mT(U), raw::neg(left ? raw::matmul(gX, mT(X)) : raw::matmul(mT(gX), X)), false, true, false);
                 const Tensor gL = raw::tril(raw::linalg_solve_triangular(mT(L), raw::matmul(gR, mT(U)), true, true, true), -1);
                 gLU = raw::add(gL, raw::triu(gR));
               } else {
                 // gR = -Pᵀ op(X) op(gX)ᵀ P L^-T; gLU = tril(gR, -1) + triu(Lᵀ gR U^-T).
                 const Tensor P = permutation(piv, packed.size(-1), packed.dtype(), packed.device());
                 Tensor gR = raw::neg(raw::matmul(raw::matmul(mT(P), left ? raw::matmul(X, mT(gX)) : raw::matmul(mT(X), gX)), P));
                 gR = raw::linalg_solve_triangular(mT(L), gR, true, /*left=*/false, true);
                 const Tensor gU = raw::triu(raw::linalg_solve_triangular(mT(U), raw::matmul(mT(L), gR), false, false, false));
                 gLU = raw::add(raw::tril(gR, -1), gU);
               }
               gLU = reduce_to(gLU, lu_shape);
             }
             return {gLU, gB};
           });
  }
  return x;
}

}  // namespace colony::linalg
