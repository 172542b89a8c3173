#include "kernels/common/norm.h"

#include <cuda_runtime.h>

#include <string>

#include "kernels/common/dispatch.h"
#include "runtime/cuda/cuda_check.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/row_reduce.cuh"

namespace colony::kernels::cuda {
namespace {

// One warp (rows up to kWarpRowLimit) or one block per row: the mean, then the squared deviations
// (a second read of the row, from L1/L2: the one-pass E[x^2] - mean^2 loses precision for rows
// with a large mean), then the output.
template <bool kWarp, typename T>
__global__ void norm_forward_kernel(const T* x, const compute_t<T>* w, const compute_t<T>* b, T* y,
                                    compute_t<T>* mean_out, compute_t<T>* rstd_out, int64_t rows, int64_t cols,
                                    compute_t<T> eps, bool rms) {
  using C = compute_t<T>;
  __shared__ C shared[32];
  RowGroup<kWarp> g;
  for (int64_t row = g.first; row < rows; row += g.stride) {
    const T* xr = x + row * cols;
    T* yr = y + row * cols;
    C mean = C(0);
    if (!rms) {
      C s = C(0);
      for (int64_t i = g.lane; i < cols; i += g.size) s += static_cast<C>(xr[i]);
      mean = group_allreduce<kWarp>(s, Plus{}, shared) / static_cast<C>(cols);
    }
    C sq = C(0);
    for (int64_t i = g.lane; i < cols; i += g.size) {
      C d = static_cast<C>(xr[i]) - mean;
      sq += d * d;
    }
    sq = group_allreduce<kWarp>(sq, Plus{}, shared);
    const C rstd = C(1) / sqrt(sq / static_cast<C>(cols) + eps);
    if (g.lane == 0) {
      if (mean_out) mean_out[row] = mean;
      rstd_out[row] = rstd;
    }
    for (int64_t i = g.lane; i < cols; i += g.size) {
      C v = (static_cast<C>(xr[i]) - mean) * rstd;
      if (w) v *= w[i];
      if (b && !rms) v += b[i];
      yr[i] = static_cast<T>(v);
    }
  }
}

// dx, one warp or block per row: dx = rstd * (g - sum(g) / n - xhat * sum(g * xhat) / n).
template <bool kWarp, typename T>
__global__ void norm_backward_dx_kernel(const T* dy, const T* x, const compute_t<T>* mean, const compute_t<T>* rstd,
                                        const compute_t<T>* w, T* dx, int64_t rows, int64_t cols, bool rms) {
  using C = compute_t<T>;
  __shared__ C shared[32];
  RowGroup<kWarp> grp;
  for (int64_t row = grp.first; row < rows; row += grp.stride) {
    const T* dyr = dy + row * cols;
    const T* xr = x + row * cols;
    const C m = rms ? C(0) : mean[row], r = rstd[row];
    C a = C(0), b = C(0);
    for (int64_t i = grp.lane; i < cols; i += grp.size) {
      C g = static_cast<C>(dyr[i]) * (w ? w[i] : C(1));
      a += g;
      b += g * (static_cast<C>(xr[i]) - m) * r;
    }
    a = group_allreduce<kWarp>(a, Plus{}, shared);
    b = group_allreduce<kWarp>(b, Plus{}, shared);
    const C a_n = rms ? C(0) : a / static_cast<C>(cols), b_n = b / static_cast<C>(cols);
    for (int64_t i = grp.lane; i < cols; i += grp.size) {
      C g = static_cast<C>(dyr[i]) * (w ? w[i] : C(1));
      C xhat = (static_cast<C>(xr[i]) - m) * r;
      dx[row * cols + i] = static_cast<T>(r * (g - a_n - xhat * b_n));
    }
  }
}

// dweight / dbias: a block of 32 columns x kParamRows row lanes sums a slice of the rows (reads
// along a row are coalesced), combines its row lanes in shared memory and adds the slice's sum
// into the zeroed outputs with one atomic per column.
constexpr int kParamRows = 8;
constexpr int64_t kRowsPerSlice = 256;

template <typename T>
__global__ void norm_backward_params_kernel(const T* dy, const T* x, const compute_t<T>* mean,
                                            const compute_t<T>* rstd, compute_t<T>* dw, compute_t<T>* db,
                                            int64_t rows, int64_t cols, bool rms) {
  using C = compute_t<T>;
  __shared__ C sw[kParamRows][33], sb[kParamRows][33];
  const int64_t col = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * kRowsPerSlice;
  const int64_t r1 = r0 + kRowsPerSlice < rows ? r0 + kRowsPerSlice : rows;
  C aw = C(0), ab = C(0);
  if (col < cols) {
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kParamRows) {
      C d = static_cast<C>(dy[r * cols + col]);
      ab += d;
      aw += d * (static_cast<C>(x[r * cols + col]) - (rms ? C(0) : mean[r])) * rstd[r];
    }
  }
  sw[threadIdx.y][threadIdx.x] = aw;
  sb[threadIdx.y][threadIdx.x] = ab;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    for (int k = 1; k < kParamRows; ++k) {
      aw += sw[k][threadIdx.x];
      ab += sb[k][threadIdx.x];
    }
    if (dw) atomic_add(dw + col, aw);
    if (db) atomic_add(db + col, ab);
  }
}

