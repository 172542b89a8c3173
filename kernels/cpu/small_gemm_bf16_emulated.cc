// small_gemm_bf16.h's tiles over scalar float arithmetic in vdpbf16ps' order, for the baseline ISA:
// tests run the bfloat16 tiling on any machine.
#define COLONY_SMALL_GEMM_ISA bf16_emulated
#define COLONY_BF16_NATIVE 0
#include "kernels/cpu/small_gemm_bf16_tiles.h"
