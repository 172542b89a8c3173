// small_gemm_bf16.h's functions call through the active table (small_gemm_isa.h).
#include "kernels/cpu/small_gemm_bf16.h"

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
  for (int64_t i = 0; i < m; ++i) {
    const uint16_t* row = a + i * a_row_stride;
    for (int64_t q = 0; q < stride; ++q) {
      const uint32_t lo = row[2 * q * a_col_stride];
      const uint32_t hi = 2 * q + 1 < k ? row[(2 * q + 1) * a_col_stride] : 0u;
      pairs[i * stride + q] = lo | hi << 16;
    }
  }
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
