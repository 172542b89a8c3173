// amx_gemm.h's tiles on the AMX instructions; called only where active_cpu_isa() reaches AmxBf16.
#define COLONY_AMX_ISA amx_bf16
#define COLONY_AMX_NATIVE 1
#include "kernels/cpu/amx_gemm_tiles.h"
