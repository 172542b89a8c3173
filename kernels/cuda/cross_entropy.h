// CUDA fused cross-entropy / nll_loss: the contract of kernels/cpu/cross_entropy.h, queued on
// `stream`. The forward is one kernel (row losses, and for Mean/Sum the reduction too: each block
// sums its rows, the last block to finish adds the block sums in block order, so the result is
// deterministic); the backward is one kernel. Targets are checked on the device: a bad one is
// recorded for check_device_errors() (kernels/cuda/device_errors.h), its row then counts as ignored.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/cross_entropy.h"
#include "kernels/common/dtype.h"

namespace colony::kernels::cuda {

// As on the CPU, except that `counted` is written for Mean and Sum only (the backward reads it
// for Mean only).

// Bytes of device scratch the forward needs (block sums and a completion counter).
size_t cross_entropy_scratch_bytes(const CrossEntropyParams& p);

void cross_entropy_forward(DType dtype, const void* x, const int64_t* target, const CrossEntropyParams& p, void* loss,
                           void* lse, void* counted, void* scratch, void* stream);

void cross_entropy_backward(DType dtype, const void* grad_output, const void* x, const int64_t* target,
                            const void* lse, const void* counted, const CrossEntropyParams& p, void* grad_x,
                            void* stream);

}  // namespace colony::kernels::cuda
