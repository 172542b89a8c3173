// small_gemm.h's tiles for AVX-512: 64-byte vectors, this file alone built with -march=x86-64-v4
// (kernels/cpu/BUILD) and called only where cpu_isa.h finds the CPU supports it.
#define COLONY_SMALL_GEMM_ISA avx512
#define COLONY_SMALL_GEMM_VEC_BYTES 64
#include "kernels/cpu/small_gemm_tiles.h"
