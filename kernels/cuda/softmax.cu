#include "kernels/common/softmax.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <limits>

#include "kernels/common/dispatch.h"
#include "kernels/common/log_softmax.h"
#include "kernels/cuda/row_reduce.cuh"

namespace colony::kernels::cuda {
namespace {

// Softmax axis last (inner == 1): one warp or block per row, three passes over the row (max, sum
// of exponentials, write); the row is re-read from L1/L2 rather than kept in registers.
template <bool kWarp, bool kLog, typename T>
__global__ void softmax_rows_kernel(const T* x, T* y, int64_t rows, int64_t dim) {
  using C = compute_t<T>;
  __shared__ C shared[32];
  RowGroup<kWarp> g;
  for (int64_t row = g.first; row < rows; row += g.stride) {
    const T* xr = x + row * dim;
    T* yr = y + row * dim;
    C mx = -std::numeric_limits<C>::infinity();
    for (int64_t i = g.lane; i < dim; i += g.size) mx = NanMax{}(mx, static_cast<C>(xr[i]));
    mx = group_allreduce<kWarp>(mx, NanMax{}, shared);
    C sum = C(0);
    for (int64_t i = g.lane; i < dim; i += g.size) sum += device_exp(static_cast<C>(xr[i]) - mx);
    sum = group_allreduce<kWarp>(sum, Plus{}, shared);
    if constexpr (kLog) {
      const C log_sum = device_log(sum);
      for (int64_t i = g.lane; i < dim; i += g.size) yr[i] = static_cast<T>(log_softmax_value(static_cast<C>(xr[i]), mx, log_sum));
    } else {
      C inv = C(1) / sum;
      for (int64_t i = g.lane; i < dim; i += g.size) yr[i] = static_cast<T>(device_exp(static_cast<C>(xr[i]) - mx) * inv);
    }
  }
}

template <bool kWarp, bool kLog, typename T>
__global__ void softmax_backward_rows_kernel(const T* g, const T* y, T* gx, int64_t rows, int64_t dim) {
  using C = compute_t<T>;
  __shared__ C shared[32];
  RowGroup<kWarp> grp;
  for (int64_t row = grp.first; row < rows; row += grp.stride) {
    const T* gr = g + row * dim;
    const T* yr = y + row * dim;
    T* out = gx + row * dim;
    C acc = C(0);
    for (int64_t i = grp.lane; i < dim; i += grp.size) {
      acc += kLog ? static_cast<C>(gr[i]) : static_cast<C>(gr[i]) * static_cast<C>(yr[i]);
    }
    acc = group_allreduce<kWarp>(acc, Plus{}, shared);
    for (int64_t i = grp.lane; i < dim; i += grp.size) {
      C gi = static_cast<C>(gr[i]), yi = static_cast<C>(yr[i]);
      out[i] = static_cast<T>(kLog ? gi - device_exp(yi) * acc : yi * (gi - acc));
    }
  }
}

// Softmax axis not last: one thread per (outer, inner) column walks the axis with stride inner;
// neighbouring threads read neighbouring columns, so every access is coalesced.
template <bool kLog, typename T>
__global__ void softmax_columns_kernel(const T* x, T* y, int64_t outer, int64_t dim, int64_t inner) {
  using C = compute_t<T>;
  int64_t columns = outer * inner;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t base = (c / inner) * dim * inner + c % inner;
    C mx = -std::numeric_limits<C>::infinity();
    for (int64_t r = 0; r < dim; ++r) mx = NanMax{}(mx, static_cast<C>(x[base + r * inner]));
    C sum = C(0);
    for (int64_t r = 0; r < dim; ++r) sum += device_exp(static_cast<C>(x[base + r * inner]) - mx);
    if constexpr (kLog) {
      const C log_sum = device_log(sum);
      for (int64_t r = 0; r < dim; ++r)
        y[base + r * inner] = static_cast<T>(log_softmax_value(static_cast<C>(x[base + r * inner]), mx, log_sum));
    } else {
      C inv = C(1) / sum;
      for (int64_t r = 0; r < dim; ++r)
        y[base + r * inner] = static_cast<T>(device_exp(static_cast<C>(x[base + r * inner]) - mx) * inv);
    }
  }
}

template <bool kLog, typename T>
__global__ void softmax_backward_columns_kernel(const T* g, const T* y, T* gx, int64_t outer, int64_t dim,
                                                int64_t inner) {
  using C = compute_t<T>;
  int64_t columns = outer * inner;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t base = (c / inner) * dim * inner + c % inner;
    C acc = C(0);
    for (int64_t r = 0; r < dim; ++r) {
      int64_t i = base + r * inner;
      acc += kLog ? static_cast<C>(g[i]) : static_cast<C>(g[i]) * static_cast<C>(y[i]);
    }
    for (int64_t r = 0; r < dim; ++r) {
      int64_t i = base + r * inner;
      C gi = static_cast<C>(g[i]), yi = static_cast<C>(y[i]);
      gx[i] = static_cast<T>(kLog ? gi - device_exp(yi) * acc : yi * (gi - acc));
    }
  }
}

