// linalg.eigh / eigvalsh and linalg.svd / svdvals with torch's backward formulas
// (FunctionsManual.cpp: linalg_eig_backward's Hermitian case, svd_backward), real case.
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
using detail::diag_embed;
using detail::mT;

bool upper_of(const std::string& uplo) {
  if (uplo != "L" && uplo != "U") throw std::invalid_argument("Expected UPLO argument to be 'L' or 'U', but got " + uplo);
  return uplo == "U";
}

void check_converged(const Tensor& info, int64_t dim, const char* op) {
  detail::check_info(info, dim, op, [](int32_t code) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "eigenvalues (error code: " +
           std::to_string(code) + ").";
  });
}

// V (diag(gL) + skew(Vᵀ gV) / E) Vᵀ with skew(X) = (X - Xᵀ) / 2 and E_ij = λ_j - λ_i off the
// diagonal: the gradient projected onto the symmetric matrices, as torch's.
Tensor eigh_backward(const Tensor& gl, const Tensor& gv, const Tensor& l, const Tensor& v) {
  Tensor inner;
  if (gv.defined()) {
    const Tensor vgv = raw::matmul(mT(v), gv);
    const Tensor skew = raw::mul(raw::sub(vgv, mT(vgv)), 0.5);
    const Tensor e = raw::sub(raw::unsqueeze(l, -2), raw::unsqueeze(l, -1));
    const int64_t n = l.size(-1);
    const Tensor on_diag = raw::eye(n, n, TensorOptions(kBool).device(l.device()));
    inner = raw::where(on_diag, diag_embed(gl), raw::div(skew, e));
  } else {
    inner = diag_embed(gl);
  }
  return raw::matmul(v, raw::matmul(inner, mT(v)));
}

// torch's svd_backward (real): A = U S Vh with U [m, k], Vh [k, n].
Tensor svd_backward(const Tensor& gu, const Tensor& gs, const Tensor& gvh, const Tensor& u, const Tensor& s,
                    const Tensor& vh) {
  const int64_t m = u.size(-2), n = vh.size(-1);
  const Tensor v = mT(vh), gv = mT(gvh);
  auto skew = [](const Tensor& x) { return raw::sub(x, mT(x)); };
  const Tensor uhgu = skew(raw::matmul(mT(u), gu));
  const Tensor vhgv = skew(raw::matmul(vh, gv));
  // E_ij = s_j² - s_i², 1 on the diagonal (its entries are overwritten by gS).
  const Tensor s2 = raw::mul(s, s);
  const int64_t k = s.size(-1);
  const Tensor on_diag = raw::eye(k, k, TensorOptions(kBool).device(s.device()));
  const Tensor e = raw::masked_fill(raw::sub(raw::unsqueeze(s2, -2), raw::unsqueeze(s2, -1)), on_diag, 1.0);
  Tensor ga = raw::div(raw::add(raw::mul(uhgu, raw::unsqueeze(s, -2)), raw::mul(raw::unsqueeze(s, -1), vhgv)), e);
  ga = raw::add(ga, diag_embed(gs));
  if (m > n) {
    ga = raw::matmul(u, ga);
    const Tensor gu_sinv = raw::div(gu, raw::unsqueeze(s, -2));
    ga = raw::add(ga, raw::sub(gu_sinv, raw::matmul(u, raw::matmul(mT(u), gu_sinv))));
    return raw::matmul(ga, vh);
  }
  if (m < n) {
    ga = raw::matmul(ga, vh);
    const Tensor gv_sinv = raw::div(gv, raw::unsqueeze(s, -2));
    ga = raw::add(ga, raw::sub(mT(gv_sinv), raw::matmul(raw::matmul(mT(gv_sinv), v), vh)));
    return raw::matmul(u, ga);
  }
  return raw::matmul(u, raw::matmul(ga, vh));
}

}  // namespace

std::tuple<Tensor, Tensor> eigh(const Tensor& A_arg, const std::string& UPLO) {
  const Tensor A = autocast::cast(autocast::Op::linalg_eigh, A_arg);
  auto [w, v, info] = raw::linalg_eigh(A, upper_of(UPLO), /*want_vectors=*/true);
  check_converged(info, A.dim(), "linalg.eigh");
  if (!autograd::needs_grad(A)) return {w, v};
  std::vector<Tensor> outs{w, v};
  SavedTensor sw(w, /*is_output=*/true), sv(v, /*is_output=*/true);
  autograd::record("LinalgEighBackward0", {A}, outs, {sw, sv}, [sw, sv](const Grads& g, const Needs&) -> Grads {
    return {eigh_backward(g[0], g[1], sw.unpack(), sv.unpack())};
  });
  return {outs[0], outs[1]};
}

Tensor eigvalsh(const Tensor& A_arg, const std::string& UPLO) {
  const Tensor A = autocast::cast(autocast::Op::linalg_eigvalsh, A_arg);
  const bool grad = autograd::needs_grad(A);
  // The gradient V diag(gL) Vᵀ needs the eigenvectors, computed only then (as torch's).
  auto [w, v, info] = raw::linalg_eigh(A, upper_of(UPLO), /*want_vectors=*/grad);
  check_converged(info, A.dim(), "linalg.eigvalsh");
  if (grad) {
    SavedTensor sv(v);
    autograd::record("LinalgEighBackward0", {A}, w, {sv}, [sv](const Grads& g, const Needs&) -> Grads {
      return {eigh_backward(g[0], Tensor(), Tensor(), sv.unpack())};
    });
  }
  return w;
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A_arg, bool full_matrices) {
  const Tensor A = autocast::cast(autocast::Op::linalg_svd, A_arg);
  auto [u, s, vh, info] = raw::linalg_svd(A, full_matrices, /*want_vectors=*/true);
  check_converged(info, A.dim(), "linalg.svd");
  if (!autograd::needs_grad(A)) return {u, s, vh};
  std::vector<Tensor> outs{u, s, vh};
  SavedTensor su(u, true), ss(s, true), svh(vh, true);
  autograd::record("LinalgSvdBackward0", {A}, outs, {su, ss, svh}, [su, ss, svh](const Grads& g, const Needs&) -> Grads {
    // full_matrices: only the first k columns of U (rows of Vh) enter A, so only theirs count.
    const Tensor s = ss.unpack();
    const int64_t k = s.size(-1);
    const Tensor u = raw::narrow(su.unpack(), -1, 0, k), vh = raw::narrow(svh.unpack(), -2, 0, k);
    const Tensor gu = raw::narrow(g[0], -1, 0, k), gvh = raw::narrow(g[2], -2, 0, k);
    return {svd_backward(gu, g[1], gvh, u, s, vh)};
  });
  return {outs[0], outs[1], outs[2]};
}

Tensor svdvals(const Tensor& A_arg) {
  const Tensor A = autocast::cast(autocast::Op::linalg_svdvals, A_arg);
  const bool grad = autograd::needs_grad(A);
  auto [u, s, vh, info] = raw::linalg_svd(A, /*full_matrices=*/false, /*want_vectors=*/grad);
  check_converged(info, A.dim(), "linalg.svd");
  if (grad) {
    SavedTensor su(u), svh(vh);
    autograd::record("LinalgSvdBackward0", {A}, s, {su, svh}, [su, svh](const Grads& g, const Needs&) -> Grads {
      return {raw::matmul(raw::mul(su.unpack(), raw::unsqueeze(g[0], -2)), svh.unpack())};  // U diag(gS) Vh
    });
  }
  return s;
}

}  // namespace colony::linalg
