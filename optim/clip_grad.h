// Gradient clipping lives where PyTorch has it, nn::utils (nn/clip_grad.h); these names keep the
// earlier optim:: spelling working.
#pragma once

#include "nn/clip_grad.h"

namespace colony::optim {

using nn::utils::clip_grad_norm_;
using nn::utils::clip_grad_value_;

}  // namespace colony::optim
