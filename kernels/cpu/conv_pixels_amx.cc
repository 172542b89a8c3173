// conv_pixels.h's product on the AMX instructions; called only where amx_gemm runs on the hardware.
#define COLONY_CONV_PIXELS_ISA conv_pixels_amx
#define COLONY_CONV_PIXELS_NATIVE 1
#include "kernels/cpu/conv_pixels_tiles.h"
