// linalg.lstsq composed of differentiable ops (qr, solve_triangular, pinv, svdvals), so its
// gradients come from those; torch differentiates lstsq through the pseudo-inverse, which is the
// same function wherever the rank does not change.
//
// The drivers follow LAPACK's outputs as torch returns them (torch's CPU default is gelsy):
//   gelsy: solution, rank; residuals and singular_values empty.
//   gels:  solution, residuals (when m > n); rank and singular_values empty; A assumed full-rank.
//   gelsd, gelss: solution, residuals (when m > n and every matrix is full-rank), rank, singular_values.
// The solution of a full-rank problem comes from Householder QR (of A when m >= n; of Aᵀ for the
// minimum-norm solution when m < n); a rank-deficient one (not gels) from the pseudo-inverse with
// singular values at or under rcond * σ_max dropped: the minimum-norm least-squares solution all
// four drivers give. The rank is counted from the singular values with the same rcond (default
// eps * max(m, n)); gelsy counts it from a column-pivoted QR, which agrees away from the threshold.
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "autograd/linalg.h"
#include "autograd/linalg_detail.h"
#include "autograd/ops.h"
#include "ops/elementwise_detail.h"

namespace colony::linalg {

std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond,
                                                 std::optional<std::string> driver_arg) {
  const std::string driver = driver_arg ? *driver_arg : "gelsy";
  if (driver != "gels" && driver != "gelsy" && driver != "gelsd" && driver != "gelss") {
    throw std::invalid_argument("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  }
  if (!A.defined() || A.dim() < 2) throw std::invalid_argument("torch.linalg.lstsq: input must have at least 2 dimensions.");
  if (!B.defined() || B.dim() < 1) throw std::invalid_argument("torch.linalg.lstsq: other must have at least 1 dimension.");
  if (A.dtype() != B.dtype()) {
    throw std::invalid_argument("torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype " +
                                std::string(raw::detail::torch_type_name(A.dtype())) + " and other's dtype " +
                                raw::detail::torch_type_name(B.dtype()));
  }
  raw::check_linalg_input(A, "torch.linalg.lstsq", false);
  const bool vec = B.dim() == A.dim() - 1;
  const Tensor b = vec ? unsqueeze(B, -1) : B;
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  if (b.size(-2) != m) throw std::invalid_argument("torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  const double eps = A.dtype() == kFloat64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  const double rtol = rcond && *rcond > 0 ? *rcond : eps * static_cast<double>(std::max(m, n));
  const TensorOptions opts = TensorOptions(A.dtype()).device(A.device());

  Tensor rank, singular_values = raw::empty({0}, opts);
  bool full_rank = true;
  if (driver != "gels") {
    const Tensor s = svdvals(A.detach());
    rank = matrix_rank(A.detach(), std::nullopt, rtol);
    const Tensor r = raw::contiguous(raw::to(rank, kCPU, kInt64));
    for (int64_t i = 0; i < r.numel(); ++i) full_rank = full_rank && r.data_ptr<int64_t>()[i] == k;
    if (driver == "gelsd" || driver == "gelss") singular_values = s;
  } else {
    rank = raw::empty({0}, TensorOptions(kInt64).device(A.device()));
  }

  Tensor x;
  if (full_rank && k > 0) {
    if (m >= n) {
      auto [q, r] = qr(A);
      x = solve_triangular(r, matmul(transpose(q, -2, -1), b), /*upper=*/true);
    } else {
      auto [q, r] = qr(transpose(A, -2, -1));  // Aᵀ = Q R: x = Q R^-T b
      x = matmul(q, solve_triangular(transpose(r, -2, -1), b, /*upper=*/false));
    }
  } else {
    x = matmul(pinv(A, std::nullopt, rtol), b);
  }
  Tensor residuals = raw::empty({0}, opts);
  if (driver != "gelsy" && m > n && full_rank) {
    const Tensor d = sub(matmul(A, x), b);
    residuals = sum(mul(d, d), {-2});
    if (vec) residuals = squeeze(residuals, -1);
  }
  return {vec ? squeeze(x, -1) : x, residuals, rank, singular_values};
}

}  // namespace colony::linalg
