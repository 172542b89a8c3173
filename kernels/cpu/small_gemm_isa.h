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

namespace colony::kernels::cpu {

// One ISA's implementations of small_gemm.h's functions for one element type.
template <typename T>
struct SmallGemmFns {
  const char* isa;  // "avx2", "avx512", ...
  int64_t dot_lanes;
  void (*gemm_rows)(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_row_stride, int64_t a_col_stride,
                    const T* b, const int64_t* b_rows, T* c, const int64_t* c_rows, bool accumulate, const T* bias);
  void (*gemm_dot_rows_lanes)(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                              const int64_t* b_rows, T* acc);
  void (*gemm_dot_finish)(int64_t m, int64_t n, const T* acc, T* c, int64_t ldc);
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

// The tables small_gemm.h's functions use now: the CPU's best unless overridden.
template <typename T>
const SmallGemmFns<T>& active_small_gemm_fns();

// Tests: route small_gemm.h (and so the convolutions) through other tables while alive. Not
// thread-safe against running kernels; set it between calls.
class ScopedSmallGemmFns {
 public:
  ScopedSmallGemmFns(const SmallGemmFns<float>& f32, const SmallGemmFns<double>& f64);
  ~ScopedSmallGemmFns();
  ScopedSmallGemmFns(const ScopedSmallGemmFns&) = delete;
  ScopedSmallGemmFns& operator=(const ScopedSmallGemmFns&) = delete;

 private:
  const SmallGemmFns<float>* saved_f32_;
  const SmallGemmFns<double>* saved_f64_;
};

}  // namespace colony::kernels::cpu
