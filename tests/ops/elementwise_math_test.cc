// The trigonometric, hyperbolic, logarithmic, special and integer-division ops of the functor table
// (kernels/common/elementwise_functors.h) through raw::unary and raw::binary, against PyTorch's values
// (elementwise_math_golden.h): float64, float32, bfloat16 and integer inputs with the corner cases,
// the result dtypes, the scalar forms, broadcasting and strides, in place, and the errors. The
// *_CUDA test compares each op on the GPU with the CPU (skipped without a GPU).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/raw_ops.h"
#include "tests/ops/elementwise_math_testing.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using raw::BinaryOp;
using raw::UnaryAttrs;
using raw::UnaryOp;
using testing::golden_rtol;
using testing::golden_tensor;
using testing::matches_golden;
using testing::throws_with;
namespace golden = testing::elementwise_math_golden;

// The op a golden case names, looked up in the op lists (op_name), so a case cannot test another op.
UnaryOp unary_named(const std::string& name) {
  for (int i = 0; i < 256; ++i) {
    if (name == kernels::op_name(static_cast<UnaryOp>(i))) return static_cast<UnaryOp>(i);
  }
  ADD_FAILURE() << "no unary op " << name;
  return UnaryOp::Neg;
}

BinaryOp binary_named(const std::string& name) {
  for (int i = 0; i < 256; ++i) {
    if (name == kernels::op_name(static_cast<BinaryOp>(i))) return static_cast<BinaryOp>(i);
  }
  ADD_FAILURE() << "no binary op " << name;
  return BinaryOp::Add;
}

// "logit_eps" is logit with eps = kLogitEps.
Tensor run_unary(const std::string& name, const Tensor& x) {
  if (name == "logit_eps") {
    UnaryAttrs attrs;
    attrs.logit_eps = golden::kLogitEps;
    return raw::unary(UnaryOp::Logit, x, attrs);
  }
  return raw::unary(unary_named(name), x);
}

TEST(ElementwiseMath, UnaryMatchesPyTorch) {
  for (const golden::UnaryCase& c : golden::kUnaryCases) {
    SCOPED_TRACE(std::string(c.op) + " of " + dtype_name(c.dtype));
    Tensor y = run_unary(c.op, golden_tensor(c.x, c.dtype));
    EXPECT_TRUE(matches_golden(y, c.out_dtype, c.y, golden_rtol(c.out_dtype)));
  }
}

TEST(ElementwiseMath, BinaryMatchesPyTorch) {
  for (const golden::BinaryCase& c : golden::kBinaryCases) {
    SCOPED_TRACE(std::string(c.op) + " of " + dtype_name(c.a_dtype) + " and " + dtype_name(c.b_dtype));
    Tensor y = raw::binary(binary_named(c.op), golden_tensor(c.a, c.a_dtype), golden_tensor(c.b, c.b_dtype));
    EXPECT_TRUE(matches_golden(y, c.out_dtype, c.y, golden_rtol(c.out_dtype)));
  }
}

TEST(ElementwiseMath, ScalarFormsMatchPyTorch) {
  for (const golden::ScalarCase& c : golden::kScalarCases) {
    SCOPED_TRACE(std::string(c.op) + (c.scalar_first ? "(s, t)" : "(t, s)") + " s = " + std::to_string(c.s) + ", " +
                 dtype_name(c.dtype));
    Tensor t = golden_tensor(c.t, c.dtype);
    BinaryOp op = binary_named(c.op);
    Tensor y = c.scalar_first ? raw::binary(op, c.s, t) : raw::binary(op, t, c.s);
    EXPECT_TRUE(matches_golden(y, c.out_dtype, c.y, golden_rtol(c.out_dtype)));
  }
}

// Every op of the table has golden cases (an op added to the list without them fails here).
TEST(ElementwiseMath, EveryNewOpHasGoldenCases) {
  for (const char* name : {"tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "trunc", "frac",
                           "log2", "log10", "exp2", "erfc", "erfinv", "lgamma", "digamma", "logit", "sinc"}) {
    bool found = false;
    for (const golden::UnaryCase& c : golden::kUnaryCases) found |= std::string(c.op) == name;
    EXPECT_TRUE(found) << name;
  }
  for (const char* name :
       {"atan2", "fmod", "remainder", "floor_divide", "hypot", "copysign", "xlogy", "logaddexp", "logaddexp2"}) {
    bool found = false;
    for (const golden::BinaryCase& c : golden::kBinaryCases) found |= std::string(c.op) == name;
    EXPECT_TRUE(found) << name;
  }
}

