// CPU thread control for users (torch.set_num_threads): every multithreaded CPU kernel shares the
// project thread pool in kernels/cpu/parallel.h. COLONY_NUM_THREADS sets the starting value.
// And which vector instruction set the CPU kernels chose (torch.backends.cpu.get_cpu_capability):
// "avx2", "avx512", "avx512_bf16" (AVX-512 plus native bfloat16 convolutions) or "amx" (that plus
// bfloat16 matrix products on AMX tiles), from what the CPU reports, capped by COLONY_CPU_ISA
// (kernels/cpu/cpu_isa.h).
#pragma once

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/parallel.h"

namespace colony {

inline int get_num_threads() { return kernels::cpu::num_threads(); }
inline void set_num_threads(int n) { kernels::cpu::set_num_threads(n); }
inline const char* get_cpu_capability() { return kernels::cpu::cpu_isa_name(kernels::cpu::active_cpu_isa()); }

}  // namespace colony
