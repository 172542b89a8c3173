// The differentiable in-place members: gradcheck (float64) of each, on tensors inside the graph,
// through views and slices, and PyTorch's refusals and version-counter error.
#include <gtest/gtest.h>

#include "autograd/autograd.h"
#include "tests/autograd/gradcheck.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::throws_with;
using Ins = std::vector<Tensor>;
using testing::values;

std::vector<double> V(std::initializer_list<double> v) { return v; }

// y = x * 1 puts the write inside the graph (x itself is a leaf, which refuses in-place writes).
Tensor in_graph(const Tensor& x) { return mul(x, 1.0); }

TEST(Inplace, UnaryOpsInTheGraphPassGradcheck) {
  Tensor x = input({2, 3}, 0.1, 1.0);  // positive: log_ and sqrt_ are defined
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.relu_(); return y; }, {input({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.sigmoid_(); return y; }, {x}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.tanh_(); return y; }, {x}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.exp_(); return y; }, {x}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.log_(); return y; }, {x}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.sqrt_(); return y; }, {x}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.neg_(); return y; }, {x}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.abs_(); return y; }, {input({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.pow_(3.0); return y; }, {x}));
  EXPECT_TRUE(
      gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.clamp_(-0.5, 0.5); return y; }, {input({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.clamp_min_(0.0); return y; }, {input({4})}));
}

TEST(Inplace, ScalarArithmeticInTheGraphPassesGradcheck) {
  Tensor x = input({3});
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.add_(2.0); return y; }, {x}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.sub_(2.0); return y; }, {x}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.mul_(3.0); return y; }, {x}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.div_(4.0); return y; }, {x}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y *= 3.0; y += 1.0; return y; }, {x}));
}

TEST(Inplace, TensorArithmeticSendsGradientsToBothSides) {
  Tensor a = input({2, 3}, 0.5, 1.0, 1), b = input({2, 3}, 0.5, 1.0, 2), row = input({3}, 0.5, 1.0, 3);
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.add_(in[1], 0.5); return y; }, {a, b}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.sub_(in[1], 2.0); return y; }, {a, b}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.mul_(in[1]); return y; }, {a, b}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.div_(in[1]); return y; }, {a, b}));
  // other broadcasts into self
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y *= in[1]; return y; }, {a, row}));
  // x += residual with only the residual requiring grad: self starts outside the graph.
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = raw::ones({2, 3}, kFloat64); y += in[0]; return mul(y, y); },
                        {a}));
}

TEST(Inplace, ChainedWritesKeepTheOrder) {
  Tensor x = input({4});
  EXPECT_TRUE(gradcheck(
      [](const Ins& in) {
        Tensor y = in_graph(in[0]);
        y.mul_(in[0]).add_(1.0).tanh_().mul_(in[0]);  // each write builds on the one before
        return y;
      },
      {x}));
}

TEST(Inplace, WritesThroughViewsRebaseTheBase) {
  Tensor x = input({4, 3}, 0.5, 1.0, 1), w = input({2, 3}, 0.5, 1.0, 2), c = input({4}, 0.5, 1.0, 3);
  // a slice of rows
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.slice(0, 1, 3).mul_(in[1]); return y; },
                        {x, w}));
  // a strided slice, a column (select), and a transpose
  EXPECT_TRUE(gradcheck(
      [](const Ins& in) { Tensor y = in_graph(in[0]); y.slice(0, 0, 4, 2).sigmoid_(); return y; }, {x}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.select(1, 2).mul_(in[1]); return y; },
                        {x, c}));
  EXPECT_TRUE(gradcheck([](const Ins& in) { Tensor y = in_graph(in[0]); y.t().relu_(); return y; }, {input({4, 3})}));
  // a view of a view: the write reaches the root
  EXPECT_TRUE(gradcheck(
      [](const Ins& in) {
        Tensor y = in_graph(in[0]);
        y.view({12}).narrow(0, 2, 5).exp_();
        return y;
      },
      {x}));
  // the view itself is used after the write, and so is the base
  EXPECT_TRUE(gradcheck(
      [](const Ins& in) {
        Tensor y = in_graph(in[0]);
        Tensor v = y.select(0, 1);
        v.mul_(in[1]);
        return cat({mul(v, 2.0), y.sum({0})}, 0);
      },
      {x, c.narrow(0, 0, 3).detach().requires_grad_(true)}));
}

