// conv_channels.h's product over scalar arithmetic in tdpbf16ps' order, for the baseline ISA: tests
// run the layouts' addresses, the weights' tiles and the groups at a row's end on any machine.
#define COLONY_CONV_CHANNELS_ISA conv_channels_emulated
#define COLONY_CONV_CHANNELS_NATIVE 0
#include "kernels/cpu/conv_channels_tiles.h"
