// The raw resampling op along one dim (ops/resample_ops.cc): F::interpolate's separable passes
// (nn/functional_upsample.cc) as one kernel each way (kernels/common/resample.h). Nothing here
// records autograd history; autograd/resample.h builds the differentiable op on these.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace colony::raw {

// The taps of one resampled dim of `in` positions: output position j reads input positions
// start[j] .. start[j] + taps - 1 with weights weight[j * taps + t]. start is non-decreasing and
// within [0, in - taps]. The weights are kept in double and handed to the kernel in the input's
// dtype (computed by the caller in the type torch computes them in, so the float rounding is
// theirs).
struct ResampleTaps {
  int64_t in = 0;
  int64_t taps = 1;
  std::vector<int64_t> start;
  std::vector<double> weight;
  int64_t out() const { return static_cast<int64_t>(start.size()); }
};

// x (float32 or float64, any device, any strides) resampled along `dim`: size(dim) must be taps.in;
// the result has taps.out() there and is contiguous.
Tensor resample(const Tensor& x, int64_t dim, const ResampleTaps& taps);
// The adjoint of resample (its gradient): gy has taps.out() along `dim`, the result taps.in.
Tensor resample_adjoint(const Tensor& gy, int64_t dim, const ResampleTaps& taps);

}  // namespace colony::raw
