// conv_pixels.h's product over scalar arithmetic in tdpbf16ps' order, for the baseline ISA: tests
// run the steps, the weights' tiles and the edge rows on any machine.
#define COLONY_CONV_PIXELS_ISA conv_pixels_emulated
#define COLONY_CONV_PIXELS_NATIVE 0
#include "kernels/cpu/conv_pixels_tiles.h"
