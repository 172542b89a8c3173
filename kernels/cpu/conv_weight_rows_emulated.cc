// conv_weight_rows.h's product over scalar arithmetic in tdpbf16ps' order, for the baseline ISA:
// tests run the strided A rows, grad_y's tiles and the edge rows on any machine. Also lists the
// copies a test can run here.
#define COLONY_CONV_WEIGHT_ROWS_ISA conv_weight_rows_emulated
#define COLONY_CONV_WEIGHT_ROWS_NATIVE 0
#include "kernels/cpu/conv_weight_rows_tiles.h"

#include "kernels/cpu/isa_dispatch_impl.h"

namespace colony::kernels::cpu {

std::vector<const ConvWeightRowsFns*> runnable_conv_weight_rows_copies() {
  return runnable_copies<ConvWeightRowsFns>({{CpuIsa::Avx2, &conv_weight_rows_emulated::conv_weight_rows_fns},
                                             {CpuIsa::AmxBf16, &conv_weight_rows_amx::conv_weight_rows_fns}});
}

}  // namespace colony::kernels::cpu
