// The differentiable Tensor members forward to the free functions (autograd/tensor_methods.cc):
// same values, and a recorded node of the same kind.
#include <functional>
#include <limits>
#include <string>

#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;

struct Case {
  std::string name;
  std::function<Tensor(const Tensor&)> member, free;
};

TEST(TensorMethods, MembersMatchFreeFunctions) {
  Tensor idx = raw::tensor({1, 0}, kInt64);
  Tensor gidx = raw::tensor({{0, 1, 2}, {2, 1, 0}}, kInt64);
  Tensor other = testing::input({3, 2}, -1, 1, 9);
  std::vector<Case> cases = {
      {"view", [](const Tensor& x) { return x.view({3, 2}); }, [](const Tensor& x) { return view(x, {3, 2}); }},
      {"reshape", [](const Tensor& x) { return x.reshape({6}); }, [](const Tensor& x) { return reshape(x, {6}); }},
      {"transpose", [](const Tensor& x) { return x.transpose(0, 1); }, [](const Tensor& x) { return transpose(x, 0, 1); }},
      {"t", [](const Tensor& x) { return x.t(); }, [](const Tensor& x) { return t(x); }},
      {"permute", [](const Tensor& x) { return x.permute({1, 0}); }, [](const Tensor& x) { return permute(x, {1, 0}); }},
      {"narrow", [](const Tensor& x) { return x.narrow(1, 1, 2); }, [](const Tensor& x) { return narrow(x, 1, 1, 2); }},
      {"slice", [](const Tensor& x) { return x.slice(1, 0, 3, 2); }, [](const Tensor& x) { return slice(x, 1, 0, 3, 2); }},
      {"select", [](const Tensor& x) { return x.select(0, 1); }, [](const Tensor& x) { return select(x, 0, 1); }},
      {"flatten", [](const Tensor& x) { return x.flatten(); }, [](const Tensor& x) { return flatten(x); }},
      {"squeeze", [](const Tensor& x) { return x.unsqueeze(0).squeeze(); }, [](const Tensor& x) { return squeeze(unsqueeze(x, 0)); }},
      {"squeeze_dim", [](const Tensor& x) { return x.unsqueeze(1).squeeze(1); }, [](const Tensor& x) { return squeeze(unsqueeze(x, 1), 1); }},
      {"expand", [](const Tensor& x) { return x.expand({2, 2, 3}); }, [](const Tensor& x) { return expand(x, {2, 2, 3}); }},
      {"contiguous", [](const Tensor& x) { return x.t().contiguous(); }, [](const Tensor& x) { return contiguous(t(x)); }},
      {"clone", [](const Tensor& x) { return x.clone(); }, [](const Tensor& x) { return clone(x); }},
      {"to", [](const Tensor& x) { return x.to(kFloat32); }, [](const Tensor& x) { return to(x, kCPU, kFloat32); }},
      {"to_device_dtype", [](const Tensor& x) { return x.to(kCPU, kFloat32); }, [](const Tensor& x) { return to(x, kCPU, kFloat32); }},
      {"neg", [](const Tensor& x) { return x.neg(); }, [](const Tensor& x) { return neg(x); }},
      {"abs", [](const Tensor& x) { return x.abs(); }, [](const Tensor& x) { return abs(x); }},
      {"exp", [](const Tensor& x) { return x.exp(); }, [](const Tensor& x) { return exp(x); }},
      {"log", [](const Tensor& x) { return x.abs().log(); }, [](const Tensor& x) { return log(abs(x)); }},
      {"sqrt", [](const Tensor& x) { return x.abs().sqrt(); }, [](const Tensor& x) { return sqrt(abs(x)); }},
      {"rsqrt", [](const Tensor& x) { return x.abs().rsqrt(); }, [](const Tensor& x) { return rsqrt(abs(x)); }},
      {"pow", [](const Tensor& x) { return x.pow(3.0); }, [](const Tensor& x) { return pow(x, 3.0); }},
      {"pow_tensor", [](const Tensor& x) { return x.abs().pow(x); }, [](const Tensor& x) { return pow(abs(x), x); }},
      {"clamp", [](const Tensor& x) { return x.clamp(-0.2, 0.2); }, [](const Tensor& x) { return clamp(x, -0.2, 0.2); }},
      {"relu", [](const Tensor& x) { return x.relu(); }, [](const Tensor& x) { return relu(x); }},
      {"sigmoid", [](const Tensor& x) { return x.sigmoid(); }, [](const Tensor& x) { return sigmoid(x); }},
      {"tanh", [](const Tensor& x) { return x.tanh(); }, [](const Tensor& x) { return tanh(x); }},
      {"sum", [](const Tensor& x) { return x.sum(); }, [](const Tensor& x) { return sum(x); }},
      {"sum_dims", [](const Tensor& x) { return x.sum({1}, true); }, [](const Tensor& x) { return sum(x, {1}, true); }},
      {"mean", [](const Tensor& x) { return x.mean(); }, [](const Tensor& x) { return mean(x); }},
      {"mean_dims", [](const Tensor& x) { return x.mean({0}); }, [](const Tensor& x) { return mean(x, {0}); }},
      {"var", [](const Tensor& x) { return x.var({1}, false); }, [](const Tensor& x) { return var(x, {1}, false); }},
      {"var_all", [](const Tensor& x) { return x.var(); }, [](const Tensor& x) { return var(x, {0, 1}); }},
      {"max", [](const Tensor& x) { return x.max(); }, [](const Tensor& x) { return max(x); }},
      {"min", [](const Tensor& x) { return x.min(); }, [](const Tensor& x) { return min(x); }},
      {"max_dim", [](const Tensor& x) { return x.max(1).first; }, [](const Tensor& x) { return max(x, 1).first; }},
      {"min_dim", [](const Tensor& x) { return x.min(0, true).first; }, [](const Tensor& x) { return min(x, 0, true).first; }},
      {"matmul", [&](const Tensor& x) { return x.matmul(other); }, [&](const Tensor& x) { return matmul(x, other); }},
      {"mm", [&](const Tensor& x) { return x.mm(other); }, [&](const Tensor& x) { return mm(x, other); }},
      {"softmax", [](const Tensor& x) { return x.softmax(1); }, [](const Tensor& x) { return softmax(x, 1); }},
      {"log_softmax", [](const Tensor& x) { return x.log_softmax(0); }, [](const Tensor& x) { return log_softmax(x, 0); }},
      {"index_select", [&](const Tensor& x) { return x.index_select(0, idx); }, [&](const Tensor& x) { return index_select(x, 0, idx); }},
      {"gather", [&](const Tensor& x) { return x.gather(1, gidx); }, [&](const Tensor& x) { return gather(x, 1, gidx); }},
      {"split", [](const Tensor& x) { return x.split(2, 1)[1]; }, [](const Tensor& x) { return split(x, 2, 1)[1]; }},
      {"split_with_sizes", [](const Tensor& x) { return x.split_with_sizes({1, 2}, 1)[1]; }, [](const Tensor& x) { return split_with_sizes(x, {1, 2}, 1)[1]; }},
      {"chunk", [](const Tensor& x) { return x.chunk(2, -1)[0]; }, [](const Tensor& x) { return chunk(x, 2, -1)[0]; }},
      {"sin", [](const Tensor& x) { return x.sin(); }, [](const Tensor& x) { return sin(x); }},
      {"cos", [](const Tensor& x) { return x.cos(); }, [](const Tensor& x) { return cos(x); }},
      {"log1p", [](const Tensor& x) { return x.abs().log1p(); }, [](const Tensor& x) { return log1p(abs(x)); }},
      {"expm1", [](const Tensor& x) { return x.expm1(); }, [](const Tensor& x) { return expm1(x); }},
      {"square", [](const Tensor& x) { return x.square(); }, [](const Tensor& x) { return square(x); }},
      {"reciprocal", [](const Tensor& x) { return (x.abs() + 1).reciprocal(); }, [](const Tensor& x) { return reciprocal(abs(x) + 1); }},
      {"sign", [](const Tensor& x) { return x.sign(); }, [](const Tensor& x) { return sign(x); }},
      {"floor", [](const Tensor& x) { return (x * 3).floor(); }, [](const Tensor& x) { return floor(x * 3); }},
      {"ceil", [](const Tensor& x) { return (x * 3).ceil(); }, [](const Tensor& x) { return ceil(x * 3); }},
      {"round", [](const Tensor& x) { return (x * 3).round(); }, [](const Tensor& x) { return round(x * 3); }},
      {"amax", [](const Tensor& x) { return x.amax({1}, true); }, [](const Tensor& x) { return amax(x, {1}, true); }},
      {"amin", [](const Tensor& x) { return x.amin(); }, [](const Tensor& x) { return amin(x); }},
      {"logsumexp", [](const Tensor& x) { return x.logsumexp({0}); }, [](const Tensor& x) { return logsumexp(x, {0}); }},
      {"outer", [](const Tensor& x) { return x.select(0, 0).outer(x.select(0, 1)); }, [](const Tensor& x) { return outer(select(x, 0, 0), select(x, 0, 1)); }},
      {"std", [](const Tensor& x) { return x.std({1}, false, true); }, [](const Tensor& x) { return std(x, {1}, false, true); }},
      {"std_all", [](const Tensor& x) { return x.std(); }, [](const Tensor& x) { return std(x, {0, 1}); }},
      {"norm", [](const Tensor& x) { return x.norm(3.0, {0}); }, [](const Tensor& x) { return norm(x, 3.0, {0}); }},
      {"flip", [](const Tensor& x) { return x.flip({0, -1}); }, [](const Tensor& x) { return flip(x, {0, -1}); }},
  };
  for (const Case& c : cases) {
    Tensor x = testing::input({2, 3});
    Tensor a = c.member(x), b = c.free(x);
    EXPECT_TRUE(all_close(a, b, 0, 0)) << c.name;
    ASSERT_TRUE(a.grad_fn() != nullptr) << c.name;
    EXPECT_EQ(a.grad_fn()->name(), b.grad_fn()->name()) << c.name;
    EXPECT_TRUE(testing::gradcheck([&](const std::vector<Tensor>& in) { return c.member(in[0]).to(kFloat64); },
                                   {x}, testing::GradcheckOptions{c.name.rfind("to", 0) == 0 ? 1e-3 : 1e-6})) << c.name;
  }
}

