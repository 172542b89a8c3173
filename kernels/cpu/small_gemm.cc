// small_gemm.h's functions call through the active ISA's table (small_gemm_isa.h).
#include "kernels/cpu/small_gemm.h"

#include "kernels/cpu/isa_dispatch_impl.h"
#include "kernels/cpu/small_gemm_isa.h"

namespace colony::kernels::cpu {

template class ScopedFns<SmallGemmFns<float>>;
template class ScopedFns<SmallGemmFns<double>>;

template <typename T>
const SmallGemmFns<T>& active_small_gemm_fns() {
  return *active_copy<SmallGemmFns<T>>({{CpuIsa::Avx2, &avx2::small_gemm_fns<T>},
                                        {CpuIsa::Avx512, &avx512::small_gemm_fns<T>}});
}

ScopedSmallGemmFns::ScopedSmallGemmFns(const SmallGemmFns<float>& f32_fns, const SmallGemmFns<double>& f64_fns)
    : f32(&f32_fns), f64(&f64_fns) {}

template <typename T>
void gemm_rows(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_row_stride, int64_t a_col_stride, const T* b,
               const int64_t* b_rows, T* c, const int64_t* c_rows, bool accumulate, const T* bias) {
  active_small_gemm_fns<T>().gemm_rows(m, n, k, a, a_row_stride, a_col_stride, b, b_rows, c, c_rows, accumulate,
                                       bias);
}

template <typename T>
int64_t dot_lanes() {
  return active_small_gemm_fns<T>().dot_lanes;
}

template <typename T>
void gemm_dot_rows_lanes(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, const int64_t* b_rows,
                         T* acc, DotBatch batch) {
  active_small_gemm_fns<T>().gemm_dot_rows_lanes(m, n, k, a, lda, b, b_rows, acc, batch);
}

template <typename T>
void gemm_dot_finish(int64_t m, int64_t n, const T* acc, T* c, int64_t ldc) {
  active_small_gemm_fns<T>().gemm_dot_finish(m, n, acc, c, ldc);
}

template const SmallGemmFns<float>& active_small_gemm_fns<float>();
template const SmallGemmFns<double>& active_small_gemm_fns<double>();
template void gemm_rows<float>(int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const float*,
                               const int64_t*, float*, const int64_t*, bool, const float*);
template void gemm_rows<double>(int64_t, int64_t, int64_t, const double*, int64_t, int64_t, const double*,
                                const int64_t*, double*, const int64_t*, bool, const double*);
template int64_t dot_lanes<float>();
template int64_t dot_lanes<double>();
template void gemm_dot_rows_lanes<float>(int64_t, int64_t, int64_t, const float*, int64_t, const float*,
                                         const int64_t*, float*, DotBatch);
template void gemm_dot_rows_lanes<double>(int64_t, int64_t, int64_t, const double*, int64_t, const double*,
                                          const int64_t*, double*, DotBatch);
template void gemm_dot_finish<float>(int64_t, int64_t, const float*, float*, int64_t);
template void gemm_dot_finish<double>(int64_t, int64_t, const double*, double*, int64_t);

}  // namespace colony::kernels::cpu
