// Elementwise kernels: the entry points, declared once for both devices (kernel.h), defined in
// kernels/cpu/elementwise*.cc and kernels/cuda/elementwise*.cu. Every layout has the output's
// sizes: inputs come broadcast to it (stride 0 on broadcast dims), the output may be strided but
// must not overlap itself, and an input either is exactly the output (in-place ops) or does not
// overlap it. Inputs share `dtype`; the output has `dtype` too, except for the ops that output bool
// (logical_not, comparisons). Unsupported dtypes throw std::invalid_argument.
#pragma once

#include "kernels/common/dtype.h"
#include "kernels/common/elementwise_functors.h"
#include "kernels/common/kernel.h"
#include "kernels/common/layout.h"

namespace colony::kernels {

// dtypes: as COLONY_FOR_EACH_UNARY_OP lists them. `attrs`: the op's attributes (GELU's approximation).
COLONY_KERNEL(Unary, UnaryOp op, DType dtype, const void* in, const StridedLayout& in_layout, void* out,
              const StridedLayout& out_layout, const UnaryAttrs& attrs);

// out = a op b; Add computes a + alpha * b. dtypes: sub: all but bool; div: floating; others: all.
COLONY_KERNEL(Binary, BinaryOp op, DType dtype, const void* a, const StridedLayout& a_layout, const void* b,
              const StridedLayout& b_layout, void* out, const StridedLayout& out_layout, double alpha);
// out = a op s, or s op a when scalar_first; s is converted to the compute type of dtype.
COLONY_KERNEL(BinaryScalar, BinaryOp op, DType dtype, const void* a, const StridedLayout& a_layout, double s,
              bool scalar_first, void* out, const StridedLayout& out_layout);

// Bounds are converted to the compute type of dtype (all but bool).
COLONY_KERNEL(Clamp, DType dtype, const void* in, const StridedLayout& in_layout, void* out,
              const StridedLayout& out_layout, bool has_min, double min, bool has_max, double max);

// clamp's gradient from the incoming gradient and clamp's input x, both of one floating dtype:
// clamp_grad_fn (kernels/common/elementwise_functors.h), the bounds converted as Clamp's.
COLONY_KERNEL(ClampBackward, DType dtype, const void* grad, const StridedLayout& grad_layout, const void* x,
              const StridedLayout& x_layout, void* out, const StridedLayout& out_layout, bool has_min, double min,
              bool has_max, double max);

// out = cond ? a : b (any dtype).
COLONY_KERNEL(Where, DType dtype, const bool* cond, const StridedLayout& cond_layout, const void* a,
              const StridedLayout& a_layout, const void* b, const StridedLayout& b_layout, void* out,
              const StridedLayout& out_layout);

// Floating dtypes; see activation_grad_fn (kernels/common/elementwise_functors.h).
COLONY_KERNEL(ActivationBackward, ActivationGrad op, DType dtype, const void* grad, const StridedLayout& grad_layout,
              const void* saved, const StridedLayout& saved_layout, void* out, const StridedLayout& out_layout,
              const UnaryAttrs& attrs);

}  // namespace colony::kernels