template <bool kLog, typename T>
void softmax_typed(const T* x, T* y, int64_t outer, int64_t dim, int64_t inner, cudaStream_t s) {
  if (inner == 1) {
    bool warp = use_warp_rows(dim);
    auto kernel = warp ? softmax_rows_kernel<true, kLog, T> : softmax_rows_kernel<false, kLog, T>;
    kernel<<<row_blocks(outer, warp), kRowThreads, 0, s>>>(x, y, outer, dim);
  } else {
    softmax_columns_kernel<kLog, T><<<grid_blocks(outer * inner, kRowThreads), kRowThreads, 0, s>>>(x, y, outer, dim, inner);
  }
}

template <bool kLog, typename T>
void softmax_backward_typed(const T* g, const T* y, T* gx, int64_t outer, int64_t dim, int64_t inner, cudaStream_t s) {
  if (inner == 1) {
    bool warp = use_warp_rows(dim);
    auto kernel = warp ? softmax_backward_rows_kernel<true, kLog, T> : softmax_backward_rows_kernel<false, kLog, T>;
    kernel<<<row_blocks(outer, warp), kRowThreads, 0, s>>>(g, y, gx, outer, dim);
  } else {
    softmax_backward_columns_kernel<kLog, T>
        <<<grid_blocks(outer * inner, kRowThreads), kRowThreads, 0, s>>>(g, y, gx, outer, dim, inner);
  }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void SoftmaxForward::cuda(DType dtype, const void* x, void* y, int64_t outer, int64_t dim, int64_t inner,
                                  bool log, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (outer * dim * inner == 0) return;
  const char* op = log ? "log_softmax" : "softmax";
  auto s = as_stream(stream);
  COLONY_DISPATCH_FLOATING(dtype, op, [&] {
    const auto* xp = static_cast<const scalar_t*>(x);
    auto* yp = static_cast<scalar_t*>(y);
    if (log) {
      softmax_typed<true>(xp, yp, outer, dim, inner, s);
    } else {
      softmax_typed<false>(xp, yp, outer, dim, inner, s);
    }
  });
  after_launch(op);
}

void SoftmaxBackward::cuda(DType dtype, const void* g, const void* y, void* gx, int64_t outer, int64_t dim,
                                   int64_t inner, bool log, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (outer * dim * inner == 0) return;
  const char* op = log ? "log_softmax_backward" : "softmax_backward";
  auto s = as_stream(stream);
  COLONY_DISPATCH_FLOATING(dtype, op, [&] {
    const auto* gp = static_cast<const scalar_t*>(g);
    const auto* yp = static_cast<const scalar_t*>(y);
    auto* gxp = static_cast<scalar_t*>(gx);
    if (log) {
      softmax_backward_typed<true>(gp, yp, gxp, outer, dim, inner, s);
    } else {
      softmax_backward_typed<false>(gp, yp, gxp, outer, dim, inner, s);
    }
  });
  after_launch(op);
}

}  // namespace colony::kernels
