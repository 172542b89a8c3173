// Gradient checks of the elementwise unary ops (autograd/unary.cc), on contiguous and strided inputs.
#include <functional>

#include "tests/autograd/gradcheck.h"
#include "tests/autograd/reduce_golden_check.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

// Checks `f` on a [2, 3] input with values in [lo, hi), dense and strided.
::testing::AssertionResult check_unary(const std::function<Tensor(const Tensor&)>& f, double lo = -1.0,
                                       double hi = 1.0) {
  for (Tensor x : {input({2, 3}, lo, hi), strided_input({2, 3}, lo, hi), input({}, lo, hi)}) {
    ::testing::AssertionResult r = gradcheck([&](In in) { return f(in[0]); }, {x});
    if (!r) return r << " (input " << shape_str(x.sizes()) << (x.is_contiguous() ? "" : ", strided") << ")";
  }
  return ::testing::AssertionSuccess();
}

TEST(Unary, Neg) { EXPECT_TRUE(check_unary([](const Tensor& x) { return neg(x); })); }
TEST(Unary, UnaryMinusOperator) { EXPECT_TRUE(check_unary([](const Tensor& x) { return -x; })); }
TEST(Unary, Abs) { EXPECT_TRUE(check_unary([](const Tensor& x) { return abs(x); })); }
TEST(Unary, Exp) { EXPECT_TRUE(check_unary([](const Tensor& x) { return exp(x); })); }
TEST(Unary, Log) { EXPECT_TRUE(check_unary([](const Tensor& x) { return log(x); }, 0.5, 2.0)); }
TEST(Unary, Sqrt) { EXPECT_TRUE(check_unary([](const Tensor& x) { return sqrt(x); }, 0.5, 2.0)); }
TEST(Unary, Rsqrt) { EXPECT_TRUE(check_unary([](const Tensor& x) { return rsqrt(x); }, 0.5, 2.0)); }
TEST(Unary, Relu) { EXPECT_TRUE(check_unary([](const Tensor& x) { return relu(x); })); }
// An activation's backward writes its result over the incoming gradient when nothing else holds
// that gradient (autograd/op_util.h's sole_owner), and never when something does.
TEST(Unary, ActivationGradientOverwritesOnlyAnUnsharedIncomingGradient) {
  for (bool keep : {false, true}) {
    SCOPED_TRACE(keep ? "a hook keeps the incoming gradient" : "nothing keeps it");
    Tensor x = input({4, 5});
    const Tensor w = input({4, 5}, -1.0, 1.0, 11).detach();
    Tensor y = relu(x);
    const void* into_relu = nullptr;
    const void* into_x = nullptr;
    Tensor kept;
    y.register_hook([&](const Tensor& g) -> std::optional<Tensor> {
      into_relu = g.data_ptr_raw();
      if (keep) kept = g;
      return std::nullopt;
    });
    x.register_hook([&](const Tensor& g) -> std::optional<Tensor> {
      into_x = g.data_ptr_raw();
      return std::nullopt;
    });
    sum(mul(y, w)).backward();
    EXPECT_EQ(into_relu == into_x, !keep);
    const Tensor x_positive = raw::unary(raw::UnaryOp::Sign, raw::unary(raw::UnaryOp::Relu, x.detach()));
    EXPECT_TRUE(all_close(x.grad(), raw::mul(w, x_positive), 1e-15, 0));
    if (keep) {
      EXPECT_TRUE(all_close(kept, w, 0, 0)) << "the kept gradient was overwritten";
    }
  }
}

