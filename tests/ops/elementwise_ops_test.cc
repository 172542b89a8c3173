// Elementwise front functions (ops/elementwise_ops.cc): values against independently computed
// ones, broadcasting, strided inputs, dtype promotion, in-place rules and error messages. The
// *_CUDA tests compare each CUDA op with the CPU op (skipped without a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using raw::BinaryOp;
using raw::UnaryOp;
using testing::all_close;
using testing::throws_with;
using testing::values;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor f32(std::initializer_list<double> v) { return raw::tensor(v, kFloat32); }
Tensor iota(const Shape& shape, DType dtype = kFloat32) {
  return raw::reshape(raw::arange(0, static_cast<double>(shape_numel(shape)), 1, TensorOptions(dtype)), shape);
}
std::vector<double> V(std::initializer_list<double> v) { return v; }

// ---------- unary ----------

struct UnaryCase {
  UnaryOp op;
  std::function<double(double)> ref;
};

TEST(Unary, FloatOpsMatchLibm) {
  const std::vector<double> xs = {0.1, 0.5, 1.0, 2.5, 3.75};
  const std::vector<double> signed_xs = {-2.5, -0.5, 0.0, 0.75, 3.0};
  std::vector<UnaryCase> positive = {
      {UnaryOp::Log, [](double x) { return std::log(x); }},
      {UnaryOp::Sqrt, [](double x) { return std::sqrt(x); }},
      {UnaryOp::Rsqrt, [](double x) { return 1.0 / std::sqrt(x); }},
      {UnaryOp::Reciprocal, [](double x) { return 1.0 / x; }},
      {UnaryOp::Log1p, [](double x) { return std::log1p(x); }},
  };
  std::vector<UnaryCase> any = {
      {UnaryOp::Neg, [](double x) { return -x; }},
      {UnaryOp::Abs, [](double x) { return std::fabs(x); }},
      {UnaryOp::Exp, [](double x) { return std::exp(x); }},
      {UnaryOp::Relu, [](double x) { return x > 0 ? x : 0.0; }},
      {UnaryOp::Sigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {UnaryOp::Tanh, [](double x) { return std::tanh(x); }},
      {UnaryOp::Sign, [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }},
      {UnaryOp::Square, [](double x) { return x * x; }},
      {UnaryOp::Sin, [](double x) { return std::sin(x); }},
      {UnaryOp::Cos, [](double x) { return std::cos(x); }},
      {UnaryOp::Expm1, [](double x) { return std::expm1(x); }},
      {UnaryOp::Floor, [](double x) { return std::floor(x); }},
      {UnaryOp::Ceil, [](double x) { return std::ceil(x); }},
  };
  auto check = [](const std::vector<UnaryCase>& cases, const std::vector<double>& xs) {
    for (DType dt : {kFloat32, kFloat64}) {
      Tensor x = raw::to(raw::from_vector(xs), kCPU, dt);
      for (const auto& c : cases) {
        Tensor y = raw::unary(c.op, x);
        EXPECT_EQ(y.dtype(), dt);
        std::vector<double> want;
        for (double v : xs) want.push_back(c.ref(v));
        EXPECT_TRUE(all_close(y, raw::from_vector(want), 1e-6, 1e-7)) << "op " << static_cast<int>(c.op);
      }
    }
  };
  check(positive, xs);
  check(any, signed_xs);
}

TEST(Unary, RoundHalfToEvenAndLogicalNot) {
  EXPECT_EQ(values(raw::unary(UnaryOp::Round, f32({0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6}))),
            V({0, 2, 2, -0.0, -2, 2, 3}));
  Tensor n = raw::unary(UnaryOp::LogicalNot, raw::tensor({0, 2, -1}, kInt32));
  EXPECT_EQ(n.dtype(), kBool);
  EXPECT_EQ(values(n), V({1, 0, 0}));
}

TEST(Unary, IsNanIsInfIsFiniteInEveryDtype) {
  // torch: [1, nan, inf, -inf, 0] -> isnan [F, T, F, F, F], isinf [F, F, T, T, F], isfinite [T, F, F, F, T].
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    Tensor x = raw::to(raw::tensor({1.0, nan, inf, -inf, 0.0}, kFloat64), kCPU, dt);
    EXPECT_EQ(values(raw::unary(UnaryOp::IsNan, x)), V({0, 1, 0, 0, 0})) << dtype_name(dt);
    EXPECT_EQ(values(raw::unary(UnaryOp::IsInf, x)), V({0, 0, 1, 1, 0})) << dtype_name(dt);
    EXPECT_EQ(values(raw::unary(UnaryOp::IsFinite, x)), V({1, 0, 0, 0, 1})) << dtype_name(dt);
    EXPECT_EQ(raw::unary(UnaryOp::IsFinite, x).dtype(), kBool);
  }
  // The largest finite float is finite (x - x is 0 there, not an overflow).
  EXPECT_EQ(values(raw::unary(UnaryOp::IsFinite, f32({3.4028234663852886e38, -3.4028234663852886e38}))), V({1, 1}));
  // Integers and bool: numbers, finite.
  for (DType dt : {kInt32, kInt64, kUInt8, kBool}) {
    Tensor i = raw::to(raw::tensor({0, 1, 1}, kInt64), kCPU, dt);
    EXPECT_EQ(values(raw::unary(UnaryOp::IsNan, i)), V({0, 0, 0})) << dtype_name(dt);
    EXPECT_EQ(values(raw::unary(UnaryOp::IsInf, i)), V({0, 0, 0})) << dtype_name(dt);
    EXPECT_EQ(values(raw::unary(UnaryOp::IsFinite, i)), V({1, 1, 1})) << dtype_name(dt);
  }
}

TEST(Unary, SigmoidIsStableForLargeInputs) {
  Tensor y = raw::sigmoid(f32({-200, -90, 90, 200}));
  std::vector<double> v = values(y);
  EXPECT_EQ(v[0], 0.0);
  EXPECT_GT(v[1], 0.0);  // e^-90 = 8.2e-40 is a float subnormal
  EXPECT_EQ(v[2], 1.0);
  EXPECT_EQ(v[3], 1.0);
}

