// conv_weight_rows.h's product over scalar arithmetic in tdpbf16ps' order, for the baseline ISA:
// tests run the strided A rows, grad_y's tiles and the edge rows on any machine.
#define COLONY_CONV_WEIGHT_ROWS_ISA conv_weight_rows_emulated
#define COLONY_CONV_WEIGHT_ROWS_NATIVE 0
#include "kernels/cpu/conv_weight_rows_tiles.h"
