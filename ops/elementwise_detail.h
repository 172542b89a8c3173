// Entry points of ops/elementwise_ops.cc that the Tensor members use but raw_ops.h does not list.
#pragma once

#include "tensor/tensor.h"

namespace colony::raw::detail {

// a += alpha * b in one pass (Tensor::add_(other, alpha)), with add_'s checks and casting rules.
void add_(Tensor& a, const Tensor& b, double alpha);

// PyTorch's name of a dtype in its casting errors: Float, Double, Half, BFloat16, Long, Int, Byte, Bool.
const char* torch_type_name(DType t);

// Throws PyTorch's "<op>: result type Float can't be cast to the desired output type Long" when an
// in-place op's result dtype cannot be written into its output's (floating into integral or bool,
// anything but bool into bool), as torch's canCast.
void check_castable(const char* op, DType result, DType out);

}  // namespace colony::raw::detail
