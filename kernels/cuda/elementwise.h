// CUDA elementwise kernels: the same contract as kernels/cpu/elementwise.h (layouts with the
// output's sizes, broadcast inputs with stride 0, strided output allowed, supported dtypes), queued
// on `stream` (a cudaStream_t) of the current device. Plain C++ types only; called from code under
// #ifdef COLONY_WITH_CUDA.
#pragma once

#include "kernels/common/dtype.h"
#include "kernels/common/elementwise_functors.h"
#include "kernels/common/layout.h"

namespace colony::kernels::cuda {

void unary(UnaryOp op, DType dtype, const void* in, const StridedLayout& in_layout, void* out,
           const StridedLayout& out_layout, const UnaryAttrs& attrs, void* stream);

void binary(BinaryOp op, DType dtype, const void* a, const StridedLayout& a_layout, const void* b,
            const StridedLayout& b_layout, void* out, const StridedLayout& out_layout, double alpha, void* stream);
void binary_scalar(BinaryOp op, DType dtype, const void* a, const StridedLayout& a_layout, double s,
                   bool scalar_first, void* out, const StridedLayout& out_layout, void* stream);

void clamp(DType dtype, const void* in, const StridedLayout& in_layout, void* out, const StridedLayout& out_layout,
           bool has_min, double min, bool has_max, double max, void* stream);

void where(DType dtype, const bool* cond, const StridedLayout& cond_layout, const void* a,
           const StridedLayout& a_layout, const void* b, const StridedLayout& b_layout, void* out,
           const StridedLayout& out_layout, void* stream);

void activation_backward(ActivationGrad op, DType dtype, const void* grad, const StridedLayout& grad_layout,
                         const void* saved, const StridedLayout& saved_layout, void* out,
                         const StridedLayout& out_layout, const UnaryAttrs& attrs, void* stream);

}  // namespace colony::kernels::cuda
