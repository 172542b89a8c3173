// A general float32 / float64 matrix product in the GotoBLAS / BLIS structure, for the large
// products (gemm.h says which): B packed a block at a time into contiguous panels as wide as the
// micro-kernel's register block; the block of kc rows by nc columns (at most 1 MiB; k and n cut
// into blocks of equal size under the limits) stays in L2, each panel's kc x NR piece in L1 (or,
// at the deeper kc of a row-major A, streamed from L2) while the row tiles of A run over it; A
// read in place (the rows of a row-major A are streams the broadcasts walk along; copied into
// tiles, BLIS style, the copy cost what the tiles saved: docs/benchmarks.md, 2026-12-06) or,
// when column-major and C wide, copied into row tiles first. So the
// transposed views of either operand cost only their packing. The micro-kernel is small_gemm.h's
// ISA table's (packed_gemm_tiles.h): 6 x 64 floats under AVX-512, 6 x 16 under AVX2.
#pragma once

#include <cstdint>

namespace colony::kernels::cpu {

// C(i, j) = alpha * sum_p A(i, p) B(p, j) + beta * C(i, j) (beta == 0: C is only written, NaNs there
// included), for i < m, j < n, with A(i, p) = a[i * a_row_stride + p * a_col_stride], B(p, j) =
// b[p * b_row_stride + j * b_col_stride] and C(i, j) = c[i * ldc + j]. The work is split over the
// thread pool by groups of rows when the product is taller than wide (each thread packs all of B and
// multiplies its own rows of A: packed_gemm_row_groups), else by groups of columns (each thread
// packs and multiplies its own panels of B) or, where the panels do not share out evenly, by rows
// under one packed B (packed_gemm_column_groups); a weight gradient's product with k in two blocks
// runs in k halves on 2 threads (packed_gemm_k_halves); every element's sum runs in the same order
// (p ascending within each block of k, the blocks one after another) whatever the thread count,
// so results do not depend on it.
// bias (null: none; a linear layer's): bias[j] is added to every C(i, j) as the last block of k is
// stored, after the rest of the sum, so with alpha = 1 C is bit for bit the product followed by a
// separate pass adding the bias, without that pass or its reads of C (with another alpha the
// compiler may fuse alpha * S + bias[j] into one rounding).
template <typename T>
void packed_gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_row_stride, int64_t a_col_stride, const T* b,
                 int64_t b_row_stride, int64_t b_col_stride, T* c, int64_t ldc, T alpha, T beta,
                 const T* bias = nullptr);

// How many groups of rows, or of columns, packed_gemm<T> splits an [m, k] x [k, n] product into on
// the current thread count and micro-kernel (1 from both: the rows are split under one shared
// packed B; packed_gemm_k_halves, where it holds, comes first). For tests and benchmarks.
template <typename T>
int64_t packed_gemm_row_groups(int64_t m, int64_t n, int64_t k);
template <typename T>
int64_t packed_gemm_column_groups(int64_t m, int64_t n, int64_t k);
// Whether packed_gemm<T> runs an [m, k] x [k, n] product with A's column stride a_col_stride and
// this alpha in k halves on the current thread count (2 threads, alpha 1: each thread one of the
// two blocks of k of a column-major A's product, the second summed into C afterwards, rounding as
// one thread's second block does; packed_gemm.cc's k_halves_shape). For tests and benchmarks.
template <typename T>
bool packed_gemm_k_halves(int64_t m, int64_t n, int64_t k, int64_t a_col_stride, T alpha);

}  // namespace colony::kernels::cpu
