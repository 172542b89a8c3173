// kernels/cpu/cpu_isa.h: the COLONY_CPU_ISA cap and the run-time detection, AMX's three checks
// included, against what the compiler's CPU model and /proc/cpuinfo say.
#include "kernels/cpu/cpu_isa.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace colony::kernels::cpu {
namespace {

TEST(CpuIsa, EnvironmentCapParses) {
  EXPECT_EQ(capped_cpu_isa(CpuIsa::Avx512, nullptr), CpuIsa::Avx512);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::Avx512, ""), CpuIsa::Avx512);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::Avx512, "avx2"), CpuIsa::Avx2);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::Avx512, "avx512"), CpuIsa::Avx512);
  // A cap above what the CPU has gives what the CPU has.
  EXPECT_EQ(capped_cpu_isa(CpuIsa::Avx2, "avx512"), CpuIsa::Avx2);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::Avx512Bf16, nullptr), CpuIsa::Avx512Bf16);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::Avx512Bf16, "avx512"), CpuIsa::Avx512);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::Avx512Bf16, "avx512_bf16"), CpuIsa::Avx512Bf16);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::Avx512, "avx512_bf16"), CpuIsa::Avx512);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::AmxBf16, nullptr), CpuIsa::AmxBf16);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::AmxBf16, "amx"), CpuIsa::AmxBf16);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::AmxBf16, "avx512_bf16"), CpuIsa::Avx512Bf16);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::AmxBf16, "avx2"), CpuIsa::Avx2);
  EXPECT_EQ(capped_cpu_isa(CpuIsa::Avx512Bf16, "amx"), CpuIsa::Avx512Bf16);
  EXPECT_STREQ(cpu_isa_name(CpuIsa::Avx512Bf16), "avx512_bf16");
  EXPECT_STREQ(cpu_isa_name(CpuIsa::AmxBf16), "amx");
  try {
    capped_cpu_isa(CpuIsa::Avx2, "avx512bf16");
    ADD_FAILURE() << "an unknown COLONY_CPU_ISA was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("COLONY_CPU_ISA=avx512bf16: expected avx2, avx512, avx512_bf16 or amx"),
              std::string::npos)
        << e.what();
  }
}

TEST(CpuIsa, DetectionAgreesWithTheCompilersView) {
  __builtin_cpu_init();
  bool avx512f = __builtin_cpu_supports("avx512f");
  bool avx512bf16 = __builtin_cpu_supports("avx512bf16");
  const CpuIsa isa = detected_cpu_isa();
  EXPECT_TRUE(isa == CpuIsa::Avx2 || avx512f) << "AVX-512 reported without avx512f";
  EXPECT_TRUE(isa < CpuIsa::Avx512Bf16 || avx512bf16) << "avx512_bf16 reported without avx512bf16";
  EXPECT_TRUE(isa != CpuIsa::Avx512 || !avx512bf16) << "avx512bf16 present but not reported";
  EXPECT_EQ(isa == CpuIsa::AmxBf16, avx512bf16 && amx_usable());
  EXPECT_TRUE(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      << "the build targets x86-64-v3: this CPU cannot run it";
}

// The flags Linux lists for the CPU (amx_tile, amx_bf16) only appear when the kernel supports the
// tile state, so on Linux 5.16 on they and amx_usable() must agree, and the reason says why not.
TEST(CpuIsa, AmxUsableWhereLinuxListsTheFlags) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  if (!cpuinfo) GTEST_SKIP() << "no /proc/cpuinfo";
  std::string line;
  bool tile = false, bf16 = false;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    tile = line.find(" amx_tile") != std::string::npos;
    bf16 = line.find(" amx_bf16") != std::string::npos;
    break;
  }
  EXPECT_EQ(amx_usable(), tile && bf16) << amx_unusable_reason();
  EXPECT_EQ(amx_usable(), std::string(amx_unusable_reason()).empty());
  if (!amx_usable()) std::printf("AMX not usable here: %s\n", amx_unusable_reason());
}

}  // namespace
}  // namespace colony::kernels::cpu
