#include "kernels/cpu/cpu_isa.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace colony::kernels::cpu {

const char* cpu_isa_name(CpuIsa isa) { return isa == CpuIsa::Avx512 ? "avx512" : "avx2"; }

CpuIsa detected_cpu_isa() {
  // GCC's and Clang's __builtin_cpu_supports also check XGETBV: an OS that does not save the
  // AVX-512 registers reports no AVX-512.
  __builtin_cpu_init();
  bool v4 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512vl");
  return v4 ? CpuIsa::Avx512 : CpuIsa::Avx2;
}

CpuIsa capped_cpu_isa(CpuIsa detected, const char* env_cap) {
  if (env_cap == nullptr || env_cap[0] == '\0') return detected;
  if (std::strcmp(env_cap, "avx2") == 0) return CpuIsa::Avx2;
  if (std::strcmp(env_cap, "avx512") == 0) return detected;
  throw std::invalid_argument(std::string("COLONY_CPU_ISA=") + env_cap +
                              ": expected avx2 or avx512 (the most capable instruction set the CPU kernels may use)");
}

CpuIsa active_cpu_isa() {
  static const CpuIsa isa = capped_cpu_isa(detected_cpu_isa(), std::getenv("COLONY_CPU_ISA"));
  return isa;
}

}  // namespace colony::kernels::cpu