TEST(ElementwiseMath, TruncOfIntegersIsACopy) {
  Tensor i = raw::tensor({-3, 0, 7}, kInt32);
  Tensor t = raw::unary(UnaryOp::Trunc, i);
  EXPECT_EQ(t.dtype(), kInt32);
  EXPECT_TRUE(raw::equal(t, i));
  EXPECT_NE(t.data_ptr_raw(), i.data_ptr_raw());
}

TEST(ElementwiseMath, RefusedDtypes) {
  Tensor i = raw::tensor({1, 2}, kInt64), b = raw::tensor({1, 0}, kBool);
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::unary(UnaryOp::Frac, i); },
                                                 "frac: expected a floating-point tensor, got int64"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::unary(UnaryOp::Trunc, b); },
                                                 "trunc: not implemented for bool tensors"));
  for (BinaryOp op : {BinaryOp::Hypot, BinaryOp::LogAddExp, BinaryOp::LogAddExp2}) {
    EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::binary(op, i, i); },
                                                   std::string(kernels::op_name(op)) +
                                                       ": expected a floating-point tensor, got int64"));
  }
  for (BinaryOp op : {BinaryOp::Fmod, BinaryOp::Remainder, BinaryOp::FloorDivide}) {
    EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::binary(op, b, b); },
                                                   std::string(kernels::op_name(op)) + ": not implemented for bool"));
  }
  // An integer tensor with a float one computes in float32 (the golden cases), as in PyTorch.
  EXPECT_EQ(raw::binary(BinaryOp::Hypot, i, raw::tensor({1.0, 2.0}, kFloat32)).dtype(), kFloat32);
}

// An integer zero divisor raises torch's ZeroDivisionError on the CPU, in every form, instead of
// reaching the division (SIGFPE); a floating zero divisor is IEEE division.
TEST(ElementwiseMath, IntegerDivisionByZeroThrows) {
  Tensor a = raw::tensor({7, -7, 3}, kInt64), zero_in = raw::tensor({2, 0, 1}, kInt64);
  for (BinaryOp op : {BinaryOp::Fmod, BinaryOp::Remainder, BinaryOp::FloorDivide}) {
    const std::string msg = std::string(kernels::op_name(op)) + ": ZeroDivisionError";
    EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::binary(op, a, zero_in); }, msg));
    EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::binary(op, a, 0.0); }, msg));
    EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::binary(op, 3.0, zero_in); }, msg));
    EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::binary(op, a, raw::tensor({0}, kUInt8)); }, msg));
    Tensor in_place = raw::clone(a);
    const std::string msg_ = std::string(kernels::op_name(op)) + "_: ZeroDivisionError";
    EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::binary_(op, in_place, zero_in); }, msg_));
    EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::binary_(op, in_place, 0.0); }, msg_));
    EXPECT_TRUE(raw::equal(in_place, a)) << "the failed in-place op wrote";
    // A non-integral scalar makes it a float32 op: no error.
    EXPECT_EQ(raw::binary(op, a, raw::tensor({0.0, 1.0, 2.0}, kFloat32)).dtype(), kFloat32);
  }
  std::vector<double> v = testing::values(raw::binary(BinaryOp::FloorDivide, raw::tensor({1.0, -1.0, 0.0}), 0.0));
  EXPECT_EQ(v[0], golden::kInf);
  EXPECT_EQ(v[1], -golden::kInf);
  EXPECT_TRUE(std::isnan(v[2]));
}

// Equal dtypes and values, NaN where the other has NaN (xlogy of a negative).
::testing::AssertionResult same_values(const Tensor& got, const Tensor& want) {
  return matches_golden(got, want.dtype(), testing::values(want), 0.0);
}

