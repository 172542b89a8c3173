#include "kernels/cpu/cpu_isa.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace colony::kernels::cpu {

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx2: return "avx2";
    case CpuIsa::Avx512: return "avx512";
    case CpuIsa::Avx512Bf16: return "avx512_bf16";
  }
  return "?";
}

CpuIsa detected_cpu_isa() {
  // GCC's and Clang's __builtin_cpu_supports also check XGETBV: an OS that does not save the
  // AVX-512 registers reports no AVX-512.
  __builtin_cpu_init();
  bool v4 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512vl");
  if (!v4) return CpuIsa::Avx2;
  return __builtin_cpu_supports("avx512bf16") ? CpuIsa::Avx512Bf16 : CpuIsa::Avx512;
}

CpuIsa capped_cpu_isa(CpuIsa detected, const char* env_cap) {
  if (env_cap == nullptr || env_cap[0] == '\0') return detected;
  for (CpuIsa cap : {CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Bf16}) {
    if (std::strcmp(env_cap, cpu_isa_name(cap)) == 0) return detected < cap ? detected : cap;
  }
  throw std::invalid_argument(std::string("COLONY_CPU_ISA=") + env_cap +
                              ": expected avx2, avx512 or avx512_bf16 (the most capable instruction set the CPU "
                              "kernels may use)");
}

CpuIsa active_cpu_isa() {
  static const CpuIsa isa = capped_cpu_isa(detected_cpu_isa(), std::getenv("COLONY_CPU_ISA"));
  return isa;
}

}  // namespace colony::kernels::cpu
