// Gradient checks of mm, bmm and every matmul shape rule (autograd/linalg.cc).
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

TEST(Linalg, Mm) {
  EXPECT_TRUE(gradcheck([](In in) { return mm(in[0], in[1]); }, {input({2, 3}, -1, 1, 1), input({3, 4}, -1, 1, 2)}));
  EXPECT_TRUE(gradcheck([](In in) { return mm(in[0], in[1]); },
                        {strided_input({2, 3}, -1, 1, 1), strided_input({3, 4}, -1, 1, 2)}));
  // Transposed operands (the layout Linear's weight takes).
  Tensor wt = input({4, 3}, -1, 1, 3).detach().t().requires_grad_();
  EXPECT_TRUE(gradcheck([](In in) { return mm(in[0], in[1]); }, {input({2, 3}), wt}));
  Tensor at = input({3, 2}, -1, 1, 4).detach().t().requires_grad_();
  EXPECT_TRUE(gradcheck([](In in) { return mm(in[0], in[1]); }, {at, input({3, 4})}));
}

TEST(Linalg, Outer) {
  EXPECT_TRUE(gradcheck([](In in) { return outer(in[0], in[1]); }, {input({3}, -1, 1, 1), strided_input({4}, -1, 1, 2)}));
  Tensor a = raw::tensor({1.0, 2.0}), b = raw::tensor({3.0, 4.0, 5.0});
  EXPECT_TRUE(testing::matches_values(a.outer(b), {3, 4, 5, 6, 8, 10}));
  EXPECT_EQ(a.outer(b).sizes(), (Shape{2, 3}));
  EXPECT_TRUE(testing::throws_with([&] { outer(raw::zeros({2, 2}), b); }, "outer: both operands must be 1-D, got [2, 2]"));
}

// linear's fused form (one GEMM with the bias added in place, LinearBackward): 2-D and 3-D inputs,
// each input alone requiring grad, a strided input; and the composed form it falls back to.
TEST(Linalg, Linear) {
  auto f = [](In in) { return linear(in[0], in[1], in[2]); };
  EXPECT_TRUE(gradcheck(f, {input({5, 3}, -1, 1, 1), input({4, 3}, -1, 1, 2), input({4}, -1, 1, 3)}));
  EXPECT_TRUE(gradcheck(f, {input({2, 5, 3}, -1, 1, 1), input({4, 3}, -1, 1, 2), input({4}, -1, 1, 3)}));
  EXPECT_TRUE(gradcheck(f, {strided_input({5, 3}, -1, 1, 1), input({4, 3}, -1, 1, 2), input({4}, -1, 1, 3)}));
  for (int only = 0; only < 3; ++only) {
    std::vector<Tensor> in{input({2, 3, 3}, -1, 1, 4), input({4, 3}, -1, 1, 5), input({4}, -1, 1, 6)};
    for (int i = 0; i < 3; ++i) in[i].requires_grad_(i == only);
    EXPECT_TRUE(gradcheck(f, in)) << "only input " << only << " requires grad";
  }
  EXPECT_TRUE(gradcheck([](In in) { return linear(in[0], in[1]); }, {input({2, 5, 3}), input({4, 3}, -1, 1, 2)}));
  // The value: x W^T + b, against the composed ops.
  Tensor x = input({2, 5, 3}, -1, 1, 7), w = input({4, 3}, -1, 1, 8), b = input({4}, -1, 1, 9);
  EXPECT_TRUE(all_close(linear(x, w, b), add(matmul(x, t(w)), b)));
  // The weight's gradient reaches the leaf contiguous.
  linear(x, w, b).sum().backward();
  EXPECT_TRUE(w.grad().is_contiguous());
}

// In bfloat16 and float16 the bias is added inside the product's float32 sums and the output
// rounded once, as PyTorch's CPU linear gives it. With eps the 16-bit spacing at 1, x = w = 1 + eps
// and b = eps / 2: x w + b = 1 + 2.5 eps + eps^2 rounds to 1 + 3 eps, while the product rounded
// first (1 + 2 eps) plus b is a tie that rounds to even, 1 + 2 eps. Small rows (the vector path)
// and 64 x 128 by 96 (AMX's, where the CPU has it); 2-D and 3-D inputs; the gradients as before.
TEST(Linalg, LinearIn16BitRoundsOnce) {
  for (DType dt : {kBFloat16, kFloat16}) {
    const double eps = dt == kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
    for (int64_t rows : {3, 64}) {
      const int64_t in = rows == 3 ? 32 : 128, out = rows == 3 ? 5 : 96;
      Tensor x = zeros({rows, in}, TensorOptions(dt)), w = zeros({out, in}, TensorOptions(dt));
      x.narrow(1, 0, 1).fill_(1.0 + eps);
      w.narrow(1, 0, 1).fill_(1.0 + eps);
      Tensor b = full({out}, eps / 2, TensorOptions(dt));
      for (const Tensor& input : {x, x.view({1, rows, in})}) {
        Tensor y = linear(input, w, b);
        ASSERT_EQ(y.dtype(), dt);
        EXPECT_TRUE(equal(y.to(kFloat32), full(y.sizes(), 1.0 + 3 * eps, TensorOptions(kFloat32))))
            << dtype_name(dt) << " rows " << rows << ": got " << y.to(kFloat32).flatten().narrow(0, 0, 1).item();
      }
    }
    // Gradients: the fused node's, against float32's on values exact in 16 bits.
    Tensor x = input({4, 6}, -1, 1, 11), w = input({3, 6}, -1, 1, 12), b = input({3}, -1, 1, 13);
    Tensor x16 = x.detach().to(dt).requires_grad_(), w16 = w.detach().to(dt).requires_grad_(),
           b16 = b.detach().to(dt).requires_grad_();
    Tensor x32 = x16.detach().to(kFloat32).requires_grad_(), w32 = w16.detach().to(kFloat32).requires_grad_(),
           b32 = b16.detach().to(kFloat32).requires_grad_();
    linear(x16, w16, b16).sum().backward();
    linear(x32, w32, b32).sum().backward();
    EXPECT_TRUE(all_close(x16.grad().to(kFloat32), x32.grad(), 0.02, 0.02)) << dtype_name(dt);
    EXPECT_TRUE(all_close(w16.grad().to(kFloat32), w32.grad(), 0.02, 0.02)) << dtype_name(dt);
    EXPECT_TRUE(all_close(b16.grad().to(kFloat32), b32.grad(), 0.0, 0.0)) << dtype_name(dt);
  }
}

