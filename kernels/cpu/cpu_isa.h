// Which vector instruction set the CPU kernels run with. The build targets x86-64-v3 (AVX2, FMA);
// kernels with an AVX-512 copy (small_gemm_isa.h) use it when the CPU and the OS support
// x86-64-v4's AVX-512 subsets (F, CD, BW, DQ, VL), the bfloat16 products (small_gemm_bf16.h)
// where it also has AVX512_BF16 (vdpbf16ps: AMD Zen 4 on, Intel Cooper Lake and Sapphire Rapids
// on), and the bfloat16 matrix products on AMX tiles (amx_gemm.h) where it has AMX-TILE and
// AMX-BF16 too (Intel Sapphire Rapids on), decided once per process from CPUID, never at build
// time (-march=native would make a binary that fails on the next machine).
//
// AMX also needs the OS: XCR0 must enable the tile configuration and tile data state (bits 17 and
// 18), and Linux (5.16 on) hands the 8 KB tile register file only to a process that asks for it,
// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA). amx_usable() asks once per process; the
// permission is the whole process's (threads that exist already included: the kernel records it
// on the thread group, arch/x86/kernel/fpu/xstate.c), kept across fork and dropped by exec. A tile
// instruction without it is SIGILL; where any of the three is missing the level stops at
// Avx512Bf16 (or below), and the bfloat16 products take the AVX512_BF16 tiles or widen.
//
// COLONY_CPU_ISA=avx2, =avx512, =avx512_bf16 or =amx caps the choice (to compare them on one
// machine, as oneDNN's ONEDNN_MAX_CPU_ISA does); an unknown value is an error naming the accepted
// ones.
#pragma once

namespace colony::kernels::cpu {

// Ordered: each level includes the ones before it.
enum class CpuIsa { Avx2, Avx512, Avx512Bf16, AmxBf16 };

// "avx2", "avx512", "avx512_bf16", "amx" (the names COLONY_CPU_ISA takes).
const char* cpu_isa_name(CpuIsa isa);

// Whether this process may run AMX-BF16 tile instructions: CPUID reports AMX-TILE and AMX-BF16,
// XCR0 has the tile state enabled, and the kernel granted the permission (asked for on the first
// call, once per process). amx_unusable_reason() says which of them failed ("" when usable).
bool amx_usable();
const char* amx_unusable_reason();

// What this CPU supports (CPUID, and the OS saving the AVX-512 and tile state).
CpuIsa detected_cpu_isa();

// `detected` capped by `env_cap` (the value of COLONY_CPU_ISA; null or empty: no cap). Throws
// std::invalid_argument for a value other than avx2, avx512, avx512_bf16 or amx.
CpuIsa capped_cpu_isa(CpuIsa detected, const char* env_cap);

// The instruction set the kernels use in this process: detected_cpu_isa() capped by
// COLONY_CPU_ISA, read on the first call.
CpuIsa active_cpu_isa();

}  // namespace colony::kernels::cpu
