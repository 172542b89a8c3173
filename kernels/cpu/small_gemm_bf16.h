// small_gemm.h's register-tiled products for bfloat16 operands, accumulated in float32: the
// direct convolution's forward, input gradient and weight gradient (conv.h) under bfloat16
// autocast. They exist only where the CPU has AVX512_BF16, whose vdpbf16ps multiplies 32 pairs of
// bfloat16 and adds each pair's two products into one of 16 float32 lanes: twice the
// multiply-adds of a float32 FMA per instruction, from operands half the size. Elsewhere
// has_bf16_small_gemm() is false and 16-bit convolutions widen to float32 (ops/cpu_widen.h).
//
// vdpbf16ps pairs elements along the reduction, so the broadcast operand of gemm_rows comes packed
// in pairs (pack_bf16_pairs, once per weight matrix), and each pair of B rows is interleaved in
// registers as it is loaded. The dot products reduce along contiguous rows and need neither.
// bfloat16 values travel as their uint16_t bits.
#pragma once

#include <cstdint>

#include "kernels/cpu/small_gemm.h"

namespace colony::kernels::cpu {

// Whether the bfloat16 products below can run here (AVX512_BF16 active: cpu_isa.h).
bool has_bf16_small_gemm();

// The pairs A(i, 2q) | A(i, 2q + 1) << 16 of the m x k matrix A(i, p) = a[i * a_row_stride + p *
// a_col_stride], at pairs[i * ((k + 1) / 2) + q]; an odd k's last pair has a zero high half.
void pack_bf16_pairs(int64_t m, int64_t k, const uint16_t* a, int64_t a_row_stride, int64_t a_col_stride,
                     uint32_t* pairs);

// C(i, j) = bias[i] + sum_p A(i, p) * B(p, j)   (bias null: 0; accumulate: C(i, j) += the sum, bias unused)
//   A from pack_bf16_pairs (pair q of row i at a_pairs[i * a_pair_stride + q]),
//   B(p, j) = b[b_rows[p] + j] (bfloat16),  C(i, j) = c[c_rows[i] + j] (float32).
// Nothing past B(p, n - 1) is read. Requires has_bf16_small_gemm().
void gemm_rows_bf16(int64_t m, int64_t n, int64_t k, const uint32_t* a_pairs, int64_t a_pair_stride,
                    const uint16_t* b, const int64_t* b_rows, float* c, const int64_t* c_rows, bool accumulate,
                    const float* bias);

// B(p, j) = b[p * b_row_stride + j * b_col_stride] (k x n) paired along the reduction as
// vdpbf16ps wants it: b_pairs[q * ldp + j] = B(2q, j) | B(2q + 1, j) << 16 for q < (k + 1) / 2,
// j < n (an odd k's last pair has a zero high half); ldp >= n. Once per product, so the tiles
// load each pair of rows as it lies instead of interleaving two rows on every pass of the rows of
// A over them (gemm_rows_paired_bf16), and a column-major B (a linear layer's transposed weight)
// runs on the same tiles as a row-major one.
void pack_bf16_b_pairs(int64_t k, int64_t n, const uint16_t* b, int64_t b_row_stride, int64_t b_col_stride,
                       uint32_t* b_pairs, int64_t ldp);

// gemm_rows_bf16 over a pair-packed B: B's pair q of rows at b_pairs[b_pair_rows[q] + j], and A's
// pair q of row i at a_pairs[i * a_row_step + q * a_pair_step]: a_pair_step 1 from
// pack_bf16_pairs, or a_row_step 1 and a_pair_step m from pack_bf16_b_pairs of Aᵀ (a column-major A
// pair-packed down its contiguous columns, as a weight gradient's transposed output gradient is).
void gemm_rows_paired_bf16(int64_t m, int64_t n, int64_t k, const uint32_t* a_pairs, int64_t a_row_step,
                           int64_t a_pair_step, const uint32_t* b_pairs, const int64_t* b_pair_rows, float* c,
                           const int64_t* c_rows, bool accumulate, const float* bias);

// small_gemm.h's gemm_dot_rows_lanes for bfloat16 rows: D(i, j) = sum_p A(i, p) * B(j, p) with
// A(i, p) = a[i * lda + p], B(j, p) = b[b_rows[j] + p], left as dot_lanes_bf16() float32 partial
// sums added into acc + (i * n + j) * lanes; gemm_dot_finish_bf16 adds them up. A DotBatch sums
// several products, as there.
int64_t dot_lanes_bf16();
void gemm_dot_rows_lanes_bf16(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda, const uint16_t* b,
                              const int64_t* b_rows, float* acc, DotBatch batch = {});
void gemm_dot_finish_bf16(int64_t m, int64_t n, const float* acc, float* c, int64_t ldc);

}  // namespace colony::kernels::cpu
