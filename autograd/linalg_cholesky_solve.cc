// torch.cholesky_solve and torch.cholesky_inverse: solves and the inverse from a Cholesky factor,
// with torch's backward formulas (FunctionsManual.cpp: cholesky_solve_backward,
// cholesky_inverse_backward). As torch's, the factor's gradient is the full matrix the formula
// gives (not kept to the triangle the forward read).
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

// X with (L Lᵀ) X = B, or (Uᵀ U) X = B: two triangular solves.
Tensor factor_solve(const Tensor& b, const Tensor& f, bool upper) {
  const Tensor first = upper ? mT(f) : f, second = upper ? f : mT(f);
  const Tensor y = raw::linalg_solve_triangular(first, b, /*upper=*/false, true, false);
  return raw::linalg_solve_triangular(second, y, /*upper=*/true, true, false);
}

}  // namespace

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper) {
  if (!B.defined() || B.dim() < 2) {
    throw std::invalid_argument("b should have at least 2 dimensions, but has " +
                                std::to_string(B.defined() ? B.dim() : 0) + " dimensions instead");
  }
  if (!L.defined() || L.dim() < 2) {
    throw std::invalid_argument("u should have at least 2 dimensions, but has " +
                                std::to_string(L.defined() ? L.dim() : 0) + " dimensions instead");
  }
  if (B.dtype() != L.dtype()) {
    throw std::invalid_argument("Expected b and A to have the same dtype, but found b of type " +
                                std::string(raw::detail::torch_type_name(B.dtype())) + " and A of type " +
                                raw::detail::torch_type_name(L.dtype()) + " instead.");
  }
  if (L.size(-1) != L.size(-2) || L.size(-1) != B.size(-2)) {
    throw std::invalid_argument("Incompatible matrix sizes for cholesky_solve: each A matrix is " +
                                std::to_string(L.size(-2)) + " by " + std::to_string(L.size(-1)) +
                                " but each b matrix is " + std::to_string(B.size(-2)) + " by " +
                                std::to_string(B.size(-1)));
  }
  raw::check_linalg_input(L, "cholesky_solve", true);
  Tensor x = factor_solve(B, L, upper);
  if (autograd::needs_grad(B, L)) {
    SavedTensor sl(L), sx(x, /*is_output=*/true);
    const Shape b_shape = B.sizes(), l_shape = L.sizes();
    record("CholeskySolveBackward0", {B, L}, x, {sl, sx},
           [sl, sx, upper, b_shape, l_shape](const Grads& g, const Needs& needs) -> Grads {
             const Tensor f = sl.unpack(), X = sx.unpack();
             const Tensor gB = factor_solve(g[0], f, upper);  // A is symmetric: A^-T g = A^-1 g
             Tensor gL;
             if (needs[1]) {
               // C = gB Xᵀ + X gBᵀ; gL = -C L (lower) or -U C (upper).
               Tensor c = raw::matmul(gB, mT(X));
               c = raw::add(c, mT(c));
               gL = reduce_to(raw::neg(upper ? raw::matmul(f, c) : raw::matmul(c, f)), l_shape);
             }
             return {needs[0] ? reduce_to(gB, b_shape) : Tensor(), gL};
           });
  }
  return x;
}

Tensor cholesky_inverse(const Tensor& L, bool upper) {
  raw::check_linalg_input(L, "cholesky_inverse", true);
  Tensor out = factor_solve(detail::identity_like(L), L, upper);
  if (autograd::needs_grad(L)) {
    SavedTensor sl(L), so(out, /*is_output=*/true);
    record("CholeskyInverseBackward0", {L}, out, {sl, so}, [sl, so, upper](const Grads& g, const Needs&) -> Grads {
      // gL = -(A^-1 (g + gᵀ) A^-1) L, or -U (...) when upper.
      const Tensor inv = so.unpack(), f = sl.unpack();
      const Tensor c = raw::matmul(inv, raw::matmul(raw::add(g[0], mT(g[0])), inv));
      return {raw::neg(upper ? raw::matmul(f, c) : raw::matmul(c, f))};
    });
  }
  return out;
}

}  // namespace colony::linalg