// A gradient comes in its input's layout, so what flows back through Linear's t(weight) reaches
// the weight contiguous, and the leaf keeps it as it is rather than copying it.
TEST(Linalg, MmGradientsFollowTheInputsLayout) {
  Tensor w = input({4, 3}, -1, 1, 1);
  Tensor x = input({5, 3}, -1, 1, 2);
  Tensor reached;
  w.register_hook([&](const Tensor& g) -> std::optional<Tensor> {
    reached = g;
    return std::nullopt;
  });
  mm(x, w.t()).sum().backward();
  ASSERT_TRUE(reached.defined());
  EXPECT_TRUE(reached.is_contiguous()) << shape_str(reached.strides());
  EXPECT_TRUE(w.grad().is_contiguous());
  EXPECT_TRUE(x.grad().is_contiguous());
}

TEST(Linalg, MmWithOneConstantOperand) {
  Tensor w = input({3, 4}).detach();
  EXPECT_TRUE(gradcheck([&](In in) { return mm(in[0], w); }, {input({2, 3})}));
  EXPECT_TRUE(gradcheck([&](In in) { return mm(w.t(), in[0]); }, {input({3, 2})}));
}

TEST(Linalg, Bmm) {
  EXPECT_TRUE(
      gradcheck([](In in) { return bmm(in[0], in[1]); }, {input({2, 2, 3}, -1, 1, 1), input({2, 3, 4}, -1, 1, 2)}));
  EXPECT_TRUE(gradcheck([](In in) { return bmm(in[0], in[1]); },
                        {strided_input({2, 2, 3}, -1, 1, 1), strided_input({2, 3, 4}, -1, 1, 2)}));
}

TEST(Linalg, MatmulShapes) {
  std::vector<std::pair<Shape, Shape>> cases = {
      {{3}, {3}},          {{3}, {3, 4}},          {{2, 3}, {3}},          {{2, 3}, {3, 4}},
      {{2, 2, 3}, {3, 4}}, {{2, 2, 3}, {3}},       {{3}, {2, 3, 4}},       {{2, 3}, {2, 3, 4}},
      {{2, 2, 3}, {2, 3, 4}}, {{2, 1, 2, 3}, {3, 3, 2}},
  };
  for (auto& [sa, sb] : cases) {
    Tensor a = input(sa, -1, 1, 1), b = input(sb, -1, 1, 2);
    EXPECT_TRUE(gradcheck([](In in) { return matmul(in[0], in[1]); }, {a, b}))
        << shape_str(sa) << " @ " << shape_str(sb);
    // The recorded composition computes the same values as the raw op.
    EXPECT_TRUE(all_close(matmul(a, b), raw::matmul(a.detach(), b.detach()), 1e-12, 1e-12))
        << shape_str(sa) << " @ " << shape_str(sb);
  }
}

TEST(Linalg, MatmulErrors) {
  Tensor a = input({2, 3}), b = input({4, 2}), s = input({});
  EXPECT_TRUE(testing::throws_with([&] { matmul(s, a); }, "matmul: both arguments need to be at least 1-D"));
  EXPECT_TRUE(testing::throws_with([&] { matmul(input({2, 2, 3}), input({2, 4, 2})); }, "matmul"));
  EXPECT_TRUE(testing::throws_with([&] { matmul(a, b); }, "mm"));
}

TEST(Linalg, TensorMembers) {
  Tensor a = input({2, 3}, -1, 1, 1), b = input({3, 4}, -1, 1, 2);
  EXPECT_TRUE(gradcheck([](In in) { return in[0].matmul(in[1]); }, {a, b}));
  EXPECT_TRUE(gradcheck([](In in) { return in[0].mm(in[1]); }, {a, b}));
  EXPECT_TRUE(gradcheck([](In in) { return in[0].bmm(in[1]); }, {input({1, 2, 3}), input({1, 3, 2}, -1, 1, 3)}));
}

}  // namespace
}  // namespace colony
