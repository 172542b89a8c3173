// Options vocabulary of nn/: COLONY_ARG setters and the (height, width) pair live in base/.
#pragma once

#include "base/arg.h"
#include "base/int2.h"

namespace colony::nn {

// The pair type used to be nn::Size2; it is now the one colony::Int2 shared with the raw ops.
using Size2 [[deprecated("nn::Size2 is now colony::Int2 (base/int2.h)")]] = colony::Int2;

}  // namespace colony::nn
