// Which vector instruction set the CPU kernels run with. The build targets x86-64-v3 (AVX2, FMA);
// kernels with an AVX-512 copy (small_gemm_isa.h) use it when the CPU and the OS support
// x86-64-v4's AVX-512 subsets (F, CD, BW, DQ, VL), and the bfloat16 products (small_gemm_bf16.h)
// where it also has AVX512_BF16 (vdpbf16ps: AMD Zen 4 on, Intel Cooper Lake and Sapphire Rapids
// on), decided once per process from CPUID, never at build time (-march=native would make a binary
// that fails on the next machine).
//
// COLONY_CPU_ISA=avx2 or =avx512 caps the choice (to compare them on one machine, as oneDNN's
// ONEDNN_MAX_CPU_ISA does); an unknown value is an error naming the accepted ones.
#pragma once

namespace colony::kernels::cpu {

// Ordered: each level includes the ones before it.
enum class CpuIsa { Avx2, Avx512, Avx512Bf16 };

const char* cpu_isa_name(CpuIsa isa);

// What this CPU supports (CPUID, and the OS saving the AVX-512 state).
CpuIsa detected_cpu_isa();

// `detected` capped by `env_cap` (the value of COLONY_CPU_ISA; null or empty: no cap). Throws
// std::invalid_argument for a value other than avx2, avx512 or avx512_bf16.
CpuIsa capped_cpu_isa(CpuIsa detected, const char* env_cap);

// The instruction set the kernels use in this process: detected_cpu_isa() capped by
// COLONY_CPU_ISA, read on the first call.
CpuIsa active_cpu_isa();

}  // namespace colony::kernels::cpu
