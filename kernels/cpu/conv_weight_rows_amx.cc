// conv_weight_rows.h's product on the AMX instructions; called only where amx_gemm runs on the hardware.
#define COLONY_CONV_WEIGHT_ROWS_ISA conv_weight_rows_amx
#define COLONY_CONV_WEIGHT_ROWS_NATIVE 1
#include "kernels/cpu/conv_weight_rows_tiles.h"
