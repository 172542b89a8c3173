// linalg.cholesky with torch's cholesky_backward (Iain Murray, arXiv 1602.07527).
#include "autograd/linalg.h"

#include "autograd/autocast.h"
#include "autograd/linalg_detail.h"
#include "autograd/op_util.h"

namespace colony::linalg {

using autograd::record;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using detail::mT;

std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A_arg, bool upper, bool check_errors) {
  const Tensor A = autocast::cast(autocast::Op::linalg_cholesky, A_arg);
  auto [out, info] = raw::linalg_cholesky_ex(A, upper);
  if (check_errors) {
    detail::check_info(info, A.dim(), "linalg.cholesky", [](int32_t order) {
      return "The factorization could not be completed because the input is not positive-definite (the leading "
             "minor of order " +
             std::to_string(order) + " is not positive-definite).";
    });
  }
  if (autograd::needs_grad(A)) {
    SavedTensor sl(out, /*is_output=*/true);
    record("LinalgCholeskyExBackward0", {A}, out, {sl}, [sl, upper](const Grads& g, const Needs&) -> Grads {
      // gA = L^-T Φ(Lᵀ gL) L^-1, Φ taking the lower triangle with half the diagonal
      // (0.5 (X + strict_lower(X)ᵀ) of X = tril(Lᵀ gL)).
      const Tensor l = upper ? mT(sl.unpack()) : sl.unpack();
      const Tensor gl = upper ? mT(g[0]) : g[0];
      Tensor ga = raw::tril(raw::matmul(mT(l), gl));
      ga = raw::mul(raw::add(ga, mT(raw::tril(ga, -1))), 0.5);
      ga = raw::linalg_solve_triangular(mT(l), ga, /*upper=*/true, /*left=*/true, false);
      ga = raw::linalg_solve_triangular(l, ga, /*upper=*/false, /*left=*/false, false);
      return {ga};
    });
  }
  return {out, info};
}

Tensor cholesky(const Tensor& A, bool upper) { return std::get<0>(cholesky_ex(A, upper, /*check_errors=*/true)); }

}  // namespace colony::linalg