TEST(TensorMethods, BoolAndIndexMembersMatchFreeFunctions) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Tensor x = raw::tensor({{1.0, nan, 0.0}, {inf, -2.0, 0.0}}, kFloat64);
  for (auto [a, b] : std::vector<std::pair<Tensor, Tensor>>{{x.isnan(), isnan(x)},
                                                            {x.isinf(), isinf(x)},
                                                            {x.isfinite(), isfinite(x)},
                                                            {x.any({1}), any(x, {1})},
                                                            {x.all({0}, true), all(x, {0}, true)},
                                                            {x.argsort(1, true), argsort(x, 1, true)}}) {
    EXPECT_EQ(a.dtype(), b.dtype());
    EXPECT_TRUE(raw::equal(a, b));
    EXPECT_FALSE(a.requires_grad());
  }
}

TEST(TensorMethods, ArgmaxIsNotRecorded) {
  Tensor x = testing::input({2, 3});
  EXPECT_FALSE(x.argmax(1).requires_grad());
  EXPECT_FALSE(x.argmin(0).requires_grad());
  EXPECT_TRUE(all_close(x.argmin(1, true), argmin(x, 1, true), 0, 0));
}

TEST(TensorMethods, BackwardMember) {
  Tensor x = testing::input({3});
  x.pow(2.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::mul(x.detach(), 2.0)));
}

