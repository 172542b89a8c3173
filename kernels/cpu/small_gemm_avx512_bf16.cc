// small_gemm_bf16.h's tiles with vdpbf16ps: this file alone built with -march=x86-64-v4
// -mavx512bf16 (kernels/cpu/BUILD) and called only where cpu_isa.h finds the CPU supports it.
#define COLONY_SMALL_GEMM_ISA avx512_bf16
#define COLONY_BF16_NATIVE 1
#include "kernels/cpu/small_gemm_bf16_tiles.h"