TEST(Unary, Gelu) {
  EXPECT_TRUE(check_unary([](const Tensor& x) { return gelu(x); }, -3.0, 3.0));
  EXPECT_TRUE(check_unary([](const Tensor& x) { return gelu(x, {raw::GeluApproximate::Tanh}); }, -3.0, 3.0));
}
TEST(Unary, Silu) { EXPECT_TRUE(check_unary([](const Tensor& x) { return silu(x); }, -3.0, 3.0)); }
TEST(Unary, GeluAndSiluRefuseIntegers) {
  Tensor i = raw::arange(4.0);
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([&] { gelu(i); }, "gelu: expected a floating-point tensor, got int64"));
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([&] { silu(i); }, "silu: expected a floating-point tensor"));
}
TEST(Unary, Sigmoid) { EXPECT_TRUE(check_unary([](const Tensor& x) { return sigmoid(x); }, -3.0, 3.0)); }
TEST(Unary, Tanh) { EXPECT_TRUE(check_unary([](const Tensor& x) { return tanh(x); }, -2.0, 2.0)); }
TEST(Unary, Sin) { EXPECT_TRUE(check_unary([](const Tensor& x) { return sin(x); }, -3.0, 3.0)); }
TEST(Unary, Cos) { EXPECT_TRUE(check_unary([](const Tensor& x) { return cos(x); }, -3.0, 3.0)); }
TEST(Unary, Log1p) { EXPECT_TRUE(check_unary([](const Tensor& x) { return log1p(x); }, -0.5, 2.0)); }
TEST(Unary, Expm1) { EXPECT_TRUE(check_unary([](const Tensor& x) { return expm1(x); })); }
TEST(Unary, Erf) { EXPECT_TRUE(check_unary([](const Tensor& x) { return erf(x); }, -2.0, 2.0)); }
TEST(Unary, ErfMethodAndIntegerInput) {
  // torch.erf(torch.tensor([0, 1])) is float32: integral inputs compute in the default float type.
  Tensor y = raw::tensor({0, 1, -2}, kInt64).erf();
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_NEAR(y.select(0, 1).item(), 0.8427007929497149, 1e-6);
  EXPECT_NEAR(y.select(0, 2).item(), -0.9953222650189527, 1e-6);
}
TEST(Unary, Square) { EXPECT_TRUE(check_unary([](const Tensor& x) { return square(x); })); }
TEST(Unary, Reciprocal) { EXPECT_TRUE(check_unary([](const Tensor& x) { return reciprocal(x); }, 0.5, 2.0)); }
TEST(Unary, ClampBoth) { EXPECT_TRUE(check_unary([](const Tensor& x) { return clamp(x, -0.3, 0.4); })); }
TEST(Unary, ClampMinOnly) { EXPECT_TRUE(check_unary([](const Tensor& x) { return clamp(x, 0.1, std::nullopt); })); }
TEST(Unary, ClampMaxOnly) { EXPECT_TRUE(check_unary([](const Tensor& x) { return clamp(x, std::nullopt, 0.1); })); }

TEST(Unary, PiecewiseConstantOpsHaveZeroGradient) {
  for (auto f : {+[](const Tensor& x) { return sign(x); }, +[](const Tensor& x) { return floor(x); },
                 +[](const Tensor& x) { return ceil(x); }, +[](const Tensor& x) { return round(x); }}) {
    EXPECT_TRUE(check_unary(f, -2.3, 2.3));
    Tensor x = input({3}, -2.0, 2.0);
    Tensor y = f(x);
    EXPECT_TRUE(y.requires_grad());
    y.sum().backward();
    EXPECT_TRUE(all_close(x.grad(), raw::zeros({3}, kFloat64)));
  }
}

TEST(Unary, ReluGradientByHand) {
  Tensor x = tensor({-1.0, 0.5, 2.0, -0.1}, TensorOptions().requires_grad(true));
  relu(x).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({0.0, 1.0, 1.0, 0.0})));
}

TEST(Unary, ClampGradientIsZeroAtTheBounds) {
  // torch 2.15: the gradient flows where min < x < max; the bounds themselves get 0 (the
  // minimum-norm subgradient, as hardtanh's; torch before 2.15 passed it there).
  Tensor x = tensor({-2.0, -1.0, 0.0, 1.0, 2.0}, TensorOptions().requires_grad(true));
  clamp(x, -1.0, 1.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({0.0, 0.0, 1.0, 0.0, 0.0})));
}

