// The matrix decompositions and solvers behind colony::linalg (autograd/linalg.h), on contiguous
// row-major [batch, rows, cols] arrays of float32 or float64, one matrix per task of the thread pool
// (parallel.h). Loops templated on the element type, float32 accumulated in float32 as LAPACK's
// sgetrf/spotrf do; no LAPACK (Colony's build uses nothing outside its tree). LU, the triangular
// solves, Cholesky and QR are blocked past 32 columns as LAPACK's getrf/trsm/potrf/geqrf+orgqr are
// (a panel by the unblocked loops, the rest updated through Colony's GEMM, gemm.h). eigh and svd
// are LAPACK's dsyev and dgesvd: a Householder reduction to tridiagonal form (in dsytrd's panels
// past 64 columns) or bidiagonal form (one reflector at a time), the orthogonal factors formed from
// the reflectors in blocks through GEMM, then
// implicit-shift QL / Golub-Kahan QR on it (linalg_eigh.cc, linalg_svd.cc). The raw ops
// of ops/linalg_decomp_ops.cc call these directly: there is no CUDA kernel, a CUDA tensor is
// computed here and copied back (ops/raw_linalg_ops.h says so).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"

namespace colony::kernels::cpu {

// LU with partial pivoting, in place (LAPACK getrf): a = P L U with L unit lower (below the
// diagonal) and U upper (on and above); pivots[batch, min(m, n)] are 1-based row swaps; info[b] is
// 0, or the 1-based index of the first exact zero on U's diagonal (the factorization still completes).
// pivot = false: no row is swapped (a = L U, pivots 1, 2, ..., k: the trivial permutation torch's CUDA
// returns); a zero on the diagonal sets info and leaves its column below as getrf does, where a
// pivoted factorization would have swapped in a nonzero.
void lu_factor(DType dtype, void* a, int32_t* pivots, int32_t* info, int64_t batch, int64_t m, int64_t n,
               bool pivot = true);

// b <- A^-1 b for A given by lu_factor ([batch, n, n] and its pivots), b [batch, n, k], in place.
void lu_solve(DType dtype, const void* lu, const int32_t* pivots, void* b, int64_t batch, int64_t n, int64_t k);

// b <- T^-1 b for the triangle of a [batch, n, n] (upper or lower; unit: ones assumed on the
// diagonal), b [batch, n, k] in place (LAPACK trsm, left side).
void triangular_solve(DType dtype, const void* a, void* b, int64_t batch, int64_t n, int64_t k, bool upper,
                      bool unit);

// Cholesky (LAPACK potrf, lower): reads a's lower triangle, writes L there and zeros above; info[b]
// is 0 or the order of the first leading minor that is not positive-definite (then a is partial).
void cholesky(DType dtype, void* a, int32_t* info, int64_t batch, int64_t n);

// Householder QR (LAPACK geqrf + orgqr, the reflectors chosen as dlarfg chooses them, so R's
// diagonal signs are LAPACK's): a [batch, m, n] read; r [batch, complete ? m : k, n] and, when q is
// not null, q [batch, m, complete ? m : k], with k = min(m, n).
void householder_qr(DType dtype, const void* a, void* q, void* r, int64_t batch, int64_t m, int64_t n, bool complete);

// Symmetric eigendecomposition (LAPACK dsyev: tridiagonalization, implicit QL with Wilkinson's
// shift): a [batch, n, n] (symmetric, both triangles, overwritten), w [batch, n] ascending, and when
// v is not null the orthonormal eigenvectors as v's columns [batch, n, n]. Each eigenvector's sign
// is whatever the rotations leave (torch's, LAPACK's, differ; any is correct), and within a
// repeated eigenvalue's space the basis is any orthonormal one. info[b] is 0, or 1 when the QL
// iteration did not converge.
void eigh(DType dtype, void* a, void* w, void* v, int32_t* info, int64_t batch, int64_t n);

// Singular value decomposition (LAPACK dgesvd: bidiagonalization, Golub-Kahan implicit-shift QR):
// a [batch, m, n] read, s [batch, k] descending (k = min(m, n)); when u is not null,
// u [batch, m, full ? m : k] and vh [batch, full ? n : k, n], orthonormal for any rank (the columns
// beyond k come from the reflectors). Signs of a pair (u_i, vh_i) as eigh's: any. info[b] as eigh's.
void svd(DType dtype, const void* a, void* u, void* s, void* vh, int32_t* info, int64_t batch, int64_t m, int64_t n,
         bool full);

}  // namespace colony::kernels::cpu
