#include "kernels/common/index.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/device_error.h"
#include "kernels/common/dispatch.h"
#include "runtime/cuda/device_errors.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

// Element t of an [outer, n, inner] result: (o, j, i), where j picks index[j].
struct IndexedElement {
  int64_t o, j, i;
};
__device__ inline IndexedElement indexed_element(int64_t t, int64_t n, int64_t inner) {
  const int64_t rest = t / inner;
  return {rest / n, rest % n, t % inner};
}

template <typename W>
__global__ void index_select_kernel(const W* x, W* y, int64_t outer, int64_t x_dim, int64_t inner,
                                    const int64_t* index, int64_t n, DeviceErrorRecord* err) {
  int64_t total = outer * n * inner;
  COLONY_GRID_LOOP(t, total) {
    const auto [o, j, i] = indexed_element(t, n, inner);
    const int64_t k = index[j];
    if (index_in_range(k, x_dim)) {
      y[t] = x[(o * x_dim + k) * inner + i];
    } else {
      record_bad_index(err, CheckedOp::IndexSelect, k, x_dim);
      y[t] = W{};
    }
  }
}

template <typename T>
__global__ void index_add_kernel(T* out, const T* src, int64_t outer, int64_t out_dim, int64_t inner,
                                 const int64_t* index, int64_t n, DeviceErrorRecord* err) {
  int64_t total = outer * n * inner;
  COLONY_GRID_LOOP(t, total) {
    const auto [o, j, i] = indexed_element(t, n, inner);
    const int64_t k = index[j];
    if (index_in_range(k, out_dim)) {
      atomic_add(out + (o * out_dim + k) * inner + i, src[t]);
    } else {
      record_bad_index(err, CheckedOp::IndexAdd, k, out_dim);
    }
  }
}

// Offsets of linear position p of index's shape in each stride set, and its coordinate along dim.
__device__ __forceinline__ void position_offsets(int64_t p, const StridedLayout& shape, const int64_t* sa,
                                                 const int64_t* sb, int dim, int64_t& oa, int64_t& ob,
                                                 int64_t& coord_dim) {
  oa = 0;
  ob = 0;
  coord_dim = 0;
  for (int d = shape.ndim - 1; d >= 0; --d) {
    int64_t c = p % shape.sizes[d];
    p /= shape.sizes[d];
    if (d == dim) {
      coord_dim = c;
      ob += c * sb[d];
    } else {
      oa += c * sa[d];
      ob += c * sb[d];
    }
  }
}

// y is contiguous in index's shape: thread p reads index[p] and x at p's coordinates with dim replaced.
template <typename W>
__global__ void gather_kernel(const W* x, StridedLayout xl, int dim, const int64_t* index, StridedLayout il, W* y,
                              DeviceErrorRecord* err) {
  int64_t total = il.numel();
  COLONY_GRID_LOOP(p, total) {
    int64_t x_off, i_off, coord;
    position_offsets(p, il, xl.strides, il.strides, dim, x_off, i_off, coord);
    const int64_t k = index[i_off];
    if (index_in_range(k, xl.sizes[dim])) {
      y[p] = x[x_off + k * xl.strides[dim]];
    } else {
      record_bad_index(err, CheckedOp::Gather, k, xl.sizes[dim]);
      y[p] = W{};
    }
  }
}

template <typename T>
__global__ void scatter_add_kernel(T* out, StridedLayout ol, int dim, const int64_t* index, StridedLayout il,
                                   const T* src, StridedLayout sl, DeviceErrorRecord* err) {
  int64_t total = il.numel();
  COLONY_GRID_LOOP(p, total) {
    int64_t out_off, i_off, coord, s_off, unused;
    position_offsets(p, il, ol.strides, il.strides, dim, out_off, i_off, coord);
    const int64_t k = index[i_off];
    if (!index_in_range(k, ol.sizes[dim])) {
      record_bad_index(err, CheckedOp::ScatterAdd, k, ol.sizes[dim]);
      continue;
    }
    position_offsets(p, il, sl.strides, sl.strides, dim, unused, s_off, coord);
    atomic_add(out + out_off + k * ol.strides[dim], src[s_off]);
  }
}

