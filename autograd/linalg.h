// torch.linalg's decompositions and solvers, batched over leading dims, float32 and float64, each
// differentiable with torch's backward formula (torch/csrc/autograd/FunctionsManual.cpp):
//
//   linalg::inv, inv_ex, det, slogdet, solve, solve_triangular   (autograd/linalg_lu.cc)
//   linalg::lu_factor, lu_factor_ex, lu, lu_solve                 (autograd/linalg_lu_factor.cc)
//   linalg::cholesky, cholesky_ex                                 (autograd/linalg_cholesky.cc)
//   linalg::cholesky_solve, cholesky_inverse (torch.cholesky_*)   (autograd/linalg_cholesky_solve.cc)
//   linalg::qr                                                    (autograd/linalg_qr.cc)
//   linalg::eigh, eigvalsh, svd, svdvals                          (autograd/linalg_spectral.cc)
//   linalg::lstsq                                                 (autograd/linalg_lstsq.cc, composed)
//   linalg::matrix_exp, vander                                    (autograd/linalg_matrix_exp.cc, composed)
//   linalg::pinv, matrix_rank, vector_norm, matrix_norm, cross, matrix_power, multi_dot
//                                                                 (autograd/linalg_compose.cc,
//                                                                  composed of the ops above)
//
// Errors are torch's words: integer inputs ("linalg.inv: Expected a floating point or complex
// tensor as input. Got Long"), singular ("linalg.inv: The diagonal element 2 is zero, the
// inversion could not be completed because the input matrix is singular.") and indefinite inputs
// ("linalg.cholesky: The factorization could not be completed because the input is not
// positive-definite (the leading minor of order 2 is not positive-definite)."), with "(Batch
// element i): " for batched inputs; they are std::runtime_error (torch's LinAlgError), argument
// errors std::invalid_argument.
//
// The computation is the CPU's (kernels/cpu/linalg_decomp.h): LU with partial pivoting, Cholesky,
// Householder QR, tridiagonalization and implicit QL for eigh, bidiagonalization and Golub-Kahan QR
// for the SVD (LAPACK's dsyev and dgesvd, not torch's divide-and-conquer syevd/gesdd, so the
// vectors' signs may differ from torch's). A CUDA input is copied to
// the host, decomposed there and its results copied back: correct, not fast (no cuSOLVER path yet).
// Eigenvectors and singular vectors are determined up to sign (as LAPACK's); differentiate through
// functions invariant to those signs, as torch's documentation says.
// Not differentiable twice: a second backward through their gradients taken with create_graph
// throws (autograd/README.md lists the ops that are).
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "tensor/tensor.h"

namespace colony::linalg {

Tensor inv(const Tensor& A);
// The inverse and int32 info [...] (0, or the first zero of U's diagonal); throws only when check_errors.
std::tuple<Tensor, Tensor> inv_ex(const Tensor& A, bool check_errors = false);
Tensor det(const Tensor& A);
// sign and log|det|; a singular matrix gives sign 0 and -inf.
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);
// X with A X = B (left) or X A = B; B a batch of vectors [..., n] when it is 1-D or A's shape less
// its last dim (torch's rule), else of matrices [..., n, k]; batch dims broadcast.
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);
// X with T X = B (left) or X T = B for the upper or lower triangle T of A.
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true, bool unitriangular = false);

// The packed LU (L below the diagonal, U on and above) and int32 pivots (LAPACK's 1-based row
// swaps) with A = P L U. lu_factor throws on an exact zero of U's diagonal (torch's words);
// lu_factor_ex returns info instead (and throws only when check_errors).
// pivot = false: the LU without pivoting, A = L U, with pivots 1, 2, ..., k (the trivial
// permutation torch's CUDA returns). It exists only where every leading minor is nonsingular; an
// exact zero on U's diagonal gives info (its column is left unscaled, as getrf does; torch's may
// give inf or NaN there). Differs from torch: its CPU refuses pivot = false ("LU without pivoting
// is not implemented on the CPU"); Colony factors on the host for both devices, so both have it.
std::tuple<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot = true);
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot = true, bool check_errors = false);
// P [..., m, m], L [..., m, k] (unit lower), U [..., k, n] with A = P L U, k = min(m, n); with
// pivot = false A = L U and P is empty ([0]), as torch's.
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot = true);
// X with A X = B (left) or X A = B, A given by lu_factor; adjoint solves with Aᵀ instead.
// Differentiable in LU and B (the pivots are constants).
Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left = true, bool adjoint = false);