TEST(Inplace, WriteIntoAViewOfABufferOutsideTheGraph) {
  // b needs no gradient until w is written into its slice: then b's history is the write.
  Tensor w = input({2, 3});
  EXPECT_TRUE(gradcheck(
      [](const Ins& in) {
        Tensor b = raw::zeros({4, 3}, kFloat64);
        Tensor rows = b.narrow(0, 1, 2);
        rows.add_(in[0]);
        if (GradMode::is_enabled()) {  // gradcheck's probes run without grad
          EXPECT_TRUE(b.requires_grad());
        }
        return mul(b, b);
      },
      {w}));
}

TEST(Inplace, ViewsTakenBeforeAWriteToTheBaseSeeItsNewHistory) {
  Tensor x = input({2, 3});
  EXPECT_TRUE(gradcheck(
      [](const Ins& in) {
        Tensor y = in_graph(in[0]);
        Tensor first_row = y.select(0, 0);  // taken before the write
        y.mul_(3.0);
        return mul(first_row, first_row);  // d/dx = 2 * 9 x
      },
      {x}));
  EXPECT_TRUE(gradcheck(
      [](const Ins& in) {
        Tensor y = in_graph(in[0]);
        Tensor a = y.select(0, 0), b = y.select(0, 1);
        a.mul_(in[0].select(0, 1));  // written through one view, read through another and the base
        return cat({b, y.view({6})}, 0);
      },
      {x}));
}

TEST(Inplace, AWriteToATensorSomeNodeSavedIsReportedAtBackward) {
  Tensor x = input({3});
  Tensor y = x.exp();  // ExpBackward saves its output y
  y.add_(1.0);
  Tensor loss = y.sum();
  EXPECT_TRUE(throws_with(
      [&] { loss.backward(); },
      "one of the variables needed for gradient computation has been modified by an inplace operation"));
  // The out-of-place form, or a write into something no node saved, is fine.
  Tensor z = mul(x, 2.0);
  z.add_(1.0).mul_(2.0);
  z.sum().backward();
  EXPECT_TRUE(testing::all_close(x.grad(), raw::full({3}, 4.0, kFloat64)));
}

TEST(Inplace, LeavesAndViewsOfLeavesThatRequireGradRefuseWrites) {
  Tensor x = input({2, 3});
  EXPECT_TRUE(throws_with([&] { x.add_(1.0); }, "a leaf Variable that requires grad is being used in an in-place"));
  EXPECT_TRUE(throws_with([&] { x.relu_(); }, "relu_: a leaf Variable that requires grad"));
  EXPECT_TRUE(throws_with([&] { x.select(0, 1).mul_(2.0); },
                          "a view of a leaf Variable that requires grad is being used in an in-place operation."));
  {
    NoGradGuard no_grad;  // the optimizer's way
    x.add_(1.0);
    x.select(0, 1).mul_(2.0);
  }
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(x.grad_fn());
}

TEST(Inplace, OutputsOfSplitRefuseWrites) {
  Tensor x = input({4});
  std::vector<Tensor> parts = in_graph(x).split(2);
  EXPECT_TRUE(throws_with([&] { parts[0].mul_(2.0); }, "returns multiple views"));
}

TEST(Inplace, RawWritesStayRefusedInTheGraph) {
  Tensor y = in_graph(input({3}));
  EXPECT_TRUE(throws_with([&] { y.copy_(raw::zeros({3}, kFloat64)); }, "copy_: this raw write is not recorded"));
  EXPECT_TRUE(throws_with([&] { y.zero_(); }, "zero_: this raw write is not recorded"));
}

TEST(Inplace, ShapeMustNotGrowByBroadcasting) {
  Tensor y = in_graph(input({3}));
  Tensor big = input({2, 3});
  EXPECT_TRUE(throws_with([&] { y.add_(big); }, "doesn't match the broadcast shape"));
}

