// small_gemm_bf16.h's tiles over scalar float arithmetic in vdpbf16ps' order, for the baseline ISA:
// tests run the bfloat16 tiling on any machine. Also lists the copies a test can run here.
#define COLONY_SMALL_GEMM_ISA bf16_emulated
#define COLONY_BF16_NATIVE 0
#include "kernels/cpu/small_gemm_bf16_tiles.h"

#include "kernels/cpu/cpu_isa.h"

namespace colony::kernels::cpu {

std::vector<const SmallGemmBf16Fns*> runnable_bf16_copies() {
  std::vector<const SmallGemmBf16Fns*> copies = {&bf16_emulated::small_gemm_bf16_fns()};
  if (detected_cpu_isa() >= CpuIsa::Avx512Bf16) copies.push_back(&avx512_bf16::small_gemm_bf16_fns());
  return copies;
}

}  // namespace colony::kernels::cpu
