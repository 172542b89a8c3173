// Indexed reads and writes: the entry points, declared once for both devices (kernel.h), defined
// in kernels/cpu/index.cc and kernels/cuda/index.cu. Indices are int64. index_select's and
// index_add's are bounds-checked by the front functions (ops/index_ops.cc); on the CPU, gather,
// scatter_add and scatter check theirs as they read them and throw std::out_of_range naming the op,
// the index, the dimension and its size, as the front functions do.
//
// CUDA: index_select, index_add, gather and scatter_add check every index on the device again: an
// index outside the dimension is skipped (reads give 0) and recorded for check_device_errors()
// (runtime/cuda/device_errors.h), which the runtime's synchronizations call. The accumulating ops
// use atomics, so the order in which duplicates are added (and hence float rounding) may vary
// between runs. one_hot expects labels its caller has checked.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/kernel.h"
#include "kernels/common/layout.h"
#include "kernels/common/macros.h"

namespace colony::kernels {

// y[o, j, :] = x[o, index[j], :] for contiguous x [outer, x_dim, inner] and y [outer, n, inner].
COLONY_KERNEL(IndexSelect, int64_t elem_size, const void* x, void* y, int64_t outer, int64_t x_dim, int64_t inner,
              const int64_t* index, int64_t n);

// out[o, index[j], :] += src[o, j, :] for contiguous out [outer, out_dim, inner], src [outer, n, inner].
COLONY_KERNEL(IndexAdd, DType dtype, void* out, const void* src, int64_t outer, int64_t out_dim, int64_t inner,
              const int64_t* index, int64_t n);

// y[p] = x[p with coordinate `dim` replaced by index[p]] for every position p of index's shape
// (index_layout.sizes); y is contiguous in that shape, x and index may have any strides.
COLONY_KERNEL(Gather, int64_t elem_size, const void* x, const StridedLayout& x_layout, int dim, const int64_t* index,
              const StridedLayout& index_layout, void* y);

// out[p with coordinate `dim` replaced by index[p]] += src[p] for every position p of index's shape;
// out is contiguous (out_layout gives its sizes and strides), src and index may have any strides.
// On the CPU, positions that differ only along `dim` are handled by one thread, so no two threads
// add into the same element.
COLONY_KERNEL(ScatterAdd, DType dtype, void* out, const StridedLayout& out_layout, int dim, const int64_t* index,
              const StridedLayout& index_layout, const void* src, const StridedLayout& src_layout);

// How ScatterReduce combines an element of out with one of src: src itself (scatter; of several
// writes to one position, one wins, as torch's), the sum, the product, or the larger or smaller
// (a NaN on either side wins, as torch's amax/amin).
enum class ScatterOp { Assign, Sum, Prod, Max, Min };

template <typename C>
COLONY_INLINE C scatter_combine(ScatterOp op, C a, C b) {
  switch (op) {
    case ScatterOp::Assign: return b;
    case ScatterOp::Sum: return static_cast<C>(a + b);
    case ScatterOp::Prod: return static_cast<C>(a * b);
    case ScatterOp::Max: return a != a ? a : (b != b || b > a) ? b : a;
    case ScatterOp::Min: return a != a ? a : (b != b || b < a) ? b : a;
  }
  return b;
}

// out[p with coordinate `dim` replaced by index[p]] = scatter_combine(op, that element, src[p]) for
// every position p of index's shape, with ScatterAdd's layouts and threading (the CPU gives each
// run along `dim` to one thread, so its writes land in index order; CUDA combines with atomics).
COLONY_KERNEL(ScatterReduce, ScatterOp op, DType dtype, void* out, const StridedLayout& out_layout, int dim,
              const int64_t* index, const StridedLayout& index_layout, const void* src,
              const StridedLayout& src_layout);

// y[i, labels[i]] = 1 over a zero-filled int64 [n, num_classes].
COLONY_KERNEL(OneHot, const int64_t* labels, int64_t n, int64_t num_classes, int64_t* y);

}  // namespace colony::kernels
