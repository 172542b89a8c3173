// amx_gemm.h's tiles over scalar arithmetic in tdpbf16ps' order, for the baseline ISA: tests run
// the AMX blocking, packing and edge tiles on any machine.
#define COLONY_AMX_ISA amx_emulated
#define COLONY_AMX_NATIVE 0
#include "kernels/cpu/amx_gemm_tiles.h"
