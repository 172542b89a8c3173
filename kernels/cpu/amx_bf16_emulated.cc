// amx_gemm.h's tiles over scalar arithmetic in tdpbf16ps' order, for the baseline ISA: tests run
// the AMX blocking, packing and edge tiles on any machine. Also lists the copies a test can run here.
#define COLONY_AMX_ISA amx_emulated
#define COLONY_AMX_NATIVE 0
#include "kernels/cpu/amx_gemm_tiles.h"

#include "kernels/cpu/isa_dispatch_impl.h"

namespace colony::kernels::cpu {

std::vector<const AmxGemmFns*> runnable_amx_copies() {
  return runnable_copies<AmxGemmFns>({{CpuIsa::Avx2, &amx_emulated::amx_gemm_fns},
                                      {CpuIsa::AmxBf16, &amx_bf16::amx_gemm_fns}});
}

}  // namespace colony::kernels::cpu
