// Matrix products on the CPU through packed_gemm.h's blocked product, small_gemm.h's register
// tiles or Eigen, without copying transposed operands (see MatrixArg).
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/gemm.h"
#include "kernels/common/half.h"
#include "kernels/common/matrix.h"

namespace colony::kernels::cpu {

// Whether gemm takes `dtype` (a 16-bit type): bfloat16 where AVX512_BF16 is active, on
// small_gemm_bf16.h's tiles with float32 accumulation and C rounded once. Elsewhere callers widen
// 16-bit operands to float32 (ops/cpu_widen.h), which gives the same values up to the order of
// the float32 additions.
bool gemm_native_16bit(DType dtype);

// C = round(A B + bias) for one bfloat16 product where gemm_native_16bit(BFloat16) holds: bias, a
// row of n, is added to every row's float32 sums before the one rounding (a linear layer's
// forward, PyTorch's addmm(bias, x, Wᵀ)); C (m x n, leading dimension ldc) is not read. On AMX the
// tiles' output pass adds it (AmxGemmArgs::bias), so no copy of the bias rows is made or read.
void gemm_bf16_bias(int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b, const BFloat16* bias,
                    BFloat16* c, int64_t ldc);

// Whether gemm's bfloat16 products of these sizes run on AMX tiles (amx_gemm.h) instead: where
// gemm_native_16bit holds, AMX is active too (active_cpu_isa() reaches AmxBf16, or a test's
// override) and the shapes pass the thresholds measured in gemm.cc. Same contract, another order
// of the float32 additions.
bool gemm_bf16_on_amx(int64_t m, int64_t n, int64_t k);

// Gemm::cpu (kernels/common/gemm.h, the entry point declared once for both devices) by its name
// here, for CPU code (conv.cc) and tests that call it directly: float32 and float64 (and bfloat16,
// see above); the rows of all products are split over the thread pool and each chunk is one
// single-threaded product, on the kernel below (packed_gemm.h splits its single product by groups
// of columns instead where they share out evenly).
inline constexpr auto& gemm = Gemm::cpu;

// What runs a float32 or float64 product. Auto: packed_gemm.h's blocked product (B packed into
// panels, a 6 x 64 AVX-512 or 6 x 16 AVX2 micro-kernel) for a single product of at least 256 rows
// (128 with B transposed, a linear layer's forward; 512 with A transposed, its weight gradient;
// 128 where the alternative is Eigen) and 64 columns; below that the register tiles
// of small_gemm.h where the CPU kernels run AVX-512 and B is at most kTilesMaxWidth wide and deep
// (Eigen is built for the x86-64-v3 baseline, so its kernels stop at AVX2), Eigen otherwise. The
// thresholds and the figures behind them are in gemm.cc.
enum class GemmKernel { Auto, Eigen, Tiles, Packed };
constexpr int64_t kTilesMaxWidth = 1024;
// Which kernel gemm would run for `batch` [m, k] x [k, n] products now (a_col_major, b_col_major:
// that operand is a transposed view).
GemmKernel gemm_kernel(DType dtype, int64_t m, int64_t n, int64_t k, bool a_col_major = false,
                       bool b_col_major = false, int64_t batch = 1);

// Tests and benchmarks: make Auto mean `kernel` while alive (Tiles runs the active tiles,
// small_gemm_isa.h, whatever the ISA). Not thread-safe against running products.
class ScopedGemmKernel {
 public:
  explicit ScopedGemmKernel(GemmKernel kernel);
  ~ScopedGemmKernel();
  ScopedGemmKernel(const ScopedGemmKernel&) = delete;
  ScopedGemmKernel& operator=(const ScopedGemmKernel&) = delete;

 private:
  GemmKernel saved_;
};

}  // namespace colony::kernels::cpu
