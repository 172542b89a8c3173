// linalg.qr with torch's linalg_qr_backward (m >= n: gA = (gQ + Q copyltu(M)) R^-T with
// M = R gRᵀ - gQᵀ Q; m < n: A = [Q X | Q Y], the square part that way with gQ + (Q Y) gYᵀ, as Y = Qᵀ A_Y
// also moves with Q, and the rest Q gY).
#include "autograd/linalg.h"

#include <stdexcept>

#include "autograd/autocast.h"
#include "autograd/linalg_detail.h"
#include "autograd/op_util.h"

namespace colony::linalg {
namespace {

using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using detail::mT;

// The square case A = Q R (R [n, n] invertible, Q [m, n]).
Tensor qr_backward_square(const Tensor& gq, const Tensor& gr, const Tensor& q, const Tensor& r) {
  const Tensor m = raw::sub(raw::matmul(r, mT(gr)), raw::matmul(mT(gq), q));
  const Tensor copyltu = raw::add(raw::tril(m), mT(raw::tril(m, -1)));  // symmetric from M's lower triangle
  const Tensor b = raw::add(gq, raw::matmul(q, copyltu));
  // X Rᵀ = b: a right solve with the lower triangle Rᵀ.
  return raw::linalg_solve_triangular(mT(r), b, /*upper=*/false, /*left=*/false, false);
}

}  // namespace

std::tuple<Tensor, Tensor> qr(const Tensor& A_arg, const std::string& mode) {
  const Tensor A = autocast::cast(autocast::Op::linalg_qr, A_arg);
  auto [q, r] = raw::linalg_qr(A, mode);
  if (!autograd::needs_grad(A)) return {q, r};
  const int64_t m = A.size(-2), n = A.size(-1);
  std::vector<Tensor> outs{q, r};
  SavedTensor sq(q, /*is_output=*/true), sr(r, /*is_output=*/true);
  autograd::record("LinalgQrBackward0", {A}, outs, {sq, sr}, [sq, sr, mode, m, n](const Grads& g, const Needs&) -> Grads {
    if (mode == "r") {
      throw std::runtime_error(
          "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
          "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
    }
    if (mode == "complete" && m > n) {
      throw std::runtime_error("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
    }
    const Tensor q = sq.unpack(), r = sr.unpack();
    if (m >= n) return {qr_backward_square(g[0], g[1], q, r)};
    // A = Q [X | Y] with X [m, m]: X's part through the square case with gQ + (Q Y) gYᵀ, Y's part Q gY.
    const Tensor x = raw::narrow(r, -1, 0, m), y = raw::narrow(r, -1, m, n - m);
    const Tensor gx = raw::narrow(g[1], -1, 0, m), gy = raw::narrow(g[1], -1, m, n - m);
    const Tensor gu = qr_backward_square(raw::add(g[0], raw::matmul(raw::matmul(q, y), mT(gy))), gx, q, x);
    return {raw::cat({gu, raw::matmul(q, gy)}, -1)};
  });
  return {outs[0], outs[1]};
}

}  // namespace colony::linalg
