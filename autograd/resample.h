// Differentiable resampling along one dim (autograd/resample.cc): raw::resample, whose gradient is
// its adjoint, raw::resample_adjoint. F::interpolate's one-pass path (nn/functional_upsample.cc).
#pragma once

#include "ops/resample_ops.h"
#include "tensor/tensor.h"

namespace colony {

// x (float32 or float64) resampled along dim by taps (ops/resample_ops.h); records the backward.
Tensor resample(const Tensor& x, int64_t dim, const raw::ResampleTaps& taps);

}  // namespace colony