// Broadcast and transposed operands give the values of the contiguous, expanded ones.
TEST(ElementwiseMath, BroadcastingAndStrides) {
  Tensor a = raw::reshape(raw::linspace(-4.5, 5, 12), {3, 4});
  Tensor b = raw::tensor({2.0, -1.5, 0.75, -3.0});  // broadcast over the rows
  Tensor at = raw::transpose(raw::contiguous(raw::transpose(a, 0, 1)), 0, 1);  // a's values, strided
  ASSERT_FALSE(at.is_contiguous());
  Tensor b_full = raw::contiguous(raw::expand(b, {3, 4}));
  for (BinaryOp op : {BinaryOp::Atan2, BinaryOp::Fmod, BinaryOp::Remainder, BinaryOp::FloorDivide, BinaryOp::Hypot,
                      BinaryOp::Copysign, BinaryOp::Xlogy, BinaryOp::LogAddExp, BinaryOp::LogAddExp2}) {
    SCOPED_TRACE(kernels::op_name(op));
    EXPECT_TRUE(same_values(raw::binary(op, at, b), raw::binary(op, a, b_full)));
    EXPECT_TRUE(same_values(raw::binary(op, b, a), raw::binary(op, b_full, a)));
  }
  for (UnaryOp op : {UnaryOp::Tan, UnaryOp::Atan, UnaryOp::Sinh, UnaryOp::Trunc, UnaryOp::Frac, UnaryOp::Erfc,
                     UnaryOp::Digamma, UnaryOp::Sinc}) {
    EXPECT_TRUE(same_values(raw::unary(op, at), raw::unary(op, a))) << kernels::op_name(op);
  }
}

TEST(ElementwiseMath, InPlaceKeepsTheDtype) {
  Tensor i = raw::tensor({7, -7, 5}, kInt64);
  raw::binary_(BinaryOp::Remainder, i, raw::tensor({3, 3, -3}, kInt64));
  EXPECT_TRUE(testing::matches_values(i, {1, 2, -1}));
  Tensor f = raw::tensor({7.5, -7.5}, kFloat32);
  raw::binary_(BinaryOp::FloorDivide, f, 2.0);
  EXPECT_TRUE(testing::matches_values(f, {3, -4}));
  // atan2 of integers is float32: it cannot be written into an int64 tensor.
  Tensor j = raw::tensor({1, 2}, kInt64);
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::binary_(BinaryOp::Atan2, j, j); },
                                                 "result type Float can't be cast to the desired output type Long"));
}

// ---------- CUDA against CPU ----------

Tensor on_cuda(const Tensor& t) { return raw::to(t, Device::cuda(0), t.dtype()); }

TEST(ElementwiseMath, MatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  // The golden inputs: every corner case on both devices. The GPU's libm differs from the host's in
  // the last bits (CUDA's functions are within 1-4 ulp), hence the tolerances.
  for (const golden::UnaryCase& c : golden::kUnaryCases) {
    SCOPED_TRACE(std::string(c.op) + " of " + dtype_name(c.dtype));
    Tensor x = golden_tensor(c.x, c.dtype);
    Tensor want = run_unary(c.op, x), got = run_unary(c.op, on_cuda(x));
    EXPECT_TRUE(got.is_cuda());
    const double tol = c.out_dtype == kFloat64 ? 1e-12 : c.out_dtype == kFloat32 ? 1e-5 : 1e-2;
    EXPECT_TRUE(matches_golden(raw::to(got, kCPU, got.dtype()), want.dtype(), testing::values(want), tol));
  }
  for (const golden::BinaryCase& c : golden::kBinaryCases) {
    SCOPED_TRACE(std::string(c.op) + " of " + dtype_name(c.a_dtype) + " and " + dtype_name(c.b_dtype));
    Tensor a = golden_tensor(c.a, c.a_dtype), b = golden_tensor(c.b, c.b_dtype);
    BinaryOp op = binary_named(c.op);
    Tensor want = raw::binary(op, a, b), got = raw::binary(op, on_cuda(a), on_cuda(b));
    const double tol = c.out_dtype == kFloat64 ? 1e-12 : c.out_dtype == kFloat32 ? 1e-5 : 1e-2;
    EXPECT_TRUE(matches_golden(raw::to(got, kCPU, got.dtype()), want.dtype(), testing::values(want), tol));
    Tensor got_scalar = raw::binary(op, on_cuda(a), 3.0);
    EXPECT_TRUE(matches_golden(raw::to(got_scalar, kCPU, got_scalar.dtype()), got_scalar.dtype(),
                               testing::values(raw::binary(op, a, 3.0)), tol));
  }
  // An integer zero divisor on the GPU is not read back: no error, 0 there (ATen's floor_divide gives
  // 0 too; its fmod and remainder leave the value to the hardware).
  Tensor q = raw::binary(BinaryOp::FloorDivide, on_cuda(raw::tensor({7, 8}, kInt64)), on_cuda(raw::tensor({0, 3}, kInt64)));
  EXPECT_TRUE(testing::matches_values(q, {0, 2}));
}

}  // namespace
}  // namespace colony
