// conv_pixels.h's product over scalar arithmetic in tdpbf16ps' order, for the baseline ISA: tests
// run the steps, the weights' tiles and the edge rows on any machine. Also lists the copies a test
// can run here.
#define COLONY_CONV_PIXELS_ISA conv_pixels_emulated
#define COLONY_CONV_PIXELS_NATIVE 0
#include "kernels/cpu/conv_pixels_tiles.h"

#include "kernels/cpu/isa_dispatch_impl.h"

namespace colony::kernels::cpu {

std::vector<const ConvPixelsFns*> runnable_conv_pixels_copies() {
  return runnable_copies<ConvPixelsFns>({{CpuIsa::Avx2, &conv_pixels_emulated::conv_pixels_fns},
                                         {CpuIsa::AmxBf16, &conv_pixels_amx::conv_pixels_fns}});
}

}  // namespace colony::kernels::cpu