// The in-place members on tensors outside the graph: the raw arithmetic and its dtype rules.
TEST(InplaceRaw, ArithmeticMembers) {
  Tensor a = raw::tensor({1, 2, 3});
  Tensor b = raw::tensor({10, 20, 30});
  EXPECT_EQ(&a.add_(b), &a);
  EXPECT_EQ(values(a), V({11, 22, 33}));
  a.add_(b, -0.5);  // a - 0.5 b
  EXPECT_EQ(values(a), V({6, 12, 18}));
  a.add_(1.0);
  EXPECT_EQ(values(a), V({7, 13, 19}));
  a.sub_(raw::tensor({7}));
  EXPECT_EQ(values(a), V({0, 6, 12}));
  a.mul_(b);
  EXPECT_EQ(values(a), V({0, 120, 360}));
  a.mul_(0.5);
  EXPECT_EQ(values(a), V({0, 60, 180}));
  a.div_(b);
  EXPECT_EQ(values(a), V({0, 3, 6}));
  a.div_(4.0);
  EXPECT_EQ(values(a), V({0, 0.75, 1.5}));
  a.clamp_(0.5, 1.0);
  EXPECT_EQ(values(a), V({0.5, 0.75, 1.0}));
}

TEST(InplaceRaw, AddAlphaRules) {
  Tensor i = raw::tensor({1, 2}, kInt64);
  i.add_(raw::tensor({1, 1}, kInt64), 3);
  EXPECT_EQ(values(i), V({4, 5}));
  EXPECT_TRUE(throws_with([&] { i.add_(raw::tensor({1, 1}, kInt64), 0.5); },
                          "add_: for integral input tensors, argument alpha must not be a floating point number"));
  EXPECT_TRUE(throws_with([&] { i.add_(raw::tensor({1.0, 1.0}), 1.0); },
                          "add_: result type Float can't be cast to the desired output type Long"));
  // Fused: half(1) + 0.1 * half(3) in float, rounded once.
  Tensor h = raw::to(raw::tensor({1}), kCPU, kFloat16);
  h.add_(raw::to(raw::tensor({3}), kCPU, kFloat16), 0.1);
  EXPECT_EQ(values(h), V({1.2998046875}));  // half(1.3f): 1 + 307 / 1024
}

TEST(InplaceRaw, RefusedOnLeafRequiringGrad) {
  Tensor w = raw::ones({2});
  w.requires_grad_(true);
  const char* msg = "a leaf Variable that requires grad is being used in an in-place operation.";
  EXPECT_TRUE(throws_with([&] { w.add_(1.0); }, msg));
  EXPECT_TRUE(throws_with([&] { w.mul_(raw::ones({2})); }, msg));
  EXPECT_TRUE(throws_with([&] { w.fill_(0.0); }, msg));
  EXPECT_TRUE(throws_with([&] { w.zero_(); }, msg));
  EXPECT_TRUE(throws_with([&] { w.copy_(raw::zeros({2})); }, msg));
  EXPECT_TRUE(throws_with([&] { w.clamp_(0.0, 1.0); }, msg));
  EXPECT_TRUE(throws_with([&] { w.div_(2.0); }, "div_: a leaf Variable"));
  EXPECT_TRUE(throws_with([&] { w.uniform_(0.0, 1.0); }, "uniform_: a leaf Variable"));
  EXPECT_TRUE(throws_with([&] { w.bernoulli_(0.5); }, msg));
  EXPECT_EQ(values(w), V({1, 1}));
  {
    NoGradGuard no_grad;  // how optimizers update parameters
    uint32_t v0 = w.version();
    w.add_(raw::ones({2}), -0.25);
    w.mul_(2.0);
    EXPECT_GT(w.version(), v0);
  }
  EXPECT_EQ(values(w), V({1.5, 1.5}));
  EXPECT_TRUE(w.requires_grad());
  Tensor plain = raw::ones({2});  // no grad required: always allowed
  plain.sub_(raw::ones({2}));
  EXPECT_EQ(values(plain), V({0, 0}));
}

}  // namespace
}  // namespace colony
