// activation_simd.h's loops for the build's baseline, x86-64-v3 (AVX2 + FMA).
#define COLONY_ACTIVATION_ISA avx2
#define COLONY_ACTIVATION_TRAIT Avx2
#include "kernels/cpu/activation_simd_kernels.h"
