// conv_channels.h's product on the AMX instructions; called only where amx_gemm runs on the hardware.
#define COLONY_CONV_CHANNELS_ISA conv_channels_amx
#define COLONY_CONV_CHANNELS_NATIVE 1
#include "kernels/cpu/conv_channels_tiles.h"
