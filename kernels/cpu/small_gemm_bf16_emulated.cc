// small_gemm_bf16.h's tiles over scalar float arithmetic in vdpbf16ps' order, for the baseline ISA:
// tests run the bfloat16 tiling on any machine. Also lists the copies a test can run here.
#define COLONY_SMALL_GEMM_ISA bf16_emulated
#define COLONY_BF16_NATIVE 0
#include "kernels/cpu/small_gemm_bf16_tiles.h"

#include "kernels/cpu/isa_dispatch_impl.h"

namespace colony::kernels::cpu {

std::vector<const SmallGemmBf16Fns*> runnable_bf16_copies() {
  return runnable_copies<SmallGemmBf16Fns>({{CpuIsa::Avx2, &bf16_emulated::small_gemm_bf16_fns},
                                            {CpuIsa::Avx512Bf16, &avx512_bf16::small_gemm_bf16_fns}});
}

}  // namespace colony::kernels::cpu
