// small_gemm_bf16.h's functions call through the active table (small_gemm_isa.h).
#include "kernels/cpu/small_gemm_bf16.h"

#include <cstring>
#include <stdexcept>

#include "kernels/cpu/isa_dispatch_impl.h"
#include "kernels/cpu/small_gemm_isa.h"

namespace colony::kernels::cpu {
namespace {

const SmallGemmBf16Fns& fns() {
  const SmallGemmBf16Fns* f = active_small_gemm_bf16_fns();
  if (f == nullptr) {
    throw std::logic_error("small_gemm_bf16: no bfloat16 tiles on this CPU (AVX512_BF16 not active); callers must "
                           "check has_bf16_small_gemm() and widen to float32 instead");
  }
  return *f;
}

}  // namespace

template class ScopedFns<SmallGemmBf16Fns>;

const SmallGemmBf16Fns* active_small_gemm_bf16_fns() {
  return active_copy<SmallGemmBf16Fns>({{CpuIsa::Avx512Bf16, &avx512_bf16::small_gemm_bf16_fns}});
}

bool has_bf16_small_gemm() { return active_small_gemm_bf16_fns() != nullptr; }

void pack_bf16_pairs(int64_t m, int64_t k, const uint16_t* a, int64_t a_row_stride, int64_t a_col_stride,
                     uint32_t* pairs) {
  const int64_t stride = (k + 1) / 2;
  if (a_col_stride == 1) {
    // Row-major: a pair is two neighbours, so a row's pairs are its bytes as they lie (x86 is
    // little-endian: the even element low), and after an odd k one with a zero high half.
    for (int64_t i = 0; i < m; ++i) {
      const uint16_t* row = a + i * a_row_stride;
      std::memcpy(pairs + i * stride, row, static_cast<size_t>(k) * sizeof(uint16_t));
      if (k % 2 != 0) pairs[i * stride + stride - 1] = row[k - 1];
    }
    return;
  }
  if (a_row_stride == 1) {
    // Column-major A (a weight gradient's transposed output gradient): down the columns, so the
    // reads are contiguous; row by row they would stride a whole column apart.
    for (int64_t q = 0; q < stride; ++q) {
      const uint16_t* c0 = a + 2 * q * a_col_stride;
      const uint16_t* c1 = 2 * q + 1 < k ? c0 + a_col_stride : nullptr;
      for (int64_t i = 0; i < m; ++i) {
        pairs[i * stride + q] = uint32_t{c0[i]} | (c1 != nullptr ? uint32_t{c1[i]} << 16 : 0u);
      }
    }
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    const uint16_t* row = a + i * a_row_stride;
    for (int64_t q = 0; q < stride; ++q) {
      const uint32_t lo = row[2 * q * a_col_stride];
      const uint32_t hi = 2 * q + 1 < k ? row[(2 * q + 1) * a_col_stride] : 0u;
      pairs[i * stride + q] = lo | hi << 16;
    }
  }
}

void pack_bf16_b_pairs(int64_t k, int64_t n, const uint16_t* b, int64_t b_row_stride, int64_t b_col_stride,
                       uint32_t* b_pairs, int64_t ldp) {
  const int64_t pair_rows = (k + 1) / 2;
  if (b_col_stride == 1) {
    // Row-major: two rows interleaved, contiguous reads and writes.
    for (int64_t q = 0; q < pair_rows; ++q) {
      const uint16_t* r0 = b + 2 * q * b_row_stride;
      const uint16_t* r1 = 2 * q + 1 < k ? r0 + b_row_stride : nullptr;
      uint32_t* out = b_pairs + q * ldp;
      if (r1 != nullptr) {
        for (int64_t j = 0; j < n; ++j) out[j] = uint32_t{r0[j]} | uint32_t{r1[j]} << 16;
      } else {
        for (int64_t j = 0; j < n; ++j) out[j] = r0[j];
      }
    }
    return;
  }
  // Column-major (B's columns contiguous, a weight read transposed): a pair is two neighbours in a
  // column. Blocks of 16 columns by 64 pairs keep both the columns read and the rows written in L1.
  constexpr int64_t kCols = 16, kPairs = 64;
  for (int64_t q0 = 0; q0 < pair_rows; q0 += kPairs) {
    const int64_t q1 = q0 + kPairs < pair_rows ? q0 + kPairs : pair_rows;
    for (int64_t j0 = 0; j0 < n; j0 += kCols) {
      const int64_t j1 = j0 + kCols < n ? j0 + kCols : n;
      for (int64_t j = j0; j < j1; ++j) {
        const uint16_t* col = b + j * b_col_stride;
        for (int64_t q = q0; q < q1; ++q) {
          const uint32_t lo = col[2 * q * b_row_stride];
          const uint32_t hi = 2 * q + 1 < k ? col[(2 * q + 1) * b_row_stride] : 0u;
          b_pairs[q * ldp + j] = lo | hi << 16;
        }
      }
    }
  }
}

void gemm_rows_paired_bf16(int64_t m, int64_t n, int64_t k, const uint32_t* a_pairs, int64_t a_row_step,
                           int64_t a_pair_step, const uint32_t* b_pairs, const int64_t* b_pair_rows, float* c,
                           const int64_t* c_rows, bool accumulate, const float* bias) {
  fns().gemm_rows_paired(m, n, k, a_pairs, a_row_step, a_pair_step, b_pairs, b_pair_rows, c, c_rows, accumulate,
                         bias);
}

void gemm_rows_bf16(int64_t m, int64_t n, int64_t k, const uint32_t* a_pairs, int64_t a_pair_stride,
                    const uint16_t* b, const int64_t* b_rows, float* c, const int64_t* c_rows, bool accumulate,
                    const float* bias) {
  fns().gemm_rows(m, n, k, a_pairs, a_pair_stride, b, b_rows, c, c_rows, accumulate, bias);
}

int64_t dot_lanes_bf16() { return fns().dot_lanes; }

void gemm_dot_rows_lanes_bf16(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda, const uint16_t* b,
                              const int64_t* b_rows, float* acc, DotBatch batch) {
  fns().gemm_dot_rows_lanes(m, n, k, a, lda, b, b_rows, acc, batch);
}

void gemm_dot_finish_bf16(int64_t m, int64_t n, const float* acc, float* c, int64_t ldc) {
  fns().gemm_dot_finish(m, n, acc, c, ldc);
}

}  // namespace colony::kernels::cpu
