// Resampling along one dim on the CPU (kernels/common/resample.h). Rows of the contiguous `inner`
// dim are weighted and summed whole, so the compiler vectorizes the multiply-adds over inner; along
// the last dim (inner == 1) outputs are taken in blocks of kBlock positions with the tap loop
// outside, so the same multiply-add runs across neighbouring outputs (a vector of j). Every output
// element is one fixed sum in tap order, so the result does not depend on the thread count.
#include "kernels/common/resample.h"

#include <algorithm>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {
namespace {

// Elements a thread's chunk should at least hold (multiply-adds), so small resamples stay on the
// calling thread: the same order as the elementwise kernels' grain.
constexpr int64_t kGrainWork = 32768;
// Outputs of one row (inner == 1) computed together, and the piece of a long inner row summed in
// one go (kept in L1 while every tap adds into it).
constexpr int64_t kBlock = 64;
constexpr int64_t kRowPiece = 1024;

int64_t grain_of(int64_t work_per_item) { return std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, work_per_item)); }

// y_row[0, n) = sum_t w[t] * x_rows[t * stride + [0, n)].
template <typename T>
void weighted_rows(const T* __restrict x, int64_t stride, const T* __restrict w, int64_t taps, T* __restrict y,
                   int64_t n) {
  for (int64_t b = 0; b < n; b += kRowPiece) {
    const int64_t m = std::min(kRowPiece, n - b);
    const T* xb = x + b;
    T* yb = y + b;
    const T w0 = w[0];
    for (int64_t i = 0; i < m; ++i) yb[i] = w0 * xb[i];
    for (int64_t t = 1; t < taps; ++t) {
      const T wt = w[t];
      const T* xt = xb + t * stride;
      for (int64_t i = 0; i < m; ++i) yb[i] += wt * xt[i];
    }
  }
}

// One row along the last dim: y[j] = sum_t weight[j * taps + t] * x[start[j] + t].
template <typename T, int kTaps>
void last_dim_row(const T* __restrict x, T* __restrict y, const int64_t* __restrict start,
                  const T* __restrict weight, int64_t out, int64_t taps_arg) {
  const int64_t taps = kTaps > 0 ? kTaps : taps_arg;
  for (int64_t j0 = 0; j0 < out; j0 += kBlock) {
    const int64_t m = std::min(kBlock, out - j0);
    const int64_t* s = start + j0;
    const T* w = weight + j0 * taps;
    T acc[kBlock];
    for (int64_t j = 0; j < m; ++j) acc[j] = w[j * taps] * x[s[j]];
    for (int64_t t = 1; t < taps; ++t) {
      for (int64_t j = 0; j < m; ++j) acc[j] += w[j * taps + t] * x[s[j] + t];
    }
    std::copy(acc, acc + m, y + j0);
  }
}

template <typename T>
void forward(const T* x, T* y, const int64_t* start, const T* weight, int64_t outer, int64_t in, int64_t out,
             int64_t inner, int64_t taps) {
  if (inner == 1) {
    cpu::parallel_for(outer, grain_of(out * taps), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        const T* xr = x + o * in;
        T* yr = y + o * out;
        switch (taps) {  // the common tap counts unrolled: linear, cubic
          case 2: last_dim_row<T, 2>(xr, yr, start, weight, out, taps); break;
          case 4: last_dim_row<T, 4>(xr, yr, start, weight, out, taps); break;
          default: last_dim_row<T, 0>(xr, yr, start, weight, out, taps);
        }
      }
    });
    return;
  }
  cpu::parallel_for(outer * out, grain_of(inner * taps), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r / out, j = r % out;
      weighted_rows(x + (o * in + start[j]) * inner, inner, weight + j * taps, taps, y + r * inner, inner);
    }
  });
}

template <typename T>
void adjoint(const T* gy, T* gx, const int64_t* start, const int64_t* readers, const T* weight, int64_t outer,
             int64_t in, int64_t out, int64_t inner, int64_t taps) {
  if (inner == 1) {
    cpu::parallel_for(outer, grain_of(out * taps), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        const T* gyr = gy + o * out;
        T* gxr = gx + o * in;
        for (int64_t p = 0; p < in; ++p) {
          T acc = T(0);
          for (int64_t j = readers[2 * p]; j < readers[2 * p + 1]; ++j) acc += weight[j * taps + p - start[j]] * gyr[j];
          gxr[p] = acc;
        }
      }
    });
    return;
  }
  cpu::parallel_for(outer * in, grain_of(inner * taps), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r / in, p = r % in;
      T* __restrict gxr = gx + r * inner;
      std::fill(gxr, gxr + inner, T(0));
      for (int64_t j = readers[2 * p]; j < readers[2 * p + 1]; ++j) {
        const T w = weight[j * taps + p - start[j]];
        const T* __restrict g = gy + (o * out + j) * inner;
        for (int64_t i = 0; i < inner; ++i) gxr[i] += w * g[i];
      }
    }
  });
}

}  // namespace

void ResampleForward::cpu(DType dtype, const void* x, void* y, const int64_t* start, const void* weight,
                          int64_t outer, int64_t in, int64_t out, int64_t inner, int64_t taps) {
  if (outer * out * inner == 0) return;
  COLONY_DISPATCH_FLOAT32_64(dtype, "resample", [&] {
    forward(static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y), start, static_cast<const scalar_t*>(weight),
            outer, in, out, inner, taps);
  });
}

void ResampleAdjoint::cpu(DType dtype, const void* gy, void* gx, const int64_t* start, const int64_t* readers,
                          const void* weight, int64_t outer, int64_t in, int64_t out, int64_t inner, int64_t taps) {
  if (outer * in * inner == 0) return;
  COLONY_DISPATCH_FLOAT32_64(dtype, "resample adjoint", [&] {
    adjoint(static_cast<const scalar_t*>(gy), static_cast<scalar_t*>(gx), start, readers,
            static_cast<const scalar_t*>(weight), outer, in, out, inner, taps);
  });
}

}  // namespace colony::kernels
