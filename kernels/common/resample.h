// Resampling along one dim of a contiguous array read as [outer, in, inner]: each output position
// j reads `taps` consecutive input positions from start[j], weighted (F::interpolate's separable
// passes, nn/functional_upsample.cc). The kernel entry points, declared once for both devices
// (kernel.h), defined in kernels/cpu/resample.cc and kernels/cuda/resample.cu.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"

namespace colony::kernels {

// y[o, j, i] = sum over t < taps of weight[j * taps + t] * x[o, start[j] + t, i], for a float32 or
// float64 x and y (float16/bfloat16 are widened by the caller) and weights of that dtype.
// 0 <= start[j] and start[j] + taps <= in for every j < out.
COLONY_KERNEL(ResampleForward, DType dtype, const void* x, void* y, const int64_t* start, const void* weight,
              int64_t outer, int64_t in, int64_t out, int64_t inner, int64_t taps);

// The adjoint (the forward's gradient): gx[o, p, i] = sum over the j with start[j] <= p <
// start[j] + taps of weight[j * taps + p - start[j]] * gy[o, j, i], every element of gx written.
// readers[2 * p] and readers[2 * p + 1] are the first and one-past-last output positions whose taps
// cover input position p (a range, as start is non-decreasing; resample_readers below). Each
// element of gx is a gather through that range, written by one thread: race-free without atomics,
// and the same bits on any number of threads.
COLONY_KERNEL(ResampleAdjoint, DType dtype, const void* gy, void* gx, const int64_t* start, const int64_t* readers,
              const void* weight, int64_t outer, int64_t in, int64_t out, int64_t inner, int64_t taps);

// The readers table of ResampleAdjoint from a non-decreasing start[out] (two pointers, O(in + out)).
inline void resample_readers(const int64_t* start, int64_t in, int64_t out, int64_t taps, int64_t* readers) {
  int64_t first = 0, end = 0;
  for (int64_t p = 0; p < in; ++p) {
    while (first < out && start[first] + taps <= p) ++first;
    if (end < first) end = first;
    while (end < out && start[end] <= p) ++end;
    readers[2 * p] = first;
    readers[2 * p + 1] = end;
  }
}

}  // namespace colony::kernels