template <typename T>
void forward_typed(const T* x, const compute_t<T>* w, const compute_t<T>* b, T* y, compute_t<T>* mean,
                   compute_t<T>* rstd, int64_t rows, int64_t cols, double eps, bool rms, cudaStream_t s) {
  bool warp = use_warp_rows(cols);
  auto kernel = warp ? norm_forward_kernel<true, T> : norm_forward_kernel<false, T>;
  kernel<<<row_blocks(rows, warp), kRowThreads, 0, s>>>(x, w, b, y, mean, rstd, rows, cols,
                                                        static_cast<compute_t<T>>(eps), rms);
}

template <typename T>
void backward_typed(const T* dy, const T* x, const compute_t<T>* mean, const compute_t<T>* rstd,
                    const compute_t<T>* w, T* dx, compute_t<T>* dw, compute_t<T>* db, int64_t rows, int64_t cols,
                    bool rms, cudaStream_t s, const char* op) {
  using C = compute_t<T>;
  if (dw) check_cuda(cudaMemsetAsync(dw, 0, cols * sizeof(C), s), (std::string(op) + ": cudaMemsetAsync").c_str());
  if (db) check_cuda(cudaMemsetAsync(db, 0, cols * sizeof(C), s), (std::string(op) + ": cudaMemsetAsync").c_str());
  if (rows == 0) return;
  if (dx) {
    bool warp = use_warp_rows(cols);
    auto kernel = warp ? norm_backward_dx_kernel<true, T> : norm_backward_dx_kernel<false, T>;
    kernel<<<row_blocks(rows, warp), kRowThreads, 0, s>>>(dy, x, mean, rstd, w, dx, rows, cols, rms);
  }
  if (dw || db) {
    const int64_t slices = ceil_div(rows, kRowsPerSlice);
    // Beyond kMaxGridY slices a launch covers kMaxGridY of them at a time.
    for (int64_t first = 0; first < slices; first += kMaxGridY) {
      const int64_t n = slices - first < kMaxGridY ? slices - first : kMaxGridY;
      const int64_t row0 = first * kRowsPerSlice;
      dim3 grid(static_cast<unsigned>(ceil_div(cols, 32)), static_cast<unsigned>(n));
      norm_backward_params_kernel<T><<<grid, dim3(32, kParamRows), 0, s>>>(
          dy + row0 * cols, x + row0 * cols, mean ? mean + row0 : nullptr, rstd + row0, dw, db, rows - row0, cols, rms);
    }
  }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void RowNormForward::cuda(DType dtype, const void* x, const void* weight, const void* bias, void* y, void* mean,
                          void* rstd, int64_t rows, int64_t cols, double eps, bool rms, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (rows == 0) return;
  const char* op = rms ? "rms_norm" : "layer_norm";
  COLONY_DISPATCH_FLOATING(dtype, op, [&] {
    using C = compute_t<scalar_t>;
    forward_typed(static_cast<const scalar_t*>(x), static_cast<const C*>(weight), static_cast<const C*>(bias),
                  static_cast<scalar_t*>(y), static_cast<C*>(mean), static_cast<C*>(rstd), rows, cols, eps, rms,
                  as_stream(stream));
  });
  after_launch(op);
}

void RowNormBackward::cuda(DType dtype, const void* dy, const void* x, const void* mean, const void* rstd,
                           const void* weight, void* dx, void* dweight, void* dbias, int64_t rows, int64_t cols,
                           bool rms, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  const char* op = rms ? "rms_norm_backward" : "layer_norm_backward";
  COLONY_DISPATCH_FLOATING(dtype, op, [&] {
    using C = compute_t<scalar_t>;
    backward_typed(static_cast<const scalar_t*>(dy), static_cast<const scalar_t*>(x), static_cast<const C*>(mean),
                   static_cast<const C*>(rstd), static_cast<const C*>(weight), static_cast<scalar_t*>(dx),
                   static_cast<C*>(dweight), static_cast<C*>(dbias), rows, cols, rms, as_stream(stream), op);
  });
  after_launch(op);
}

}  // namespace colony::kernels
