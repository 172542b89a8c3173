// conv_channels.h's product over scalar arithmetic in tdpbf16ps' order, for the baseline ISA: tests
// run the layouts' addresses, the weights' tiles and the groups at a row's end on any machine. Also
// lists the copies a test can run here.
#define COLONY_CONV_CHANNELS_ISA conv_channels_emulated
#define COLONY_CONV_CHANNELS_NATIVE 0
#include "kernels/cpu/conv_channels_tiles.h"

#include "kernels/cpu/isa_dispatch_impl.h"

namespace colony::kernels::cpu {

std::vector<const ConvChannelsFns*> runnable_conv_channels_copies() {
  return runnable_copies<ConvChannelsFns>({{CpuIsa::Avx2, &conv_channels_emulated::conv_channels_fns},
                                           {CpuIsa::AmxBf16, &conv_channels_amx::conv_channels_fns}});
}

}  // namespace colony::kernels::cpu
