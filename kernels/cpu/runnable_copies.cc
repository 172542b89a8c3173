// Every family's copies a test can run on this CPU: its emulated copy, built for the baseline ISA
// in this test-only library, and each native one whose level detected_cpu_isa() reaches. Declared
// beside each family's table (amx_gemm.h, small_gemm_isa.h, conv_pixels.h, conv_channels.h,
// conv_weight_rows.h); one file, so that a family added to the dispatch adds its list here.
#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/conv_channels.h"
#include "kernels/cpu/conv_pixels.h"
#include "kernels/cpu/conv_weight_rows.h"
#include "kernels/cpu/isa_dispatch_impl.h"
#include "kernels/cpu/small_gemm_isa.h"

namespace colony::kernels::cpu {

namespace {

// The AMX families': the emulated copy, and the native one where AMX runs.
template <typename Fns>
std::vector<const Fns*> emulated_and_amx(const Fns& (*emulated)(), const Fns& (*amx)()) {
  return runnable_copies<Fns>({{CpuIsa::Avx2, emulated}, {CpuIsa::AmxBf16, amx}});
}

}  // namespace

std::vector<const SmallGemmBf16Fns*> runnable_bf16_copies() {
  return runnable_copies<SmallGemmBf16Fns>({{CpuIsa::Avx2, &bf16_emulated::small_gemm_bf16_fns},
                                            {CpuIsa::Avx512Bf16, &avx512_bf16::small_gemm_bf16_fns}});
}

std::vector<const AmxGemmFns*> runnable_amx_copies() {
  return emulated_and_amx(&amx_emulated::amx_gemm_fns, &amx_bf16::amx_gemm_fns);
}

std::vector<const ConvPixelsFns*> runnable_conv_pixels_copies() {
  return emulated_and_amx(&conv_pixels_emulated::conv_pixels_fns, &conv_pixels_amx::conv_pixels_fns);
}

std::vector<const ConvChannelsFns*> runnable_conv_channels_copies() {
  return emulated_and_amx(&conv_channels_emulated::conv_channels_fns, &conv_channels_amx::conv_channels_fns);
}

std::vector<const ConvWeightRowsFns*> runnable_conv_weight_rows_copies() {
  return emulated_and_amx(&conv_weight_rows_emulated::conv_weight_rows_fns,
                          &conv_weight_rows_amx::conv_weight_rows_fns);
}

}  // namespace colony::kernels::cpu
