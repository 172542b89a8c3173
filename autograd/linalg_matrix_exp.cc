// linalg.matrix_exp and linalg.vander, composed of differentiable ops (matmul, solve, cumprod),
// so their gradients come from those.
//
// matrix_exp is Higham's scaling and squaring with a diagonal Padé approximant (Higham 2005, "The
// scaling and squaring method for the matrix exponential revisited"): degree 3, 5, 7, 9 or 13 in
// float64 (3, 5 or 7 in float32) by the 1-norm, the matrix scaled by 2^-s into the degree's range
// and the result squared s times. torch's CPU kernel takes Bader, Blanes and Casas' optimized
// Taylor polynomials instead; both are accurate to rounding, so values agree to a few ulps of
// the result's norm. One degree and s serve a whole batch (chosen by its largest norm: more
// accurate than needed for the others, never less). The gradient is that of the approximant
// (torch differentiates exp itself through a 2n x 2n block exponential); the two agree to the
// same rounding.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "autograd/linalg.h"
#include "autograd/linalg_detail.h"
#include "autograd/ops.h"

namespace colony::linalg {
namespace {

struct PadeDegree {
  int degree;
  double theta;  // the largest 1-norm the degree is accurate for (Higham 2005, table 2.3 / 2.1)
};
constexpr PadeDegree kDegrees64[] = {{3, 1.495585217958292e-2}, {5, 2.539398330063230e-1},
                                     {7, 9.504178996162932e-1}, {9, 2.097847961257068e0},
                                     {13, 5.371920351148152e0}};
constexpr PadeDegree kDegrees32[] = {{3, 4.258730016922831e-1}, {5, 1.880152677804762e0},
                                     {7, 3.925724783138660e0}};

std::vector<double> pade_coefficients(int degree) {
  switch (degree) {
    case 3: return {120., 60., 12., 1.};
    case 5: return {30240., 15120., 3360., 420., 30., 1.};
    case 7: return {17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.};
    case 9: return {17643225600., 8821612800., 2075673600., 302702400., 34594560., 2162160., 110880., 3960., 90., 1.};
    default:
      return {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
              10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.};
  }
}

// r(A) = (V - U)^-1 (V + U), U the odd part of the Padé numerator, V the even part.
Tensor pade(const Tensor& a, int degree) {
  const std::vector<double> b = pade_coefficients(degree);
  const Tensor eye = detail::identity_like(a.detach());
  const Tensor a2 = matmul(a, a);
  Tensor u, v;
  if (degree == 13) {
    const Tensor a4 = matmul(a2, a2), a6 = matmul(a4, a2);
    const Tensor u_inner = add(add(mul(a6, b[13]), mul(a4, b[11])), mul(a2, b[9]));
    const Tensor u_sum = add(add(add(add(matmul(a6, u_inner), mul(a6, b[7])), mul(a4, b[5])), mul(a2, b[3])), mul(eye, b[1]));
    u = matmul(a, u_sum);
    const Tensor v_inner = add(add(mul(a6, b[12]), mul(a4, b[10])), mul(a2, b[8]));
    v = add(add(add(add(matmul(a6, v_inner), mul(a6, b[6])), mul(a4, b[4])), mul(a2, b[2])), mul(eye, b[0]));
  } else {
    Tensor power = eye;  // A^(2j)
    Tensor u_sum = mul(eye, b[1]);
    v = mul(eye, b[0]);
    for (int j = 1; 2 * j <= degree; ++j) {
      power = j == 1 ? a2 : matmul(power, a2);
      u_sum = add(u_sum, mul(power, b[2 * j + 1]));
      v = add(v, mul(power, b[2 * j]));
    }
    u = matmul(a, u_sum);
  }
  return solve(sub(v, u), add(v, u));
}

}  // namespace

Tensor matrix_exp(const Tensor& A) {
  raw::check_linalg_input(A, "linalg.matrix_exp", true);
  if (A.numel() == 0) return add(A, 0.0);
  // The largest 1-norm (max column sum of |A|) over the batch; no gradient (a piecewise constant choice).
  const Tensor norms = raw::amax(raw::sum(raw::abs(A.detach()), {-2}), {-1});
  const double norm = raw::contiguous(raw::to(raw::amax(raw::reshape(norms, {-1})), kCPU, kFloat64)).item<double>();
  const bool f64 = A.dtype() == kFloat64;
  const PadeDegree* degrees = f64 ? kDegrees64 : kDegrees32;
  const int count = f64 ? 5 : 3;
  for (int i = 0; i < count - 1; ++i)
    if (norm <= degrees[i].theta) return pade(A, degrees[i].degree);
  const PadeDegree top = degrees[count - 1];
  const int s = norm > top.theta ? static_cast<int>(std::ceil(std::log2(norm / top.theta))) : 0;
  Tensor r = pade(s > 0 ? mul(A, std::ldexp(1.0, -s)) : A, top.degree);
  for (int i = 0; i < s; ++i) r = matmul(r, r);
  return r;
}

Tensor vander(const Tensor& x, std::optional<int64_t> N) {
  if (!x.defined()) throw std::invalid_argument("linalg.vander: expected a defined x");
  const int64_t n = N ? *N : (x.dim() > 0 ? x.size(-1) : 1);
  if (x.dim() == 0 || n <= 1) throw std::invalid_argument("N must be greater than 1.");
  // [1, x, x^2, ..., x^(N-1)] along a new last dim: ones, then the running products of N-1 copies.
  Shape wide = x.sizes();
  wide.push_back(n - 1);
  const Tensor powers = cumprod(expand(unsqueeze(x, -1), wide), -1);
  return cat({raw::ones_like(unsqueeze(x.detach(), -1)), powers}, -1);
}

}  // namespace colony::linalg
