// torch.utils.checkpoint's place in the nn API: nn::utils::checkpoint is autograd::checkpoint
// (autograd/checkpoint.h), beside nn::utils::clip_grad_norm_, for code written against the nn
// spelling (HuggingFace's gradient checkpointing wraps each block's forward in it).
#pragma once

#include "autograd/checkpoint.h"

namespace colony::nn::utils {

using autograd::checkpoint;
using autograd::CheckpointFunction;

}  // namespace colony::nn::utils