TEST(Unary, DtypeRules) {
  Tensor i = raw::tensor({1, 4, 9}, kInt32);
  Tensor s = raw::sqrt(i);  // integers compute in float32, like torch.sqrt(int_tensor)
  EXPECT_EQ(s.dtype(), kFloat32);
  EXPECT_EQ(values(s), V({1, 2, 3}));
  EXPECT_EQ(raw::exp(raw::tensor({0}, kBool)).dtype(), kFloat32);
  Tensor f = raw::unary(UnaryOp::Floor, i);
  EXPECT_EQ(f.dtype(), kInt32);
  EXPECT_EQ(values(f), V({1, 4, 9}));
  EXPECT_FALSE(f.storage() == i.storage());  // a copy, as torch.floor returns
  Tensor neg = raw::neg(raw::tensor({3, 0, 255}, kUInt8));
  EXPECT_EQ(values(neg), V({253, 0, 1}));  // uint8 wraps
  Tensor abs = raw::abs(raw::tensor({-3, 2}, kInt64));
  EXPECT_EQ(abs.dtype(), kInt64);
  EXPECT_EQ(values(abs), V({3, 2}));
  Tensor sq = raw::unary(UnaryOp::Square, raw::tensor({1, 0}, kBool));
  EXPECT_EQ(sq.dtype(), kInt64);
  EXPECT_EQ(values(sq), V({1, 0}));
  Tensor sign = raw::unary(UnaryOp::Sign, raw::tensor({1, 0}, kBool));
  EXPECT_EQ(sign.dtype(), kBool);
  Tensor h = raw::sigmoid(raw::to(f32({0, 2}), kCPU, kFloat16));
  EXPECT_EQ(h.dtype(), kFloat16);
  EXPECT_TRUE(all_close(h, f32({0.5, 0.8807970779778823}), 1e-3, 0));
  Tensor b = raw::tanh(raw::to(f32({0.5}), kCPU, kBFloat16));
  EXPECT_EQ(b.dtype(), kBFloat16);
  EXPECT_TRUE(all_close(b, f32({0.46211715726000974}), 1e-2, 0));
}

TEST(Unary, Errors) {
  Tensor b = raw::tensor({1, 0}, kBool);
  EXPECT_TRUE(throws_with([&] { raw::neg(b); }, "neg: negation, the `-` operator, on a bool tensor is not supported"));
  EXPECT_TRUE(throws_with([&] { raw::relu(b); }, "relu: bool tensors are not supported"));
}

TEST(Unary, StridedAndEmptyInputs) {
  Tensor a = iota({3, 4});
  Tensor t = raw::transpose(a, 0, 1);  // [4, 3]
  Tensor y = raw::neg(t);
  EXPECT_TRUE(y.is_contiguous());
  EXPECT_EQ(y.sizes(), (Shape{4, 3}));
  EXPECT_EQ(values(y), V({-0.0, -4, -8, -1, -5, -9, -2, -6, -10, -3, -7, -11}));
  Tensor n = raw::narrow(a, 1, 1, 2);  // columns 1..2
  EXPECT_EQ(values(raw::unary(UnaryOp::Square, n)), V({1, 4, 25, 36, 81, 100}));
  Tensor e = raw::expand(f32({2}), {2, 3});
  EXPECT_EQ(values(raw::unary(UnaryOp::Reciprocal, e)), V({0.5, 0.5, 0.5, 0.5, 0.5, 0.5}));
  Tensor empty = raw::exp(raw::empty({0, 3}));
  EXPECT_EQ(empty.sizes(), (Shape{0, 3}));
  Tensor scalar = raw::exp(raw::scalar_tensor(0.0));
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.item<double>(), 1.0);
}

// ---------- binary ----------

TEST(Binary, ArithmeticValues) {
  Tensor a = f32({1, -2, 3, 8}), b = f32({4, 5, -6, 2});
  EXPECT_EQ(values(raw::add(a, b)), V({5, 3, -3, 10}));
  EXPECT_EQ(values(raw::sub(a, b)), V({-3, -7, 9, 6}));
  EXPECT_EQ(values(raw::mul(a, b)), V({4, -10, -18, 16}));
  EXPECT_EQ(values(raw::div(a, b)), V({0.25, -0.4f, -0.5, 4}));
  EXPECT_TRUE(all_close(raw::pow(a, f32({2, 3, 0.5, -1})), f32({1, -8, std::sqrt(3.0), 0.125})));
  EXPECT_EQ(values(raw::maximum(a, b)), V({4, 5, 3, 8}));
  EXPECT_EQ(values(raw::minimum(a, b)), V({1, -2, -6, 2}));
  EXPECT_EQ(values(raw::add(a, b, 0.5)), V({3, 0.5, 0, 9}));  // a + 0.5 * b
}

TEST(Binary, ComparisonsGiveBool) {
  Tensor a = f32({1, 2, 3, kNaN}), b = f32({2, 2, 2, kNaN});
  struct Case {
    BinaryOp op;
    std::vector<double> want;
  };
  for (const Case& c : {Case{BinaryOp::Eq, {0, 1, 0, 0}}, Case{BinaryOp::Ne, {1, 0, 1, 1}},
                        Case{BinaryOp::Lt, {1, 0, 0, 0}}, Case{BinaryOp::Le, {1, 1, 0, 0}},
                        Case{BinaryOp::Gt, {0, 0, 1, 0}}, Case{BinaryOp::Ge, {0, 1, 1, 0}}}) {
    Tensor r = raw::binary(c.op, a, b);
    EXPECT_EQ(r.dtype(), kBool);
    EXPECT_EQ(values(r), c.want) << static_cast<int>(c.op);
  }
  // int vs float compares in float: 2 < 2.5
  Tensor r = raw::binary(BinaryOp::Lt, raw::tensor({2, 3}, kInt64), 2.5);
  EXPECT_EQ(r.dtype(), kBool);
  EXPECT_EQ(values(r), V({1, 0}));
}

