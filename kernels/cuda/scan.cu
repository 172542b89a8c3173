#include "kernels/common/scan.h"

#include <cuda_runtime.h>

#include <limits>
#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

// One thread per (outer, inner) column walks the axis, as cumsum.cu's column kernel: neighbouring
// threads take neighbouring columns, so with inner > 1 every step is a coalesced read and write.
// (A long last axis over few rows leaves most of the device idle; cumsum's tiled row scan would
// need an associative form of each step, which the index-carrying max/min do not have as written.)
constexpr int kThreads = 256;

template <typename T, typename Out>
__global__ void scan_prod_kernel(const T* x, Out* y, int64_t outer, int64_t dim, int64_t inner) {
  using Acc = cumprod_acc_t<T>;
  COLONY_GRID_LOOP(c, outer * inner) {
    const int64_t base = (c / inner) * dim * inner + c % inner;
    Acc acc = Acc(1);
    for (int64_t r = 0; r < dim; ++r) {
      acc *= static_cast<Acc>(static_cast<compute_t<T>>(x[base + r * inner]));
      y[base + r * inner] = static_cast<Out>(acc);
    }
  }
}

template <typename T>
__global__ void scan_extreme_kernel(const T* x, T* y, int64_t* indices, int64_t outer, int64_t dim, int64_t inner,
                                    bool is_max) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(c, outer * inner) {
    const int64_t base = (c / inner) * dim * inner + c % inner;
    C acc = static_cast<C>(x[base]);
    int64_t at_index = 0;
    for (int64_t r = 0; r < dim; ++r) {
      if (extreme_step(static_cast<C>(x[base + r * inner]), acc, is_max)) at_index = r;
      y[base + r * inner] = static_cast<T>(acc);
      indices[base + r * inner] = at_index;
    }
  }
}

template <typename T>
__global__ void scan_log_sum_exp_kernel(const T* x, T* y, int64_t outer, int64_t dim, int64_t inner) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(c, outer * inner) {
    const int64_t base = (c / inner) * dim * inner + c % inner;
    C acc = -std::numeric_limits<C>::infinity();
    for (int64_t r = 0; r < dim; ++r) {
      acc = log_add_exp(acc, static_cast<C>(x[base + r * inner]));
      y[base + r * inner] = static_cast<T>(acc);
    }
  }
}

template <typename T>
__global__ void cumprod_backward_kernel(const T* x, const T* g, T* out, int64_t outer, int64_t dim, int64_t inner) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(c, outer * inner) {
    const int64_t base = (c / inner) * dim * inner + c % inner;
    C acc = C(0);
    for (int64_t r = dim - 1; r >= 0; --r) {
      const C next_x = r + 1 < dim ? static_cast<C>(x[base + (r + 1) * inner]) : C(0);
      acc = static_cast<C>(g[base + r * inner]) + next_x * acc;
      out[base + r * inner] = static_cast<T>(acc);
    }
    acc = C(1);
    for (int64_t r = 0; r < dim; ++r) {
      out[base + r * inner] = static_cast<T>(acc * static_cast<C>(out[base + r * inner]));
      acc *= static_cast<C>(x[base + r * inner]);
    }
  }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void Scan::cuda(ScanOp op, DType dtype, const void* x, void* y, int64_t* indices, int64_t outer, int64_t dim,
                int64_t inner, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (outer * dim * inner == 0) return;
  auto s = as_stream(stream);
  const unsigned blocks = grid_blocks(outer * inner, kThreads);
  if (op == ScanOp::LogSumExp) {
    COLONY_DISPATCH_FLOATING(dtype, "logcumsumexp", [&] {
      scan_log_sum_exp_kernel<scalar_t><<<blocks, kThreads, 0, s>>>(static_cast<const scalar_t*>(x),
                                                                    static_cast<scalar_t*>(y), outer, dim, inner);
    });
    after_launch("logcumsumexp");
    return;
  }
  COLONY_DISPATCH_ALL(dtype, op == ScanOp::Prod ? "cumprod" : op == ScanOp::Max ? "cummax" : "cummin", [&] {
    const auto* xp = static_cast<const scalar_t*>(x);
    if (op == ScanOp::Prod) {
      using Out = std::conditional_t<std::is_same_v<cumprod_acc_t<scalar_t>, int64_t>, int64_t, scalar_t>;
      scan_prod_kernel<scalar_t, Out><<<blocks, kThreads, 0, s>>>(xp, static_cast<Out*>(y), outer, dim, inner);
    } else {
      scan_extreme_kernel<scalar_t><<<blocks, kThreads, 0, s>>>(xp, static_cast<scalar_t*>(y), indices, outer, dim,
                                                                inner, op == ScanOp::Max);
    }
  });
  after_launch(op == ScanOp::Prod ? "cumprod" : op == ScanOp::Max ? "cummax" : "cummin");
}

void CumprodBackward::cuda(DType dtype, const void* x, const void* grad_y, void* grad_x, int64_t outer, int64_t dim,
                           int64_t inner, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (outer * dim * inner == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "cumprod_backward", [&] {
    cumprod_backward_kernel<scalar_t><<<grid_blocks(outer * inner, kThreads), kThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(x), static_cast<const scalar_t*>(grad_y), static_cast<scalar_t*>(grad_x), outer,
        dim, inner);
  });
  after_launch("cumprod_backward");
}

}  // namespace colony::kernels
