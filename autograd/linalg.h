// torch.linalg's decompositions and solvers, batched over leading dims, float32 and float64, each
// differentiable with torch's backward formula (torch/csrc/autograd/FunctionsManual.cpp):
//
//   linalg::inv, inv_ex, det, slogdet, solve, solve_triangular   (autograd/linalg_lu.cc)
//   linalg::cholesky, cholesky_ex                                 (autograd/linalg_cholesky.cc)
//   linalg::qr                                                    (autograd/linalg_qr.cc)
//   linalg::eigh, eigvalsh, svd, svdvals                          (autograd/linalg_spectral.cc)
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
// Householder QR, cyclic Jacobi for eigh, one-sided Jacobi for the SVD. A CUDA input is copied to
// the host, decomposed there and its results copied back: correct, not fast (no cuSOLVER path yet).
// Eigenvectors and singular vectors are determined up to sign (as LAPACK's); differentiate through
// functions invariant to those signs, as torch's documentation says.
// Not differentiable twice (no create_graph), as every Colony op.
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

// L with A = L Lᵀ (upper: U with A = Uᵀ U), reading A's lower (upper) triangle only.
Tensor cholesky(const Tensor& A, bool upper = false);
std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper = false, bool check_errors = false);

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
