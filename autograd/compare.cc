// Comparisons and logic: bool results, never part of the graph.
#include <limits>

#include "autograd/ops.h"

namespace colony {

using raw::BinaryOp;

Tensor eq(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::Ge, a, b); }
Tensor eq(const Tensor& a, double b) { return raw::binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, double b) { return raw::binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, double b) { return raw::binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, double b) { return raw::binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, double b) { return raw::binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, double b) { return raw::binary(BinaryOp::Ge, a, b); }
Tensor logical_not(const Tensor& t) { return raw::unary(raw::UnaryOp::LogicalNot, t); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::LogicalAnd, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::LogicalOr, a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::LogicalXor, a, b); }
Tensor bitwise_not(const Tensor& t) { return raw::unary(raw::UnaryOp::BitwiseNot, t); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::BitwiseAnd, a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::BitwiseOr, a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return raw::binary(BinaryOp::BitwiseXor, a, b); }
Tensor isnan(const Tensor& t) { return raw::unary(raw::UnaryOp::IsNan, t); }
Tensor isinf(const Tensor& t) { return raw::unary(raw::UnaryOp::IsInf, t); }
Tensor isfinite(const Tensor& t) { return raw::unary(raw::UnaryOp::IsFinite, t); }

// torch's compositions: +-inf tests (false for every integer), isreal (true for every real dtype:
// Colony has no complex one).
Tensor isposinf(const Tensor& t) {
  return is_floating(t.dtype()) ? raw::binary(BinaryOp::Eq, t, std::numeric_limits<double>::infinity())
                                : raw::zeros(t.sizes(), TensorOptions(kBool).device(t.device()));
}
Tensor isneginf(const Tensor& t) {
  return is_floating(t.dtype()) ? raw::binary(BinaryOp::Eq, t, -std::numeric_limits<double>::infinity())
                                : raw::zeros(t.sizes(), TensorOptions(kBool).device(t.device()));
}
Tensor isreal(const Tensor& t) { return raw::ones(t.sizes(), TensorOptions(kBool).device(t.device())); }

}  // namespace colony