template <typename T>
__global__ void scatter_reduce_kernel(ScatterOp op, T* out, StridedLayout ol, int dim, const int64_t* index,
                                      StridedLayout il, const T* src, StridedLayout sl, DeviceErrorRecord* err) {
  using C = compute_t<T>;
  int64_t total = il.numel();
  COLONY_GRID_LOOP(p, total) {
    int64_t out_off, i_off, coord, s_off, unused;
    position_offsets(p, il, ol.strides, il.strides, dim, out_off, i_off, coord);
    const int64_t k = index[i_off];
    if (!index_in_range(k, ol.sizes[dim])) {
      record_bad_index(err, CheckedOp::Scatter, k, ol.sizes[dim]);
      continue;
    }
    position_offsets(p, il, sl.strides, sl.strides, dim, unused, s_off, coord);
    T* dst = out + out_off + k * ol.strides[dim];
    if (op == ScatterOp::Assign) {
      *dst = src[s_off];
    } else if (op == ScatterOp::Sum) {
      atomic_add(dst, src[s_off]);
    } else {
      atomic_combine(dst, src[s_off], [op](C a, C b) { return scatter_combine(op, a, b); });
    }
  }
}

__global__ void one_hot_kernel(const int64_t* labels, int64_t n, int64_t num_classes, int64_t* y) {
  COLONY_GRID_LOOP(i, n) { y[i * num_classes + labels[i]] = 1; }
}

template <typename F>
void by_word_size(int64_t elem_size, const char* op, F&& f) {
  switch (elem_size) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: throw std::invalid_argument(std::string(op) + ": unsupported element size " + std::to_string(elem_size));
  }
}

}  // namespace

}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void IndexSelect::cuda(int64_t elem_size, const void* x, void* y, int64_t outer, int64_t x_dim, int64_t inner,
                       const int64_t* index, int64_t n, void* stream) {
  int64_t total = outer * n * inner;
  if (total == 0) return;
  by_word_size(elem_size, "index_select", [&](auto word) {
    using W = decltype(word);
    index_select_kernel<W><<<grid_blocks(total), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<const W*>(x), static_cast<W*>(y), outer, x_dim, inner, index, n, device_error_record());
  });
  after_launch("index_select");
}

void IndexAdd::cuda(DType dtype, void* out, const void* src, int64_t outer, int64_t out_dim, int64_t inner,
                    const int64_t* index, int64_t n, void* stream) {
  int64_t total = outer * n * inner;
  if (total == 0) return;
  COLONY_DISPATCH_ALL(dtype, "index_add", [&] {
    index_add_kernel<scalar_t><<<grid_blocks(total), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<scalar_t*>(out), static_cast<const scalar_t*>(src), outer, out_dim, inner, index, n, device_error_record());
  });
  after_launch("index_add");
}

void Gather::cuda(int64_t elem_size, const void* x, const StridedLayout& x_layout, int dim, const int64_t* index,
                  const StridedLayout& index_layout, void* y, void* stream) {
  int64_t total = index_layout.numel();
  if (total == 0) return;
  by_word_size(elem_size, "gather", [&](auto word) {
    using W = decltype(word);
    gather_kernel<W><<<grid_blocks(total), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<const W*>(x), x_layout, dim, index, index_layout, static_cast<W*>(y), device_error_record());
  });
  after_launch("gather");
}

void ScatterAdd::cuda(DType dtype, void* out, const StridedLayout& out_layout, int dim, const int64_t* index,
                      const StridedLayout& index_layout, const void* src, const StridedLayout& src_layout,
                      void* stream) {
  int64_t total = index_layout.numel();
  if (total == 0) return;
  COLONY_DISPATCH_ALL(dtype, "scatter_add", [&] {
    scatter_add_kernel<scalar_t><<<grid_blocks(total), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<scalar_t*>(out), out_layout, dim, index, index_layout, static_cast<const scalar_t*>(src),
        src_layout, device_error_record());
  });
  after_launch("scatter_add");
}

void ScatterReduce::cuda(ScatterOp op, DType dtype, void* out, const StridedLayout& out_layout, int dim,
                         const int64_t* index, const StridedLayout& index_layout, const void* src,
                         const StridedLayout& src_layout, void* stream) {
  int64_t total = index_layout.numel();
  if (total == 0) return;
  COLONY_DISPATCH_ALL(dtype, "scatter", [&] {
    scatter_reduce_kernel<scalar_t><<<grid_blocks(total), kBlockThreads, 0, as_stream(stream)>>>(
        op, static_cast<scalar_t*>(out), out_layout, dim, index, index_layout, static_cast<const scalar_t*>(src),
        src_layout, device_error_record());
  });
  after_launch("scatter");
}

void OneHot::cuda(const int64_t* labels, int64_t n, int64_t num_classes, int64_t* y, void* stream) {
  if (n == 0) return;
  one_hot_kernel<<<grid_blocks(n), kBlockThreads, 0, as_stream(stream)>>>(labels, n, num_classes, y);
  after_launch("one_hot");
}

}  // namespace colony::kernels
