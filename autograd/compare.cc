// Comparisons and logic: bool results, never part of the graph.
#include "autograd/ops.h"

namespace colony {

using ops::BinaryOp;

Tensor eq(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Ge, a, b); }
Tensor eq(const Tensor& a, double b) { return ops::binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, double b) { return ops::binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, double b) { return ops::binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, double b) { return ops::binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, double b) { return ops::binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, double b) { return ops::binary(BinaryOp::Ge, a, b); }
Tensor logical_not(const Tensor& t) { return ops::unary(ops::UnaryOp::LogicalNot, t); }

}  // namespace colony
