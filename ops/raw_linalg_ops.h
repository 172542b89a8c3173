// The raw matrix decompositions and solvers under colony::linalg (autograd/linalg.h): LU, triangular
// solves, Cholesky, Householder QR, the symmetric eigensolver and the SVD, batched over leading
// dims, float32 and float64. Like raw_ops.h these check and allocate and record no history. The
// kernels are the CPU's (kernels/cpu/linalg_decomp.h); a CUDA input is copied to the host,
// decomposed there and its results copied back (no cuSOLVER path yet), so results are on the
// input's device either way. Errors and failure codes (info) are returned, not thrown: the
// differentiable layer words them as torch does.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "tensor/tensor.h"

namespace colony::raw {

// torch's argument checks of the linalg ops, with op the name torch's message starts with
// ("linalg.inv"): at least 2-D; floating (float32 or float64: "<op>: Expected a floating point or
// complex tensor as input. Got Long", "<op>: Low precision dtypes not supported. Got Half");
// square when asked ("<op>: A must be batches of square matrices, but they are 2 by 3 matrices").
void check_linalg_input(const Tensor& a, const char* op, bool square);

// LU with partial pivoting: LU [..., m, n] (L's multipliers below the diagonal), int32 pivots
// [..., min(m, n)] (1-based, LAPACK's), int32 info [...] (0, or the first zero of U's diagonal, 1-based).
// pivot = false: LU without pivoting (A = L U, pivots 1..min(m, n)), as torch's CUDA computes it.
std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor(const Tensor& a, bool pivot = true);
// det, sign and log|det| [...] of the square matrices whose lu_factor is (lu, pivots): U's diagonal
// product with the permutation's sign (a zero pivot: det 0, sign 0, log|det| -inf, as torch's).
std::tuple<Tensor, Tensor, Tensor> linalg_lu_det(const Tensor& lu, const Tensor& pivots);
// X with A X = B for A given by its LU and pivots (square), B [..., n, k]; batch dims broadcast.
Tensor linalg_lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b);
// X with op(T) X = B (left) or X op(T) = B (right), T the upper or lower triangle of a [..., n, n]
// (unitriangular: ones assumed on the diagonal); batch dims broadcast.
Tensor linalg_solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular);
// L (lower; upper: Lᵀ) and int32 info [...]: 0 or the order of the first leading minor that is not
// positive-definite. Reads the lower triangle (upper: the upper one) only, as LAPACK's potrf.
std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor& a, bool upper);
// Q and R; mode "reduced" (Q [..., m, k], R [..., k, n]), "complete" (Q [..., m, m], R [..., m, n])
// or "r" (Q empty, R as reduced's). R's diagonal signs are LAPACK's geqrf's.
std::tuple<Tensor, Tensor> linalg_qr(const Tensor& a, const std::string& mode);
// Eigenvalues ascending [..., n], eigenvectors as columns [..., n, n] (undefined unless want_vectors),
// int32 info [...] (1: did not converge), of the symmetric matrix read from a's lower triangle
// (upper: the upper one).
std::tuple<Tensor, Tensor, Tensor> linalg_eigh(const Tensor& a, bool upper, bool want_vectors);
// U, S (descending), Vh and int32 info of a [..., m, n]; U [..., m, full ? m : k], Vh
// [..., full ? n : k, n]; U and Vh undefined unless want_vectors.
std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_svd(const Tensor& a, bool full_matrices, bool want_vectors);

}  // namespace colony::raw
