// The linalg ops composed of other differentiable ops (the decompositions of linalg_*.cc, matmul,
// the reductions), so their gradients come from those: pinv, matrix_rank, vector_norm,
// matrix_norm, cross, matrix_power, multi_dot.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "autograd/autocast.h"
#include "autograd/linalg.h"
#include "autograd/linalg_detail.h"
#include "autograd/ops.h"
#include "ops/elementwise_detail.h"

namespace colony::linalg {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double epsilon_of(DType dtype) {
  return dtype == kFloat64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
}

// torch's tolerance rule of pinv and matrix_rank: max(atol, rtol * σ_max) per matrix, rtol
// defaulting to eps * max(m, n) when neither is given and to 0 when only atol is. No gradient.
Tensor tolerance(const Tensor& s_abs, int64_t m, int64_t n, DType dtype, std::optional<double> atol,
                 std::optional<double> rtol) {
  const double r = rtol ? *rtol : (atol ? 0.0 : epsilon_of(dtype) * static_cast<double>(std::max(m, n)));
  const Tensor smax = raw::amax(s_abs, {-1}, /*keepdim=*/true);
  return raw::binary(raw::BinaryOp::Maximum, raw::mul(smax, r), atol ? *atol : 0.0);
}

int64_t wrap_dim(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

}  // namespace

Tensor pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  raw::check_linalg_input(A, "linalg.pinv", hermitian);
  const int64_t m = A.size(-2), n = A.size(-1);
  if (hermitian) {
    auto [w, v] = eigh(A);
    const Tensor keep = raw::binary(raw::BinaryOp::Gt, raw::abs(w.detach()),
                                    tolerance(raw::abs(w.detach()), m, n, A.dtype(), atol, rtol));
    const Tensor w_inv = where(keep, reciprocal(w), 0.0);
    return matmul(mul(v, unsqueeze(w_inv, -2)), transpose(v, -2, -1));
  }
  auto [u, s, vh] = svd(A, /*full_matrices=*/false);
  const Tensor keep =
      raw::binary(raw::BinaryOp::Gt, s.detach(), tolerance(s.detach(), m, n, A.dtype(), atol, rtol));
  const Tensor s_inv = where(keep, reciprocal(s), 0.0);
  return matmul(mul(transpose(vh, -2, -1), unsqueeze(s_inv, -2)), transpose(u, -2, -1));  // V S⁺ Uᵀ
}

Tensor matrix_rank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  raw::check_linalg_input(A, "linalg.matrix_rank", hermitian);
  const Tensor s = hermitian ? raw::abs(std::get<0>(raw::linalg_eigh(A, false, false)))
                             : std::get<1>(raw::linalg_svd(A, false, false));
  const Tensor tol = tolerance(s, A.size(-2), A.size(-1), A.dtype(), atol, rtol);
  return raw::sum(raw::binary(raw::BinaryOp::Gt, s, tol), {-1});
}

Tensor vector_norm(const Tensor& x_arg, double ord, const std::vector<int64_t>& dims, bool keepdim) {
  const Tensor x = autocast::cast(autocast::Op::linalg_vector_norm, x_arg);
  if (!is_floating(x.dtype())) {
    throw std::invalid_argument(std::string("linalg.vector_norm: Expected a floating point or complex tensor as input. Got ") +
                                raw::detail::torch_type_name(x.dtype()));
  }
  return norm(x, ord, dims, keepdim);
}

Tensor matrix_norm(const Tensor& A_arg, const std::string& ord, const std::vector<int64_t>& dims, bool keepdim) {
  const Tensor A = autocast::cast(autocast::Op::linalg_matrix_norm, A_arg);
  raw::check_linalg_input(A, "linalg.matrix_norm", false);
  if (dims.size() != 2) throw std::invalid_argument("linalg.matrix_norm: dim must be a 2-tuple of ints");
  if (ord == "fro") return norm(A, 2.0, dims, keepdim);
  if (ord != "nuc") {
    throw std::invalid_argument("linalg.matrix_norm: Order " + ord + " not supported.");
  }
  const int64_t d0 = wrap_dim(dims[0], A.dim()), d1 = wrap_dim(dims[1], A.dim());
  Tensor out = sum(svdvals(movedim(A, {d0, d1}, {-2, -1})), {-1});
  if (keepdim) {
    out = unsqueeze(out, std::min(d0, d1));
    out = unsqueeze(out, std::max(d0, d1));
  }
  return out;
}