TEST(Binary, LogicalOpsTakeAnyDtypeAndGiveBool) {
  // torch.logical_and/or/xor([1, 0, nan, -2], [0, 0, 1, 3]): nonzero (NaN too) is true.
  Tensor a = f32({1, 0, kNaN, -2}), b = raw::tensor({0, 0, 1, 3}, kInt64);
  struct Case {
    BinaryOp op;
    std::vector<double> want;
  };
  for (const Case& c : {Case{BinaryOp::LogicalAnd, {0, 0, 1, 1}}, Case{BinaryOp::LogicalOr, {1, 0, 1, 1}},
                        Case{BinaryOp::LogicalXor, {1, 0, 0, 0}}}) {
    Tensor r = raw::binary(c.op, a, b);
    EXPECT_EQ(r.dtype(), kBool);
    EXPECT_EQ(values(r), c.want) << op_name(c.op);
  }
}

TEST(Binary, BitwiseOpsOnIntegersAndMasks) {
  // torch.bitwise_and/or/xor(tensor([-3, 12, 5]), tensor([5, 10, -1])) (int32): [5, 8, 5],
  // [-3, 14, -1], [-8, 6, -6]; bitwise_not: [2, -13, -6]; uint8 ~5 = 250.
  Tensor a = raw::tensor({-3, 12, 5}, kInt32), b = raw::tensor({5, 10, -1}, kInt32);
  EXPECT_EQ(values(raw::binary(BinaryOp::BitwiseAnd, a, b)), V({5, 8, 5}));
  EXPECT_EQ(values(raw::binary(BinaryOp::BitwiseOr, a, b)), V({-3, 14, -1}));
  EXPECT_EQ(values(raw::binary(BinaryOp::BitwiseXor, a, b)), V({-8, 6, -6}));
  EXPECT_EQ(raw::binary(BinaryOp::BitwiseAnd, a, b).dtype(), kInt32);
  EXPECT_EQ(values(raw::unary(UnaryOp::BitwiseNot, a)), V({2, -13, -6}));
  EXPECT_EQ(values(raw::unary(UnaryOp::BitwiseNot, raw::tensor({5, 0}, kUInt8))), V({250, 255}));
  // On bool masks they are the logical ops and stay bool; bool with int64 promotes to int64.
  Tensor m = raw::to(raw::tensor({1, 1, 0, 0}, kInt64), kCPU, kBool), n = raw::to(raw::tensor({1, 0, 1, 0}, kInt64), kCPU, kBool);
  EXPECT_EQ(values(raw::binary(BinaryOp::BitwiseAnd, m, n)), V({1, 0, 0, 0}));
  EXPECT_EQ(values(raw::binary(BinaryOp::BitwiseOr, m, n)), V({1, 1, 1, 0}));
  EXPECT_EQ(values(raw::binary(BinaryOp::BitwiseXor, m, n)), V({0, 1, 1, 0}));
  EXPECT_EQ(raw::binary(BinaryOp::BitwiseOr, m, n).dtype(), kBool);
  EXPECT_EQ(values(raw::unary(UnaryOp::BitwiseNot, m)), V({0, 0, 1, 1}));
  EXPECT_EQ(raw::unary(UnaryOp::BitwiseNot, m).dtype(), kBool);
  EXPECT_EQ(raw::binary(BinaryOp::BitwiseAnd, m, raw::tensor({3, 3, 3, 3}, kInt64)).dtype(), kInt64);
  // A mask combined in place, as `mask |= other`.
  Tensor acc = raw::clone(m);
  raw::binary_(BinaryOp::BitwiseOr, acc, n);
  EXPECT_EQ(values(acc), V({1, 1, 1, 0}));
  EXPECT_TRUE(throws_with([&] { raw::binary(BinaryOp::BitwiseAnd, f32({1}), f32({1})); },
                          "bitwise_and: expected integral or bool tensors, got float32"));
  EXPECT_TRUE(throws_with([&] { raw::unary(UnaryOp::BitwiseNot, f32({1})); },
                          "bitwise_not: expected an integral or bool tensor, got float32"));
}

TEST(Binary, MaximumMinimumPropagateNaN) {
  Tensor a = f32({kNaN, 1}), b = f32({1, kNaN});
  for (BinaryOp op : {BinaryOp::Maximum, BinaryOp::Minimum}) {
    std::vector<double> v = values(raw::binary(op, a, b));
    EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
  }
}

TEST(Binary, Broadcasting) {
  Tensor col = raw::reshape(f32({1, 2, 3}), {3, 1});
  Tensor row = raw::reshape(f32({10, 20, 30, 40}), {1, 4});
  Tensor s = raw::add(col, row);
  EXPECT_EQ(s.sizes(), (Shape{3, 4}));
  EXPECT_EQ(values(s), V({11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}));
  Tensor m = raw::mul(iota({2, 3}), f32({1, 10, 100}));
  EXPECT_EQ(m.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(m), V({0, 10, 200, 3, 40, 500}));
  Tensor z = raw::sub(raw::scalar_tensor(1.0), iota({2, 2}));
  EXPECT_EQ(values(z), V({1, 0, -1, -2}));
  Tensor e = raw::add(raw::empty({0, 3}), f32({1, 2, 3}));
  EXPECT_EQ(e.sizes(), (Shape{0, 3}));
  EXPECT_TRUE(throws_with([&] { raw::add(iota({2, 3}), f32({1, 2, 3, 4})); },
                          "add: shapes [2, 3] and [4] cannot be broadcast"));
}

TEST(Binary, NonContiguousInputs) {
  Tensor a = iota({3, 4});
  Tensor t = raw::transpose(a, 0, 1);            // [4, 3]: t[i][j] = 4 j + i
  Tensor n = raw::narrow(iota({4, 5}), 1, 2, 3);  // [4, 3]: n[i][j] = 5 i + j + 2
  Tensor r = raw::sub(t, n);
  std::vector<double> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) want.push_back((4 * j + i) - (5 * i + j + 2));
  EXPECT_EQ(values(r), want);
  Tensor ex = raw::expand(raw::reshape(f32({1, 2, 3, 4}), {4, 1}), {4, 3});
  EXPECT_EQ(values(raw::mul(t, ex)), V({0, 4, 8, 2, 10, 18, 6, 18, 30, 12, 28, 44}));
  Tensor step = raw::slice(iota({10}), 0, 1, 10, 3);  // 1, 4, 7
  EXPECT_EQ(values(raw::add(step, step)), V({2, 8, 14}));
}