// L with A = L Lᵀ (upper: U with A = Uᵀ U), reading A's lower (upper) triangle only.
Tensor cholesky(const Tensor& A, bool upper = false);
std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper = false, bool check_errors = false);

// torch.cholesky_solve(B, L, upper) and torch.cholesky_inverse(L, upper) (torch has them outside
// torch.linalg; here they sit with the other solvers): X with (L Lᵀ) X = B, and (L Lᵀ)^-1 (Uᵀ U
// when upper), reading L's triangle only.
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper = false);
Tensor cholesky_inverse(const Tensor& L, bool upper = false);

// Q and R for mode "reduced", "complete" or "r" (Q empty; not differentiable, as torch's).
std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode = "reduced");

// Eigenvalues ascending and eigenvectors (columns) of the symmetric matrix in A's lower (UPLO "L")
// or upper ("U") triangle.
std::tuple<Tensor, Tensor> eigh(const Tensor& A, const std::string& UPLO = "L");
Tensor eigvalsh(const Tensor& A, const std::string& UPLO = "L");
// U, S (descending), Vh with A = U diag(S) Vh.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true);
Tensor svdvals(const Tensor& A);

// Composed of the ops above, so their gradients come from those.
// The pseudo-inverse through the SVD, singular values at or under max(atol, rtol * σ_max) dropped
// (rtol default: eps * max(m, n) when atol is not given, else 0; torch's rule); hermitian uses eigh.
Tensor pinv(const Tensor& A, std::optional<double> atol = std::nullopt, std::optional<double> rtol = std::nullopt,
            bool hermitian = false);
// solution, residuals, rank (int64), singular_values as torch's linalg.lstsq returns them for
// driver "gelsy" (the default, torch's CPU default), "gels", "gelsd" or "gelss" (which of them each
// driver fills: autograd/linalg_lstsq.cc); B a batch of vectors when it has one dim fewer than A.
std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor& A, const Tensor& B,
                                                 std::optional<double> rcond = std::nullopt,
                                                 std::optional<std::string> driver = std::nullopt);
// e^A by scaling and squaring with Padé approximants (autograd/linalg_matrix_exp.cc).
Tensor matrix_exp(const Tensor& A);
// [1, x, x^2, ..., x^(N-1)] along a new last dim (N defaults to x.size(-1); N > 1).
Tensor vander(const Tensor& x, std::optional<int64_t> N = std::nullopt);
// int64 count of singular values over the same tolerance.
Tensor matrix_rank(const Tensor& A, std::optional<double> atol = std::nullopt, std::optional<double> rtol = std::nullopt,
                   bool hermitian = false);
// (Σ |x|^ord)^(1/ord) over dims (empty: all); ord inf / -inf: max / min |x|; ord 0: count of nonzeros.
Tensor vector_norm(const Tensor& x, double ord = 2.0, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// "fro" or "nuc" over the last two dims (or dims).
Tensor matrix_norm(const Tensor& A, const std::string& ord = "fro", const std::vector<int64_t>& dims = {-2, -1},
                   bool keepdim = false);
// ord 1, -1 (max/min column sum), inf, -inf (row sums), 2, -2 (largest/smallest singular value).
Tensor matrix_norm(const Tensor& A, double ord, const std::vector<int64_t>& dims = {-2, -1}, bool keepdim = false);
// The cross product of 3-vectors along dim (sizes broadcast).
Tensor cross(const Tensor& a, const Tensor& b, int64_t dim = -1);
// A^n for square A; n < 0 inverts first; n == 0 the identity.
Tensor matrix_power(const Tensor& A, int64_t n);
// The product of 2 or more matrices (a 1-D first or last is a row or column vector, as torch's),
// multiplied in the order that needs the fewest multiplications.
Tensor multi_dot(const std::vector<Tensor>& tensors);

}  // namespace colony::linalg
