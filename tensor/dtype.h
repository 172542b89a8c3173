// DType as the tensor layer uses it: names, promotion rules and conversion of one value.
#pragma once

#include <ostream>

#include "kernels/common/dtype.h"

namespace colony {

constexpr DType kFloat32 = DType::Float32;
constexpr DType kFloat = DType::Float32;
constexpr DType kFloat64 = DType::Float64;
constexpr DType kDouble = DType::Float64;
constexpr DType kFloat16 = DType::Float16;
constexpr DType kHalf = DType::Float16;
constexpr DType kBFloat16 = DType::BFloat16;
constexpr DType kInt64 = DType::Int64;
constexpr DType kLong = DType::Int64;
constexpr DType kInt32 = DType::Int32;
constexpr DType kInt = DType::Int32;
constexpr DType kUInt8 = DType::UInt8;
constexpr DType kBool = DType::Bool;

// PyTorch's promote_types: bool < integers < floats; within a category the wider type wins;
// uint8 with a signed integer gives the signed type (int64 if needed); float16 with bfloat16
// gives float32.
DType promote_types(DType a, DType b);

// The dtype new floating tensors get (float32), as torch.get_default_dtype().
constexpr DType default_float_dtype() { return DType::Float32; }

std::ostream& operator<<(std::ostream& os, DType t);

}  // namespace colony
