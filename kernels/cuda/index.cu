#include "kernels/cuda/index.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/cuda/row_reduce.cuh"

namespace colony::kernels::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, 1 << 16)));
}

#define COLONY_GRID_LOOP(i, n)                                                                     \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);           \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// a += v for the types without a native atomicAdd (16- and 8-bit ones): compare-and-swap on the
// aligned 32-bit word that holds the element.
template <typename T>
__device__ void atomic_add_narrow(T* address, T v) {
  using C = compute_t<T>;
  static_assert(sizeof(T) == 1 || sizeof(T) == 2, "narrow types only");
  auto addr = reinterpret_cast<uintptr_t>(address);
  auto* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
  unsigned shift = static_cast<unsigned>(addr & 3) * 8;
  unsigned mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    T cur;
    auto cur_bits = static_cast<std::conditional_t<sizeof(T) == 1, uint8_t, uint16_t>>((assumed & mask) >> shift);
    memcpy(&cur, &cur_bits, sizeof(T));
    T sum = static_cast<T>(static_cast<C>(cur) + static_cast<C>(v));
    std::conditional_t<sizeof(T) == 1, uint8_t, uint16_t> sum_bits;
    memcpy(&sum_bits, &sum, sizeof(T));
    unsigned replaced = (assumed & ~mask) | (static_cast<unsigned>(sum_bits) << shift);
    old = atomicCAS(word, assumed, replaced);
  } while (old != assumed);
}

template <typename T>
__device__ __forceinline__ void atomic_add(T* address, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t>) {
    atomicAdd(address, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // Two's complement: adding as unsigned wraps exactly like signed addition.
    atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(v));
  } else {
    atomic_add_narrow(address, v);
  }
}

template <typename W>
__global__ void index_select_kernel(const W* x, W* y, int64_t outer, int64_t x_dim, int64_t inner,
                                    const int64_t* index, int64_t n) {
  int64_t total = outer * n * inner;
  COLONY_GRID_LOOP(t, total) {
    int64_t i = t % inner, rest = t / inner;
    int64_t j = rest % n, o = rest / n;
    y[t] = x[(o * x_dim + index[j]) * inner + i];
  }
}

template <typename T>
__global__ void index_add_kernel(T* out, const T* src, int64_t outer, int64_t out_dim, int64_t inner,
                                 const int64_t* index, int64_t n) {
  int64_t total = outer * n * inner;
  COLONY_GRID_LOOP(t, total) {
    int64_t i = t % inner, rest = t / inner;
    int64_t j = rest % n, o = rest / n;
    atomic_add(out + (o * out_dim + index[j]) * inner + i, src[t]);
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
__global__ void gather_kernel(const W* x, StridedLayout xl, int dim, const int64_t* index, StridedLayout il, W* y) {
  int64_t total = il.numel();
  COLONY_GRID_LOOP(p, total) {
    int64_t x_off, i_off, coord;
    position_offsets(p, il, xl.strides, il.strides, dim, x_off, i_off, coord);
    y[p] = x[x_off + index[i_off] * xl.strides[dim]];
  }
}

template <typename T>
__global__ void scatter_add_kernel(T* out, StridedLayout ol, int dim, const int64_t* index, StridedLayout il,
                                   const T* src, StridedLayout sl) {
  int64_t total = il.numel();
  COLONY_GRID_LOOP(p, total) {
    int64_t out_off, i_off, coord, s_off, unused;
    position_offsets(p, il, ol.strides, il.strides, dim, out_off, i_off, coord);
    position_offsets(p, il, sl.strides, sl.strides, dim, unused, s_off, coord);
    atomic_add(out + out_off + index[i_off] * ol.strides[dim], src[s_off]);
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

void index_select(int64_t elem_size, const void* x, void* y, int64_t outer, int64_t x_dim, int64_t inner,
                  const int64_t* index, int64_t n, void* stream) {
  int64_t total = outer * n * inner;
  if (total == 0) return;
  by_word_size(elem_size, "index_select", [&](auto word) {
    using W = decltype(word);
    index_select_kernel<W><<<blocks_for(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const W*>(x), static_cast<W*>(y), outer, x_dim, inner, index, n);
  });
  check_launch("index_select");
}

void index_add(DType dtype, void* out, const void* src, int64_t outer, int64_t out_dim, int64_t inner,
               const int64_t* index, int64_t n, void* stream) {
  int64_t total = outer * n * inner;
  if (total == 0) return;
  COLONY_DISPATCH_ALL(dtype, "index_add", [&] {
    index_add_kernel<scalar_t><<<blocks_for(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<scalar_t*>(out), static_cast<const scalar_t*>(src), outer, out_dim, inner, index, n);
  });
  check_launch("index_add");
}

void gather(int64_t elem_size, const void* x, const StridedLayout& x_layout, int dim, const int64_t* index,
            const StridedLayout& index_layout, void* y, void* stream) {
  int64_t total = index_layout.numel();
  if (total == 0) return;
  by_word_size(elem_size, "gather", [&](auto word) {
    using W = decltype(word);
    gather_kernel<W><<<blocks_for(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const W*>(x), x_layout, dim, index, index_layout, static_cast<W*>(y));
  });
  check_launch("gather");
}

void scatter_add(DType dtype, void* out, const StridedLayout& out_layout, int dim, const int64_t* index,
                 const StridedLayout& index_layout, const void* src, const StridedLayout& src_layout, void* stream) {
  int64_t total = index_layout.numel();
  if (total == 0) return;
  COLONY_DISPATCH_ALL(dtype, "scatter_add", [&] {
    scatter_add_kernel<scalar_t><<<blocks_for(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<scalar_t*>(out), out_layout, dim, index, index_layout, static_cast<const scalar_t*>(src),
        src_layout);
  });
  check_launch("scatter_add");
}

void one_hot(const int64_t* labels, int64_t n, int64_t num_classes, int64_t* y, void* stream) {
  if (n == 0) return;
  one_hot_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(labels, n, num_classes, y);
  check_launch("one_hot");
}

}  // namespace colony::kernels::cuda