TEST(Binary, DtypePromotion) {
  struct Case {
    DType a, b, want;
  };
  for (const Case& c : {Case{kInt32, kFloat32, kFloat32}, Case{kUInt8, kInt32, kInt32}, Case{kBool, kInt64, kInt64},
                        Case{kUInt8, kBool, kUInt8}, Case{kFloat16, kBFloat16, kFloat32},
                        Case{kInt64, kFloat16, kFloat16}, Case{kFloat32, kFloat64, kFloat64},
                        Case{kBFloat16, kFloat32, kFloat32}, Case{kBool, kBool, kBool}}) {
    Tensor a = raw::ones({2}, c.a), b = raw::ones({2}, c.b);
    Tensor r = raw::add(a, b);
    EXPECT_EQ(r.dtype(), c.want) << dtype_name(c.a) << " + " << dtype_name(c.b);
    EXPECT_EQ(values(r), c.want == kBool ? V({1, 1}) : V({2, 2}));
  }
  // A zero-dim tensor only decides the dtype when it is of a higher category.
  EXPECT_EQ(raw::mul(raw::ones({2}, kFloat32), raw::scalar_tensor(2, kFloat64)).dtype(), kFloat32);
  EXPECT_EQ(raw::mul(raw::ones({2}, kInt32), raw::scalar_tensor(2, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ(raw::mul(raw::ones({2}, kInt32), raw::scalar_tensor(2, kInt64)).dtype(), kInt32);
  EXPECT_EQ(raw::mul(raw::scalar_tensor(2, kInt64), raw::scalar_tensor(2, kInt32)).dtype(), kInt64);
}

TEST(Binary, IntegerDivisionIsTrueDivision) {
  Tensor r = raw::div(raw::tensor({7, -7, 1}, kInt64), raw::tensor({2, 2, 3}, kInt64));
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_TRUE(all_close(r, f32({3.5, -3.5, 1.0 / 3.0})));
  Tensor s = raw::binary(BinaryOp::Div, raw::tensor({1, 0}, kBool), 2.0);
  EXPECT_EQ(s.dtype(), kFloat32);
  EXPECT_EQ(values(s), V({0.5, 0}));
}

TEST(Binary, IntegerArithmetic) {
  Tensor a = raw::tensor({250, 3, 7}, kUInt8), b = raw::tensor({10, 5, 2}, kUInt8);
  EXPECT_EQ(values(raw::add(a, b)), V({4, 8, 9}));  // wraps modulo 256
  EXPECT_EQ(values(raw::sub(b, a)), V({16, 2, 251}));
  Tensor p = raw::pow(raw::tensor({2, -3, 5}, kInt64), raw::tensor({10, 3, 0}, kInt64));
  EXPECT_EQ(p.dtype(), kInt64);
  EXPECT_EQ(values(p), V({1024, -27, 1}));
  Tensor bb = raw::add(raw::tensor({1, 0, 1}, kBool), raw::tensor({1, 0, 0}, kBool));
  EXPECT_EQ(bb.dtype(), kBool);
  EXPECT_EQ(values(bb), V({1, 0, 1}));
  EXPECT_TRUE(throws_with([&] { raw::sub(raw::tensor({1}, kBool), raw::tensor({1}, kBool)); },
                          "sub: subtraction, the `-` operator, with two bool tensors is not supported"));
}

TEST(Binary, ScalarOperands) {
  Tensor x = f32({1, 2, 4});
  EXPECT_EQ(values(raw::binary(BinaryOp::Sub, 10.0, x)), V({9, 8, 6}));  // scalar first
  EXPECT_EQ(values(raw::binary(BinaryOp::Sub, x, 10.0)), V({-9, -8, -6}));
  EXPECT_EQ(values(raw::binary(BinaryOp::Div, 1.0, x)), V({1, 0.5, 0.25}));
  EXPECT_EQ(values(raw::binary(BinaryOp::Pow, 2.0, x)), V({2, 4, 16}));
  EXPECT_EQ(values(raw::pow(x, 2.0)), V({1, 4, 16}));
  EXPECT_EQ(values(raw::pow(x, 0.5)), V({1, std::sqrt(2.0f), 2}));
  EXPECT_EQ(values(raw::pow(x, -1.0)), V({1, 0.5, 0.25}));
  EXPECT_EQ(values(raw::pow(x, -0.5)), V({1, 1 / std::sqrt(2.0f), 0.5}));
  EXPECT_EQ(values(raw::pow(x, 3.0)), V({1, 8, 64}));
  EXPECT_EQ(values(raw::binary(BinaryOp::Maximum, x, 2.0)), V({2, 2, 4}));
  EXPECT_EQ(values(raw::binary(BinaryOp::Ge, 2.0, x)), V({1, 1, 0}));

  Tensor i = raw::tensor({1, 2, 3}, kInt32);
  EXPECT_EQ(raw::mul(i, 2.0).dtype(), kInt32);  // a whole scalar keeps the integer dtype
  Tensor fi = raw::mul(i, 2.5);
  EXPECT_EQ(fi.dtype(), kFloat32);
  EXPECT_EQ(values(fi), V({2.5, 5, 7.5}));
  EXPECT_EQ(raw::add(raw::tensor({1, 0}, kBool), 1.0).dtype(), kInt64);
  EXPECT_EQ(values(raw::pow(i, 2.0)), V({1, 4, 9}));
  EXPECT_EQ(raw::pow(i, 2.0).dtype(), kInt32);
  EXPECT_EQ(raw::pow(i, 0.5).dtype(), kFloat32);
  EXPECT_TRUE(throws_with([&] { raw::pow(i, -2.0); }, "pow: integers to negative integer powers are not allowed"));
  // x^1 is a copy (pow(x, 2)'s gradient takes it): a new tensor, NaN and -0 kept, strided input
  // made contiguous, the integer dtype kept.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor y = f32({-0.0, nan, 3});
  Tensor y1 = raw::pow(y, 1.0);
  std::vector<double> y1v = values(y1);
  EXPECT_TRUE(y1v[0] == 0.0 && std::signbit(y1v[0]));
  EXPECT_TRUE(std::isnan(y1v[1]));
  EXPECT_EQ(y1v[2], 3.0);
  EXPECT_NE(y1.data_ptr_raw(), y.data_ptr_raw());
  Tensor col = raw::transpose(raw::reshape(f32({1, 2, 3, 4, 5, 6}), {2, 3}), 0, 1);
  Tensor col1 = raw::pow(col, 1.0);
  EXPECT_TRUE(col1.is_contiguous());
  EXPECT_EQ(values(col1), V({1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(values(raw::pow(i, 1.0)), V({1, 2, 3}));
  EXPECT_EQ(raw::pow(i, 1.0).dtype(), kInt32);

  // The scalar stays in float for a float16 tensor: 3 * 0.1f rounds once to the half 1229 * 2^-12,
  // whereas 3 * half(0.1) = 0.2999267578125 is a tie that rounds to 1228 * 2^-12.
  Tensor h = raw::to(f32({3}), kCPU, kFloat16);
  EXPECT_EQ(values(raw::mul(h, 0.1)), V({0.300048828125}));
}

TEST(Binary, AddAlphaChecks) {
  Tensor i = raw::tensor({1, 2}, kInt64);
  EXPECT_EQ(values(raw::add(i, i, 3)), V({4, 8}));
  EXPECT_TRUE(throws_with([&] { raw::add(i, i, 0.5); },
                          "add: for integral input tensors, argument alpha must not be a floating point number"));
  Tensor b = raw::tensor({1}, kBool);
  EXPECT_TRUE(throws_with([&] { raw::add(b, b, 2); }, "add: for boolean input tensors, argument alpha must be a boolean"));
}

TEST(Binary, Float16AndBFloat16) {
  Tensor a = raw::to(f32({1, 2.5, -3}), kCPU, kFloat16), b = raw::to(f32({0.5, 0.25, 8}), kCPU, kFloat16);
  Tensor r = raw::mul(a, b);
  EXPECT_EQ(r.dtype(), kFloat16);
  EXPECT_EQ(values(r), V({0.5, 0.625, -24}));
  Tensor c = raw::add(raw::to(f32({1}), kCPU, kBFloat16), raw::to(f32({1.0 / 256}), kCPU, kBFloat16));
  EXPECT_EQ(values(c), V({1}));  // 1 + 2^-8 ties to even in bfloat16
}

// ---------- in place ----------

TEST(BinaryInPlace, UpdatesValuesAndBumpsVersion) {
  Tensor a = f32({1, 2, 3});
  uint32_t v0 = a.version();
  raw::binary_(BinaryOp::Add, a, f32({10, 20, 30}));
  EXPECT_EQ(values(a), V({11, 22, 33}));
  EXPECT_GT(a.version(), v0);
  uint32_t v1 = a.version();
  raw::binary_(BinaryOp::Mul, a, 2.0);
  EXPECT_EQ(values(a), V({22, 44, 66}));
  EXPECT_GT(a.version(), v1);
  raw::binary_(BinaryOp::Sub, a, raw::scalar_tensor(2.0));
  EXPECT_EQ(values(a), V({20, 42, 64}));
}

TEST(BinaryInPlace, BroadcastsIntoAStridedView) {
  Tensor base = raw::zeros({3, 4});
  Tensor t = raw::transpose(base, 0, 1);  // [4, 3] view
  raw::binary_(BinaryOp::Add, t, f32({1, 2, 3}));
  // t[i][j] = j + 1, so base[j][i] = j + 1
  EXPECT_EQ(values(base), V({1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  Tensor col = raw::narrow(base, 1, 0, 1);  // [3, 1]
  raw::binary_(BinaryOp::Mul, col, 10.0);
  EXPECT_EQ(values(base), V({10, 1, 1, 1, 20, 2, 2, 2, 30, 3, 3, 3}));
  EXPECT_TRUE(throws_with([&] { raw::binary_(BinaryOp::Add, col, iota({3, 4})); },
                          "add_: output with shape [3, 1] doesn't match the broadcast shape [3, 4]"));
}

TEST(BinaryInPlace, CastsResultToTheTensorDtype) {
  Tensor f = f32({1.5, 2.5});
  raw::binary_(BinaryOp::Add, f, raw::tensor({1, 2}, kInt64));  // float += int is fine
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(values(f), V({2.5, 4.5}));
  Tensor f16 = raw::to(f32({1, 2}), kCPU, kFloat16);
  raw::binary_(BinaryOp::Mul, f16, raw::tensor({0.5, 0.25}, kFloat64));
  EXPECT_EQ(f16.dtype(), kFloat16);
  EXPECT_EQ(values(f16), V({0.5, 0.5}));
  Tensor cmp = f32({1, 5});
  raw::binary_(BinaryOp::Lt, cmp, f32({2, 2}));  // bool result stored as 1/0
  EXPECT_EQ(values(cmp), V({1, 0}));

  Tensor i = raw::tensor({1, 2}, kInt32);
  EXPECT_TRUE(throws_with([&] { raw::binary_(BinaryOp::Add, i, f32({1, 1})); },
                          "add_: result type Float can't be cast to the desired output type Int"));
  EXPECT_TRUE(throws_with([&] { raw::binary_(BinaryOp::Div, i, raw::tensor({2, 2}, kInt32)); },
                          "div_: result type Float can't be cast to the desired output type Int"));
  Tensor l = raw::tensor({1, 2}, kInt64);
  EXPECT_TRUE(throws_with([&] { raw::binary_(BinaryOp::Mul, l, 2.5); },
                          "mul_: result type Float can't be cast to the desired output type Long"));
  Tensor b = raw::tensor({1, 0}, kBool);
  EXPECT_TRUE(throws_with([&] { raw::binary_(BinaryOp::Add, b, raw::tensor({1, 1}, kUInt8)); },
                          "add_: result type Byte can't be cast to the desired output type Bool"));
  raw::binary_(BinaryOp::Mul, i, 3.0);
  EXPECT_EQ(values(i), V({3, 6}));
}

TEST(BinaryInPlace, OverlappingOperandsReadOriginalValues) {
  Tensor a = iota({3, 2});
  Tensor row0 = raw::select(a, 0, 0);  // a view of a's first row, broadcast over a
  raw::binary_(BinaryOp::Add, a, row0);
  EXPECT_EQ(values(a), V({0, 2, 2, 4, 4, 6}));
  Tensor b = f32({1, 2, 3});
  raw::binary_(BinaryOp::Mul, b, b);  // the same view: elementwise, safe
  EXPECT_EQ(values(b), V({1, 4, 9}));
  Tensor expanded = raw::expand(f32({1}), {3});
  EXPECT_TRUE(throws_with([&] { raw::binary_(BinaryOp::Add, expanded, 1.0); },
                          "more than one element of the written-to tensor refers to a single memory location"));
}

// ---------- clamp, where, activation gradients ----------

TEST(Clamp, BoundsAndDtypes) {
  Tensor x = f32({-2, 0.5, 3, kNaN});
  std::vector<double> both = values(raw::clamp(x, 0.0, 1.0));
  EXPECT_EQ(std::vector<double>(both.begin(), both.end() - 1), V({0, 0.5, 1}));
  EXPECT_TRUE(std::isnan(both[3]));
  std::vector<double> lo = values(raw::clamp(x, -1.0, std::nullopt));
  EXPECT_EQ(lo[0], -1);
  EXPECT_EQ(lo[2], 3);
  std::vector<double> hi = values(raw::clamp(x, std::nullopt, 0.0));
  EXPECT_EQ(hi[0], -2);
  EXPECT_EQ(hi[2], 0);
  EXPECT_EQ(values(raw::clamp(f32({-5, 5}), 2.0, 1.0)), V({1, 1}));  // min > max gives max
  Tensor i = raw::tensor({-5, 1, 9}, kInt64);
  Tensor ci = raw::clamp(i, 0.0, 4.0);
  EXPECT_EQ(ci.dtype(), kInt64);
  EXPECT_EQ(values(ci), V({0, 1, 4}));
  Tensor cf = raw::clamp(i, 0.5, std::nullopt);
  EXPECT_EQ(cf.dtype(), kFloat32);
  EXPECT_EQ(values(cf), V({0.5, 1, 9}));
  EXPECT_TRUE(throws_with([&] { raw::clamp(x, std::nullopt, std::nullopt); },
                          "clamp: at least one of 'min' or 'max' must not be None"));
}

TEST(Clamp, InPlace) {
  Tensor base = iota({2, 3});
  Tensor t = raw::transpose(base, 0, 1);
  uint32_t v0 = base.version();
  raw::clamp_(t, 1.0, 4.0);
  EXPECT_EQ(values(base), V({1, 1, 2, 3, 4, 4}));
  EXPECT_GT(base.version(), v0);
  Tensor i = raw::tensor({-5, 9}, kInt32);
  EXPECT_TRUE(throws_with([&] { raw::clamp_(i, 0.5, std::nullopt); },
                          "clamp_: result type Float can't be cast to the desired output type Int"));
}

TEST(Where, BroadcastsAndPromotes) {
  Tensor cond = raw::reshape(raw::tensor({1, 0}, kBool), {2, 1});
  Tensor a = raw::tensor({1, 2, 3}, kInt64);
  Tensor b = raw::scalar_tensor(-1.5, kFloat32);
  Tensor r = raw::where(cond, a, b);
  EXPECT_EQ(r.sizes(), (Shape{2, 3}));
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_EQ(values(r), V({1, 2, 3, -1.5, -1.5, -1.5}));
  Tensor t = raw::transpose(iota({3, 2}), 0, 1);  // [2, 3]: 0 2 4 / 1 3 5
  Tensor c2 = raw::binary(BinaryOp::Gt, t, 2.0);
  EXPECT_EQ(values(raw::where(c2, t, raw::neg(t))), V({-0.0, -2, 4, -1, 3, 5}));
  EXPECT_TRUE(throws_with([&] { raw::where(raw::tensor({1}, kInt64), a, a); },
                          "where: expected condition to be a bool tensor, got int64"));
  EXPECT_TRUE(throws_with([&] { raw::where(raw::tensor({1, 0}, kBool), a, a); },
                          "where: shapes [2] and [3] cannot be broadcast"));
}

TEST(MaskedFill, AsPyTorch) {
  Tensor t = raw::transpose(iota({3, 2}), 0, 1);  // [2, 3]: 0 2 4 / 1 3 5, strided
  Tensor mask = raw::tensor({1, 0, 1}, kBool);     // broadcast over the rows
  EXPECT_EQ(values(raw::masked_fill(t, mask, -7.5)), V({-7.5, 2, -7.5, -7.5, 3, -7.5}));
  // The value takes t's dtype (torch: zeros(3, dtype=long).masked_fill(mask, 1.7) is [1, 0, 1]).
  Tensor i = raw::masked_fill(raw::zeros({3}, kInt64), mask, 1.7);
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(values(i), V({1, 0, 1}));
  // A larger mask broadcasts t, as the out-of-place torch.masked_fill does.
  EXPECT_EQ(raw::masked_fill(raw::zeros({3}), raw::ones({2, 3}, kBool), 1.0).sizes(), (Shape{2, 3}));
  Tensor nan = raw::masked_fill(raw::zeros({2}), raw::tensor({0, 1}, kBool), std::nan(""));
  EXPECT_TRUE(std::isnan(values(nan)[1]));
  EXPECT_TRUE(throws_with([&] { raw::masked_fill(t, raw::tensor({1, 0, 1}, kInt64), 0.0); },
                          "masked_fill: expected a bool mask, got int64"));
}

TEST(ActivationBackward, Formulas) {
  Tensor g = f32({1, 2, 3, 4});
  Tensor x = f32({-1, 0, 0.5, 2});
  EXPECT_EQ(values(raw::activation_backward(raw::ActivationGrad::Relu, g, x)), V({0, 0, 3, 4}));
  Tensor y = f32({0.5, 0.25, 0.75, 0.125});
  std::vector<double> sig = {1 * 0.5 * 0.5, 2 * 0.25 * 0.75, 3 * 0.75 * 0.25, 4 * 0.125 * 0.875};
  EXPECT_EQ(values(raw::activation_backward(raw::ActivationGrad::Sigmoid, g, y)), sig);
  std::vector<double> th = {1 * 0.75, 2 * (1 - 0.0625), 3 * (1 - 0.5625), 4 * (1 - 0.015625)};
  EXPECT_EQ(values(raw::activation_backward(raw::ActivationGrad::Tanh, g, y)), th);
  Tensor gt = raw::transpose(iota({2, 2}), 0, 1);  // strided grad
  EXPECT_EQ(values(raw::activation_backward(raw::ActivationGrad::Relu, gt, raw::reshape(x, {2, 2}))),
            V({0, 0, 1, 3}));
  EXPECT_TRUE(throws_with([&] { raw::activation_backward(raw::ActivationGrad::Relu, g, f32({1, 2})); },
                          "relu_backward: gradient shape [4] does not match the saved tensor's shape [2]"));
  EXPECT_TRUE(throws_with(
      [&] { raw::activation_backward(raw::ActivationGrad::Tanh, g, raw::to(y, kCPU, kFloat64)); },
      "tanh_backward: expected gradient and saved tensor of one floating dtype, got float32 and float64"));
}

TEST(ActivationBackward, InPlaceOverwritesTheGradient) {
  Tensor x = f32({-1, 0, 0.5, 2});
  Tensor y = f32({0.5, 0.25, 0.75, 0.125});
  for (raw::ActivationGrad op : {raw::ActivationGrad::Relu, raw::ActivationGrad::Sigmoid, raw::ActivationGrad::Tanh}) {
    const Tensor& saved = op == raw::ActivationGrad::Relu ? x : y;
    Tensor g = f32({1, 2, 3, 4});
    const std::vector<double> want = values(raw::activation_backward(op, g, saved));
    const void* buffer = g.data_ptr_raw();
    raw::activation_backward_(op, g, saved);
    EXPECT_EQ(g.data_ptr_raw(), buffer);
    EXPECT_EQ(values(g), want);
  }
  Tensor strided = raw::transpose(iota({2, 2}), 0, 1);
  const raw::ActivationGrad relu = raw::ActivationGrad::Relu;
  EXPECT_TRUE(throws_with([&] { raw::activation_backward_(relu, strided, raw::reshape(x, {2, 2})); },
                          "relu_backward_: expected a contiguous gradient to overwrite, got strides [1, 2]"));
  EXPECT_TRUE(throws_with([&] { raw::activation_backward_(relu, f32({1, 2, 3, 4}), f32({1, 2})); },
                          "relu_backward: gradient shape [4] does not match the saved tensor's shape [2]"));
}

// ---------- allclose / equal ----------

TEST(Compare, AllcloseAndEqual) {
  Tensor a = f32({1, 2, kNaN});
  Tensor b = f32({1, 2.00001, kNaN});
  EXPECT_FALSE(raw::allclose(a, b));  // NaN != NaN by default
  EXPECT_TRUE(raw::allclose(a, b, 1e-5, 1e-8, /*equal_nan=*/true));
  EXPECT_FALSE(raw::allclose(f32({1}), f32({1.001})));
  EXPECT_TRUE(raw::allclose(f32({1}), f32({1.001}), 0, 1e-2));
  EXPECT_TRUE(raw::allclose(f32({INFINITY}), f32({INFINITY})));
  EXPECT_FALSE(raw::allclose(f32({INFINITY}), f32({-INFINITY})));
  EXPECT_FALSE(raw::allclose(f32({1, 2}), f32({1, 2, 3})));  // shapes differ
  EXPECT_TRUE(raw::allclose(raw::transpose(iota({2, 3}), 0, 1), raw::contiguous(raw::transpose(iota({2, 3}), 0, 1))));
  EXPECT_TRUE(throws_with([&] { raw::allclose(f32({1}), raw::tensor({1}, kFloat64)); },
                          "allclose: expected both tensors to have the same dtype, got float32 and float64"));

  EXPECT_TRUE(raw::equal(iota({2, 2}), iota({2, 2})));
  EXPECT_FALSE(raw::equal(iota({2, 2}), iota({4})));
  EXPECT_FALSE(raw::equal(f32({1, 2}), f32({1, 2.0001})));
  EXPECT_FALSE(raw::equal(f32({kNaN}), f32({kNaN})));
  EXPECT_TRUE(raw::equal(raw::tensor({1, 2}, kInt64), raw::tensor({1, 2}, kInt64)));
}

// ---------- CUDA against CPU ----------

Tensor on_cuda(const Tensor& t) { return raw::to(t, Device::cuda(0), t.dtype()); }

TEST(ElementwiseOps, DeviceMismatch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor a = f32({1, 2}), b = on_cuda(f32({1, 2}));
  EXPECT_TRUE(throws_with([&] { raw::add(a, b); }, "add: expected all tensors on the same device, got cpu and cuda:0"));
  EXPECT_TRUE(throws_with([&] { raw::binary_(BinaryOp::Mul, b, a); },
                          "mul_: expected all tensors on the same device, got cuda:0 and cpu"));
  EXPECT_TRUE(throws_with([&] { raw::where(raw::tensor({1, 0}, kBool), b, b); }, "where: expected all tensors"));
}

// The same transposed view of `base` on the CPU and on the GPU, so the CUDA kernels see strides.
struct Pair {
  Tensor cpu, gpu;
};
Pair transposed_pair(const Tensor& base) {
  return {raw::transpose(base, 0, 1), raw::transpose(on_cuda(base), 0, 1)};
}

TEST(ElementwiseOps, UnaryMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor base = raw::reshape(raw::linspace(-3, 3, 60), {6, 10});
  Tensor pos = raw::add(raw::abs(base), 0.1);
  for (int o = 0; o <= static_cast<int>(UnaryOp::Round); ++o) {
    UnaryOp op = static_cast<UnaryOp>(o);
    if (op == UnaryOp::BitwiseNot) continue;  // integers and bool only: below
    bool needs_positive = op == UnaryOp::Log || op == UnaryOp::Sqrt || op == UnaryOp::Rsqrt || op == UnaryOp::Log1p;
    for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
      Pair in = transposed_pair(raw::to(needs_positive ? pos : base, kCPU, dt));
      ASSERT_FALSE(in.gpu.is_contiguous());
      Tensor want = raw::unary(op, in.cpu);
      Tensor got = raw::unary(op, in.gpu);
      EXPECT_TRUE(got.is_cuda());
      EXPECT_EQ(got.dtype(), want.dtype());
      double tol = (dt == kFloat16 || dt == kBFloat16) ? 1e-2 : 1e-5;
      EXPECT_TRUE(all_close(got, want, tol, tol)) << "op " << o << " " << dtype_name(dt);
    }
  }
  Tensor i = raw::tensor({-3, 0, 7}, kInt32);
  for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu, UnaryOp::Sign, UnaryOp::Square, UnaryOp::LogicalNot,
                     UnaryOp::BitwiseNot, UnaryOp::IsNan, UnaryOp::IsInf, UnaryOp::IsFinite})
    EXPECT_TRUE(raw::equal(raw::to(raw::unary(op, on_cuda(i)), kCPU, raw::unary(op, i).dtype()), raw::unary(op, i)));
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    Tensor special = raw::to(raw::tensor({1.0, nan, inf, -inf, 0.0}, kFloat64), kCPU, dt);
    for (UnaryOp op : {UnaryOp::IsNan, UnaryOp::IsInf, UnaryOp::IsFinite}) {
      EXPECT_TRUE(raw::equal(raw::to(raw::unary(op, on_cuda(special)), kCPU, kBool), raw::unary(op, special)))
          << op_name(op) << " " << dtype_name(dt);
    }
  }
}

TEST(ElementwiseOps, BinaryMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor base = raw::reshape(raw::linspace(-2, 3, 40), {8, 5});  // used transposed: [5, 8]
  Tensor positive = raw::add(raw::mul(base, 2.0), 5.0);          // in [1, 11]: no integer zero to divide by
  Tensor b = raw::reshape(raw::linspace(1, 3, 8), {1, 8});       // a row broadcast over [5, 8]
  for (int o = 0; o <= static_cast<int>(BinaryOp::LogicalXor); ++o) {
    BinaryOp op = static_cast<BinaryOp>(o);
    const bool bitwise = op == BinaryOp::BitwiseAnd || op == BinaryOp::BitwiseOr || op == BinaryOp::BitwiseXor ||
                         kernels::integers_only(op) || kernels::shifts_bits(op);
    for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8}) {
      if (bitwise && is_floating(dt)) continue;  // refused on floating types
      if (op == BinaryOp::NextAfter && (dt == kFloat16 || dt == kBFloat16)) continue;  // refused in Colony
      if (kernels::refuses_integral_input(op) && !is_floating(dt)) continue;  // hypot, logaddexp(2)
      Tensor xb = raw::to(!is_floating(dt) ? positive : op == BinaryOp::Pow ? raw::abs(base) : base, kCPU, dt);
      Pair x = transposed_pair(xb);
      Tensor y = raw::to(b, kCPU, dt), yg = on_cuda(y);
      double tol = (dt == kFloat16 || dt == kBFloat16) ? 1e-2 : 1e-5;
      EXPECT_TRUE(all_close(raw::binary(op, x.gpu, yg), raw::binary(op, x.cpu, y), tol, tol)) << o << " " << dtype_name(dt);
      EXPECT_TRUE(all_close(raw::binary(op, x.gpu, 2.0), raw::binary(op, x.cpu, 2.0), tol, tol)) << o;
      EXPECT_TRUE(all_close(raw::binary(op, 2.0, x.gpu), raw::binary(op, 2.0, x.cpu), tol, tol)) << o;
      if (!kernels::promotes_integral_to_float(op) || is_floating(dt)) {  // an int64 tensor can't take div's float32
        Pair inplace = transposed_pair(raw::clone(xb));  // a strided output on the GPU
        raw::binary_(op, inplace.gpu, yg);
        raw::binary_(op, inplace.cpu, y);
        EXPECT_TRUE(all_close(inplace.gpu, inplace.cpu, tol, tol)) << "in place " << o << " " << dtype_name(dt);
      }
    }
  }
  Pair a = transposed_pair(base);
  Tensor bg = on_cuda(b);
  EXPECT_TRUE(all_close(raw::add(a.gpu, bg, -0.5), raw::add(a.cpu, b, -0.5)));
  EXPECT_TRUE(all_close(raw::clamp(a.gpu, -1.0, 1.0), raw::clamp(a.cpu, -1.0, 1.0)));
  Pair c = transposed_pair(raw::clone(base));
  raw::clamp_(c.gpu, 0.0, std::nullopt);
  raw::clamp_(c.cpu, 0.0, std::nullopt);
  EXPECT_TRUE(all_close(c.gpu, c.cpu));
  Tensor cond = raw::binary(BinaryOp::Gt, a.cpu, 0.0);
  EXPECT_TRUE(all_close(raw::where(on_cuda(cond), a.gpu, bg), raw::where(cond, a.cpu, b)));
  Pair y = transposed_pair(raw::sigmoid(base));
  for (auto g : {raw::ActivationGrad::Relu, raw::ActivationGrad::Sigmoid, raw::ActivationGrad::Tanh})
    EXPECT_TRUE(all_close(raw::activation_backward(g, a.gpu, y.gpu), raw::activation_backward(g, a.cpu, y.cpu)));
  EXPECT_TRUE(raw::allclose(a.gpu, on_cuda(a.cpu)));
  EXPECT_TRUE(raw::equal(a.gpu, on_cuda(raw::contiguous(a.cpu))));
  EXPECT_FALSE(raw::equal(a.gpu, raw::add(a.gpu, 1e-3)));
}

TEST(ElementwiseOps, LargeTensorMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  // More elements than one grid of the grid-stride loop covers.
  Tensor x = raw::reshape(raw::linspace(-5, 5, 3 * 1000003), {3, 1000003});
  Tensor gx = on_cuda(x);
  EXPECT_TRUE(all_close(raw::mul(raw::sigmoid(gx), gx), raw::mul(raw::sigmoid(x), x)));
}

}  // namespace
}  // namespace colony
