// activation_simd.h's loops for AVX-512: this file alone is built with -march=x86-64-v4
// (kernels/cpu/BUILD) and called only where cpu_isa.h finds the CPU supports it.
#define COLONY_ACTIVATION_ISA avx512
#define COLONY_ACTIVATION_TRAIT Avx512
#include "kernels/cpu/activation_simd_kernels.h"
