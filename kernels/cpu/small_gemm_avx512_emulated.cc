// The AVX-512 tiles (64-byte vectors, the same tile shapes and blocking) built for the baseline
// ISA, each vector two AVX2 registers: tests run the AVX-512 copy's logic on any machine.
// GCC warns that passing 64-byte vectors without AVX-512 differs in ABI; they only cross this
// file's internal, inlined functions.
#pragma GCC diagnostic ignored "-Wpsabi"
#define COLONY_SMALL_GEMM_ISA avx512_emulated
#define COLONY_SMALL_GEMM_VEC_BYTES 64
#include "kernels/cpu/small_gemm_tiles.h"
