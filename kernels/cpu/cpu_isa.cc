#include "kernels/cpu/cpu_isa.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace colony::kernels::cpu {
namespace {

constexpr CpuIsa kAllIsas[] = {CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Bf16, CpuIsa::AmxBf16};

// Linux's arch_prctl codes (asm/prctl.h) and the tile data's XSAVE component
// (Documentation/arch/x86/xstate.rst); spelled out so the build does not need recent headers.
constexpr long kArchReqXcompPerm = 0x1023;
constexpr long kXfeatureXtiledata = 18;

// CPUID.(EAX=7, ECX=0):EDX bit 24 AMX-TILE, bit 22 AMX-BF16; CPUID.1:ECX bit 27 OSXSAVE.
bool cpuid_has_amx_bf16() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (edx >> 24 & 1u) && (edx >> 22 & 1u);
}

bool os_enables_tile_state() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx >> 27 & 1u)) return false;  // no XGETBV
  uint32_t xcr0_lo, xcr0_hi;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  constexpr uint32_t kTileCfg = 1u << 17, kTileData = 1u << 18;
  return (xcr0_lo & (kTileCfg | kTileData)) == (kTileCfg | kTileData);
}

// The first check that fails, or "" when AMX-BF16 may run. Asks for the permission only once the
// CPU and XCR0 say yes.
const char* check_amx() {
  if (!cpuid_has_amx_bf16()) return "the CPU reports no AMX-TILE and AMX-BF16 (CPUID leaf 7)";
  if (!os_enables_tile_state()) return "the OS does not enable the AMX tile state (XCR0 bits 17 and 18)";
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) {
    return "Linux refused arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) (a kernel before 5.16, or a "
           "seccomp filter)";
  }
  return "";
}

}  // namespace

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx2: return "avx2";
    case CpuIsa::Avx512: return "avx512";
    case CpuIsa::Avx512Bf16: return "avx512_bf16";
    case CpuIsa::AmxBf16: return "amx";
  }
  return "?";
}

const char* amx_unusable_reason() {
  static const char* const reason = check_amx();
  return reason;
}

bool amx_usable() { return amx_unusable_reason()[0] == '\0'; }

CpuIsa detected_cpu_isa() {
  // GCC's and Clang's __builtin_cpu_supports also check XGETBV: an OS that does not save the
  // AVX-512 registers reports no AVX-512.
  __builtin_cpu_init();
  bool v4 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512vl");
  if (!v4) return CpuIsa::Avx2;
  if (!__builtin_cpu_supports("avx512bf16")) return CpuIsa::Avx512;
  return amx_usable() ? CpuIsa::AmxBf16 : CpuIsa::Avx512Bf16;
}

CpuIsa capped_cpu_isa(CpuIsa detected, const char* env_cap) {
  if (env_cap == nullptr || env_cap[0] == '\0') return detected;
  for (CpuIsa cap : kAllIsas) {
    if (std::strcmp(env_cap, cpu_isa_name(cap)) == 0) return detected < cap ? detected : cap;
  }
  throw std::invalid_argument(std::string("COLONY_CPU_ISA=") + env_cap +
                              ": expected avx2, avx512, avx512_bf16 or amx (the most capable instruction set the "
                              "CPU kernels may use)");
}

CpuIsa active_cpu_isa() {
  static const CpuIsa isa = capped_cpu_isa(detected_cpu_isa(), std::getenv("COLONY_CPU_ISA"));
  return isa;
}

}  // namespace colony::kernels::cpu