Tensor matrix_norm(const Tensor& A_arg, double ord, const std::vector<int64_t>& dims, bool keepdim) {
  const Tensor A = autocast::cast(autocast::Op::linalg_matrix_norm, A_arg);
  raw::check_linalg_input(A, "linalg.matrix_norm", false);
  if (dims.size() != 2) throw std::invalid_argument("linalg.matrix_norm: dim must be a 2-tuple of ints");
  const int64_t d0 = wrap_dim(dims[0], A.dim()), d1 = wrap_dim(dims[1], A.dim());
  Tensor out;
  if (ord == 2.0 || ord == -2.0) {
    const Tensor s = svdvals(movedim(A, {d0, d1}, {-2, -1}));
    out = ord > 0 ? amax(s, {-1}) : amin(s, {-1});
  } else if (std::abs(ord) == 1.0 || std::abs(ord) == kInf) {
    // 1: the largest column sum (summed over rows d0, extreme over d1); inf: the largest row sum.
    const bool columns = std::abs(ord) == 1.0;
    const Tensor sums = sum(abs(A), {columns ? d0 : d1}, /*keepdim=*/true);
    const std::vector<int64_t> over{columns ? d1 : d0};
    out = ord > 0 ? amax(sums, over, true) : amin(sums, over, true);
    out = squeeze(squeeze(out, std::max(d0, d1)), std::min(d0, d1));
  } else {
    throw std::invalid_argument("linalg.matrix_norm: Order " + std::to_string(ord) + " not supported.");
  }
  if (keepdim) {
    out = unsqueeze(out, std::min(d0, d1));
    out = unsqueeze(out, std::max(d0, d1));
  }
  return out;
}

Tensor cross(const Tensor& a, const Tensor& b, int64_t dim) {
  const Shape shape = broadcast_shapes(a.sizes(), b.sizes(), "linalg.cross");
  const int64_t d = wrap_dim(dim, static_cast<int64_t>(shape.size()));
  if (d < 0 || d >= static_cast<int64_t>(shape.size()) || a.size(wrap_dim(dim, a.dim())) != 3 ||
      b.size(wrap_dim(dim, b.dim())) != 3) {
    throw std::invalid_argument("linalg.cross: inputs dimension " + std::to_string(dim) + " must have length 3. Got " +
                                std::to_string(a.size(wrap_dim(dim, a.dim()))) + " and " +
                                std::to_string(b.size(wrap_dim(dim, b.dim()))));
  }
  const Tensor x = expand(a, shape), y = expand(b, shape);
  auto part = [&](const Tensor& t, int64_t i) { return narrow(t, d, i, 1); };
  return cat({sub(mul(part(x, 1), part(y, 2)), mul(part(x, 2), part(y, 1))),
              sub(mul(part(x, 2), part(y, 0)), mul(part(x, 0), part(y, 2))),
              sub(mul(part(x, 0), part(y, 1)), mul(part(x, 1), part(y, 0)))},
             d);
}

Tensor matrix_power(const Tensor& A, int64_t n) {
  raw::check_linalg_input(A, "linalg.matrix_power", true);
  if (n == 0) return detail::identity_like(A);
  Tensor base = n < 0 ? inv(A) : A;
  int64_t e = n < 0 ? -n : n;
  Tensor result;
  // Square and multiply: ceil(log2 n) squarings and one product per set bit.
  while (e > 0) {
    if (e & 1) result = result.defined() ? matmul(result, base) : base;
    e >>= 1;
    if (e > 0) base = matmul(base, base);
  }
  return result;
}

Tensor multi_dot(const std::vector<Tensor>& tensors) {
  const size_t count = tensors.size();
  if (count < 2) {
    throw std::invalid_argument("multi_dot(): expected at least 2 tensors but got " + std::to_string(count));
  }
  std::vector<Tensor> mats(tensors);
  const bool first_vector = mats.front().dim() == 1, last_vector = mats.back().dim() == 1;
  if (first_vector) mats.front() = unsqueeze(mats.front(), 0);
  if (last_vector) mats.back() = unsqueeze(mats.back(), 1);
  for (size_t i = 0; i < count; ++i) {
    if (mats[i].dim() != 2) {
      throw std::invalid_argument("multi_dot(): tensor " + std::to_string(i) + " must be 2D but got " +
                                  std::to_string(tensors[i].dim()) + "D");
    }
    if (i > 0 && mats[i - 1].size(1) != mats[i].size(0)) {
      throw std::invalid_argument("multi_dot(): tensors " + std::to_string(i - 1) + " and " + std::to_string(i) +
                                  " with shapes " + shape_str(tensors[i - 1].sizes()) + " and " +
                                  shape_str(tensors[i].sizes()) + " cannot be multiplied");
    }
  }
  // The matrix-chain order (CLRS 15.2): cost[i][j] the fewest multiplications for mats[i..j].
  std::vector<int64_t> dims{mats[0].size(0)};
  for (const Tensor& m : mats) dims.push_back(m.size(1));
  std::vector<std::vector<int64_t>> cost(count, std::vector<int64_t>(count, 0)), split(cost);
  for (size_t len = 1; len < count; ++len) {
    for (size_t i = 0; i + len < count; ++i) {
      const size_t j = i + len;
      cost[i][j] = std::numeric_limits<int64_t>::max();
      for (size_t k = i; k < j; ++k) {
        const int64_t c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1];
        if (c < cost[i][j]) cost[i][j] = c, split[i][j] = static_cast<int64_t>(k);
      }
    }
  }
  std::function<Tensor(size_t, size_t)> product = [&](size_t i, size_t j) -> Tensor {
    if (i == j) return mats[i];
    const size_t k = static_cast<size_t>(split[i][j]);
    return mm(product(i, k), product(k + 1, j));
  };
  Tensor out = product(0, count - 1);
  if (first_vector) out = squeeze(out, 0);
  if (last_vector) out = squeeze(out, -1);
  return out;
}

}  // namespace colony::linalg
