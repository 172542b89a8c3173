// attention_head.h's kernels for AVX-512: this file alone is built with -march=x86-64-v4
// (kernels/cpu/BUILD) and called only where cpu_isa.h finds the CPU supports it.
#define COLONY_ATTENTION_HEAD_ISA avx512
#define COLONY_ATTENTION_HEAD_TRAIT Avx512
#include "kernels/cpu/attention_head_kernels.h"
