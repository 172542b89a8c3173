// Shared by the linalg op files (autograd/linalg_*.cc): the raw pieces their forwards and backward
// formulas are written with, and torch's wording of a failed factorization. Not public API.
#pragma once

#include <stdexcept>
#include <string>

#include "ops/raw_linalg_ops.h"
#include "ops/raw_ops.h"

namespace colony::linalg::detail {

// The transpose of the last two dims (torch's .mT).
inline Tensor mT(const Tensor& t) { return raw::transpose(t, -2, -1); }

// A diagonal matrix [..., n, n] from v [..., n].
inline Tensor diag_embed(const Tensor& v) {
  const int64_t n = v.size(-1);
  return raw::mul(raw::unsqueeze(v, -1), raw::eye(n, n, TensorOptions(v.dtype()).device(v.device())));
}

// The identity broadcast to a's shape [..., n, n] (contiguous).
inline Tensor identity_like(const Tensor& a) {
  const int64_t n = a.size(-1);
  return raw::contiguous(raw::expand(raw::eye(n, n, TensorOptions(a.dtype()).device(a.device())), a.sizes()));
}

// X with A X = B (B [..., n, k]), or X A = B when !left, by LU; no check of singularity (the
// backward formulas divide by what the forward already checked).
inline Tensor lu_solve_any(const Tensor& a, const Tensor& b, bool left) {
  const Tensor lhs = left ? a : mT(a);
  auto [lu, piv, info] = raw::linalg_lu_factor(lhs);
  (void)info;
  const Tensor x = raw::linalg_lu_solve(lu, piv, left ? b : mT(b));
  return left ? x : mT(x);
}

// Throws torch's LinAlgError text when some info is nonzero: "<op>: (Batch element i): <what>"
// (the batch part only for batched inputs); what(info) words the failure.
template <typename What>
void check_info(const Tensor& info, int64_t input_dim, const std::string& op, What what) {
  const Tensor h = raw::contiguous(raw::to(info, kCPU, kInt32));
  const int32_t* p = h.data_ptr<int32_t>();
  for (int64_t b = 0; b < h.numel(); ++b) {
    if (p[b] == 0) continue;
    const std::string where = input_dim > 2 ? "(Batch element " + std::to_string(b) + "): " : "";
    throw std::runtime_error(op + ": " + where + what(p[b]));
  }
}

}  // namespace colony::linalg::detail