// torch's values and gradients (reduce_golden.h) at the bounds, beyond them, at NaN and +-inf, -0,
// one bound only, crossed bounds, float32 inputs on float32-rounded bounds, and rows of 37 (the
// vector loop and its tail), on `device`.
void check_clamp_goldens(Device device) {
  struct Named {
    const char* name;
    std::optional<double> min, max;
  };
  for (const Named& n : std::vector<Named>{{"clamp/both", -0.5, 0.5},
                                           {"clamp/both/f32", -0.5, 0.5},
                                           {"clamp/min/f32", -0.5, std::nullopt},
                                           {"clamp/max", std::nullopt, 0.5},
                                           {"clamp/crossed", 0.5, -0.5},
                                           {"clamp/rounded_bounds/f32", 0.1, 0.2},
                                           {"clamp/rows/f32", -0.5, 0.5}}) {
    const testing::reduce_golden::Case& c = testing::reduce_golden::golden(n.name);
    Tensor x = testing::reduce_golden::golden_input(c, device);
    EXPECT_TRUE(testing::reduce_golden::matches_golden(c, x, clamp(x, n.min, n.max)));
  }
}

TEST(Unary, ClampMatchesTorch) { check_clamp_goldens(kCPU); }

TEST(Unary, ClampMatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_clamp_goldens(Device::cuda(0));
}

// The one-pass gradient (raw::clamp_backward) on a broadcast gradient (stride 0, as sum's backward
// gives), a strided input, float16 and float64 against a where of the strict comparisons; its errors.
TEST(Unary, ClampBackwardOnStridedAndBroadcastOperands) {
  Generator gen(3);
  Tensor x = raw::transpose(raw::randn({40, 33}, kFloat32, &gen), 0, 1);
  Tensor g = raw::expand(raw::randn({40}, kFloat32, &gen), {33, 40});
  Tensor inside = raw::binary(raw::BinaryOp::LogicalAnd, raw::binary(raw::BinaryOp::Gt, x, -0.5), raw::binary(raw::BinaryOp::Lt, x, 0.5));
  Tensor want = raw::where(inside, g, raw::zeros_like(x));
  EXPECT_TRUE(raw::equal(raw::clamp_backward(g, x, -0.5, 0.5), want));
  for (DType dt : {kFloat16, kFloat64}) {
    Tensor xd = raw::to(x, kCPU, dt), gd = raw::to(raw::contiguous(g), kCPU, dt);
    Tensor w = raw::where(raw::binary(raw::BinaryOp::Gt, xd, -0.5), gd, raw::zeros_like(xd));
    EXPECT_TRUE(raw::equal(raw::clamp_backward(gd, xd, -0.5, std::nullopt), w)) << dtype_name(dt);
  }
  EXPECT_TRUE(testing::throws_with([&] { raw::clamp_backward(g, x, std::nullopt, std::nullopt); },
                                   "at least one of 'min' or 'max'"));
  EXPECT_TRUE(testing::throws_with([&] { raw::clamp_backward(raw::to(g, kCPU, kFloat64), x, 0.0, 1.0); },
                                   "one floating dtype, got float64 and float32"));
}

TEST(Unary, Float32GradientsMatchFloat64) {
  Tensor x64 = input({4}, 0.5, 2.0);
  Tensor x32 = x64.detach().to(kFloat32);
  x32.requires_grad_();
  (sqrt(x64) * tanh(x64)).sum().backward();
  (sqrt(x32) * tanh(x32)).sum().backward();
  EXPECT_EQ(x32.grad().dtype(), kFloat32);
  EXPECT_TRUE(all_close(x32.grad(), x64.grad(), 1e-5, 1e-6));
}

}  // namespace
}  // namespace colony
