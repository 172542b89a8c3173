// small_gemm.h's tiles for the build's baseline, x86-64-v3 (AVX2 + FMA): 32-byte vectors.
#define COLONY_SMALL_GEMM_ISA avx2
#define COLONY_SMALL_GEMM_VEC_BYTES 32
#include "kernels/cpu/small_gemm_tiles.h"
