// The register-tiled products of small_gemm.h, compiled once per instruction set and chosen at run
// time from what the CPU reports (cpu_isa.h): the build targets x86-64-v3 (AVX2), and an AVX-512
// copy of the same source, built with -march=x86-64-v4, runs where the CPU has it. Each copy is a
// table of function pointers in its own namespace; small_gemm.cc calls through the active one.
//
// The copies share one source, small_gemm_tiles.h, written with vector types as wide as the ISA's
// registers. Its 64-byte build for the baseline ISA (avx512_emulated, a test-only library) runs
// the AVX-512 copy's exact tiling on any machine, two AVX2 registers per vector, so the tests check
// the AVX-512 code's logic where no AVX-512 CPU is at hand.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/isa_dispatch.h"
#include "kernels/cpu/small_gemm.h"

namespace colony::kernels::cpu {

// One ISA's implementations of small_gemm.h's functions for one element type.
template <typename T>
struct SmallGemmFns {
  const char* isa;  // "avx2", "avx512", ...
  int64_t dot_lanes;
  void (*gemm_rows)(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_row_stride, int64_t a_col_stride,
                    const T* b, const int64_t* b_rows, T* c, const int64_t* c_rows, bool accumulate, const T* bias);
  void (*gemm_dot_rows_lanes)(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                              const int64_t* b_rows, T* acc, DotBatch batch);
  void (*gemm_dot_finish)(int64_t m, int64_t n, const T* acc, T* c, int64_t ldc);
  // packed_gemm.h's micro-kernel (packed_gemm_tiles.h): its register block (packed_mr rows by
  // packed_nr columns, the width of a panel of packed B), the depth of one packed block of k
  // (packed_kc_rows where A is row-major, or column-major in a product at least 384 wide:
  // packed_gemm.cc's kDeepPackedAMinWidth; packed_kc for a narrower column-major A), and the
  // product of rows of A with one such block (see packed_rows_impl; bias, where not null, is added to C's
  // columns as they are stored: packed_gemm passes it with the last block of k).
  int64_t packed_mr, packed_nr, packed_kc, packed_kc_rows;
  void (*packed_rows)(int64_t m, int64_t n, int64_t kc, const T* a, int64_t a_row_stride, int64_t a_col_stride,
                      int64_t a_tile_stride, const T* packed_b, T* c, int64_t ldc, T alpha, T beta, bool first,
                      const T* bias);
};

namespace avx2 {
template <typename T>
const SmallGemmFns<T>& small_gemm_fns();
}
namespace avx512 {
template <typename T>
const SmallGemmFns<T>& small_gemm_fns();
}
namespace avx512_emulated {  // in //kernels/cpu:small_gemm_avx512_emulated (testonly)
template <typename T>
const SmallGemmFns<T>& small_gemm_fns();
}

// The bfloat16 products of small_gemm_bf16.h (bfloat16 operands, float32 accumulators), one ISA's
// implementation. There is one native copy, for AVX512_BF16 (vdpbf16ps); CPUs without it have
// none, and their 16-bit convolutions and matrix products widen to float32 instead.
struct SmallGemmBf16Fns {
  const char* isa;  // "avx512_bf16", "bf16_emulated"
  int64_t dot_lanes;
  void (*gemm_rows)(int64_t m, int64_t n, int64_t k, const uint32_t* a_pairs, int64_t a_pair_stride,
                    const uint16_t* b, const int64_t* b_rows, float* c, const int64_t* c_rows, bool accumulate,
                    const float* bias);
  void (*gemm_rows_paired)(int64_t m, int64_t n, int64_t k, const uint32_t* a_pairs, int64_t a_row_step,
                           int64_t a_pair_step, const uint32_t* b_pairs, const int64_t* b_pair_rows, float* c, const int64_t* c_rows,
                           bool accumulate, const float* bias);
  void (*gemm_dot_rows_lanes)(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda, const uint16_t* b,
                              const int64_t* b_rows, float* acc, DotBatch batch);
  void (*gemm_dot_finish)(int64_t m, int64_t n, const float* acc, float* c, int64_t ldc);
};

namespace avx512_bf16 {  // built with -march=x86-64-v4 -mavx512bf16
const SmallGemmBf16Fns& small_gemm_bf16_fns();
}
// The same tiles over scalar float arithmetic that reproduces vdpbf16ps' order of operations, in
// //kernels/cpu:small_gemm_bf16_emulated (testonly): tests run the tiling logic on any CPU.
namespace bf16_emulated {
const SmallGemmBf16Fns& small_gemm_bf16_fns();
}

// Tests (defined in //kernels/cpu:small_gemm_bf16_emulated): every bfloat16 copy this CPU runs,
// the emulated one and, where the CPU has AVX512_BF16, avx512_bf16.
std::vector<const SmallGemmBf16Fns*> runnable_bf16_copies();

// The table small_gemm_bf16.h uses now: avx512_bf16 where active_cpu_isa() allows it, else null.
const SmallGemmBf16Fns* active_small_gemm_bf16_fns();

// Tests and benchmarks: route small_gemm_bf16.h (and so the bfloat16 convolutions and matrix
// products) through `fns` (null: none, so they widen) while alive (isa_dispatch.h).
using ScopedSmallGemmBf16Fns = ScopedFns<SmallGemmBf16Fns>;

// The tables small_gemm.h's functions use now: the CPU's best unless overridden.
template <typename T>
const SmallGemmFns<T>& active_small_gemm_fns();

// Tests: route small_gemm.h (and so the convolutions) through other tables while alive
// (isa_dispatch.h's ScopedFns for both element types).
struct ScopedSmallGemmFns {
  ScopedSmallGemmFns(const SmallGemmFns<float>& f32_fns, const SmallGemmFns<double>& f64_fns);
  ScopedFns<SmallGemmFns<float>> f32;
  ScopedFns<SmallGemmFns<double>> f64;
};

}  // namespace colony::kernels::cpu
