// CUDA indexed reads and writes: the contracts of kernels/cpu/index.h, queued on `stream`.
// Indices are int64. index_select, index_add, gather and scatter_add check every index on the
// device: an index outside the dimension is skipped (reads give 0) and recorded for
// check_device_errors() (kernels/cuda/device_errors.h), which the runtime's synchronizations call.
// The accumulating ops use atomics, so the order in which duplicates are added (and hence float
// rounding) may vary between runs. one_hot expects labels its caller has checked.
#pragma once

#include <cstdint>

#include "kernels/common/dtype.h"
#include "kernels/common/layout.h"

namespace colony::kernels::cuda {

void index_select(int64_t elem_size, const void* x, void* y, int64_t outer, int64_t x_dim, int64_t inner,
                  const int64_t* index, int64_t n, void* stream);

void index_add(DType dtype, void* out, const void* src, int64_t outer, int64_t out_dim, int64_t inner,
               const int64_t* index, int64_t n, void* stream);

void gather(int64_t elem_size, const void* x, const StridedLayout& x_layout, int dim, const int64_t* index,
            const StridedLayout& index_layout, void* y, void* stream);

void scatter_add(DType dtype, void* out, const StridedLayout& out_layout, int dim, const int64_t* index,
                 const StridedLayout& index_layout, const void* src, const StridedLayout& src_layout, void* stream);

void one_hot(const int64_t* labels, int64_t n, int64_t num_classes, int64_t* y, void* stream);

}  // namespace colony::kernels::cuda