// The raw writes (copy_, fill_, zero_, random fills) are not recorded, so on a tensor inside the
// graph they are refused instead of giving silently wrong gradients; under NoGradGuard, and on
// tensors outside the graph, they work. The in-place math is recorded (tests/autograd/inplace_test.cc).
TEST(TensorMethods, RawWritesOnANonLeafInTheGraphAreRefusedWithTheWayOut) {
  Tensor x = testing::input({3});
  Tensor y = mul(x, 2.0);
  ASSERT_FALSE(y.is_leaf());
  const char* msg = "this raw write is not recorded by autograd";
  EXPECT_TRUE(testing::throws_with([&] { y.copy_(raw::zeros({3})); }, msg));
  EXPECT_TRUE(testing::throws_with([&] { y.uniform_(0.0, 1.0); }, msg));  // random fills: the same rule
  EXPECT_TRUE(testing::throws_with([&] { y.normal_(); }, "normal_: this raw write"));
  // Nothing was written, so the gradient is still right.
  y.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::full({3}, 2.0)));
  Tensor detached = y.detach();
  detached.fill_(3.0);  // outside the graph: allowed
  {
    NoGradGuard no_grad;
    Tensor z = mul(x, 2.0);
    z.zero_();  // built without grad: allowed
  }
}


// libtorch's t[i] (select(0, i), a view; t[tensor] is index) and torch's argmax() / argmin()
// without a dim (the flattened position): torch.tensor([[1, 5], [5, 2]]).argmax() is 1.
TEST(TensorMethods, SubscriptAndArgmaxWithoutDimAsLibtorch) {
  Tensor x = raw::reshape(raw::arange(0, 6, 1, TensorOptions(kFloat64)), {2, 3});
  Tensor row = x[1];
  EXPECT_EQ(row.sizes(), (Shape{3}));
  EXPECT_EQ(testing::values(row), (std::vector<double>{3, 4, 5}));
  EXPECT_TRUE(row.storage().get() == x.storage().get());  // a view, as torch's
  EXPECT_EQ(x[-1][0].item(), 3.0);
  EXPECT_EQ(testing::values(x[raw::tensor({1, 0}, kInt64)]), (std::vector<double>{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(testing::values(x[x > 3.0]), (std::vector<double>{4, 5}));
  Tensor ties = raw::tensor({{1, 5}, {5, 2}});
  EXPECT_EQ(ties.argmax().dim(), 0);
  EXPECT_EQ(ties.argmax().dtype(), kInt64);
  EXPECT_EQ(ties.argmax().item(), 1.0);  // the first of the tied maxima
  EXPECT_EQ(ties.argmin().item(), 0.0);
}

}  // namespace
}  // namespace colony
