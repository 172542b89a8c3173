// Register-tiled matrix products for the small, oddly shaped operands of convolutions over few
// channels (LeNet's first layer multiplies 6 x 75 weights by 75 x 892 pixels), where packing the
// operands the way a general GEMM does costs about as much as the product itself.
//
// Rows of B and C are addressed through offset tables, so B can be a set of shifted windows into
// an image (an implicit im2col: row (c, i, j) is the image plane c read from i * W + j on) and C can
// be scattered into overlapping rows of an image (an implicit col2im). Single-threaded: the
// convolution kernels parallelize over images and call these inside each chunk. float and double.
// Each call runs the AVX2 or the AVX-512 tiles, as the CPU allows (small_gemm_isa.h, cpu_isa.h).
#pragma once

#include <cstdint>

namespace colony::kernels::cpu {

// C(i, j) = bias[i] + sum_p A(i, p) * B(p, j)   (bias null: 0; accumulate: C(i, j) += the sum, bias unused)
//   A(i, p) = a[i * a_row_stride + p * a_col_stride]  (row- or column-major; read by broadcast)
//   B(p, j) = b[b_rows[p] + j],  C(i, j) = c[c_rows[i] + j]
// Rows of C are written one after another, so overlapping rows accumulate correctly.
template <typename T>
void gemm_rows(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_row_stride, int64_t a_col_stride, const T* b,
               const int64_t* b_rows, T* c, const int64_t* c_rows, bool accumulate, const T* bias);

// The dot products D(i, j) = sum_p A(i, p) * B(j, p), with A(i, p) = a[i * lda + p] and
// B(j, p) = b[b_rows[j] + p] (a convolution's weight gradient, reduced over the pixels), each left
// as dot_lanes<T>() partial sums added into acc: element (i, j)'s at acc + (i * n + j) * lanes.
// A caller reducing over many images pays the horizontal sums once, in gemm_dot_finish, instead of
// once per image; on LeNet's second layer (136 pixels per dot) they cost as much as the products.
//
// With a DotBatch of count > 1 the sums run over several such products, D(i, j) = sum_t sum_p
// A_t(i, p) * B_t(j, p) with A_t at a + t * a_stride and B_t's rows at b + t * b_stride + b_rows[j]
// (two images of a weight gradient): the partial sums stay in registers from one product to the
// next and are folded and stored once, which on LeNet's second layer cost as much as a fifth of
// each image's products.
struct DotBatch {
  int64_t count = 1;
  int64_t a_stride = 0;
  int64_t b_stride = 0;
};
template <typename T>
int64_t dot_lanes();
template <typename T>
void gemm_dot_rows_lanes(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, const int64_t* b_rows,
                         T* acc, DotBatch batch = {});
// c[i * ldc + j] = the sum of (i, j)'s lanes in acc.
template <typename T>
void gemm_dot_finish(int64_t m, int64_t n, const T* acc, T* c, int64_t ldc);

}  // namespace colony::kernels::cpu
