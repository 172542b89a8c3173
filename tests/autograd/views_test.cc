// Gradient checks of the view ops (autograd/views.cc); views share storage with their input.
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::strided_input;
using testing::throws_with;
using In = const std::vector<Tensor>&;

::testing::AssertionResult check_view(const std::function<Tensor(const Tensor&)>& f, const Shape& shape,
                                      bool strided = true) {
  ::testing::AssertionResult r = gradcheck([&](In in) { return f(in[0]); }, {input(shape)});
  if (!r || !strided) return r;
  return gradcheck([&](In in) { return f(in[0]); }, {strided_input(shape)});
}

TEST(Views, View) {
  // view needs compatible strides, so only the dense input.
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.view({3, 2, 2}); }, {2, 6}, false));
  EXPECT_TRUE(check_view([](const Tensor& x) { return view(x, {-1}); }, {2, 3}, false));
}

TEST(Views, Reshape) {
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.reshape({3, 4}); }, {2, 6}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return reshape(x, {-1, 2}); }, {2, 3, 2}));
}

TEST(Views, TransposeAndT) {
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.transpose(0, 2); }, {2, 3, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return transpose(x, -1, 1); }, {2, 3, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.t(); }, {2, 3}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.t() * 2.0; }, {3}));
  EXPECT_TRUE(throws_with([] { input({2, 3, 4}).t(); }, "t: expects a tensor with <= 2 dimensions"));
}

TEST(Views, Permute) {
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.permute({2, 0, 1}); }, {2, 3, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return permute(x, {1, -1, 0}); }, {2, 3, 4}));
}

TEST(Views, NarrowSliceSelect) {
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.narrow(1, 1, 2); }, {3, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return narrow(x, -1, 0, 3); }, {3, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.slice(0, 0, 5, 2); }, {5, 2}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return slice(x, 1, -3, 100); }, {2, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.select(1, 2); }, {3, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return select(x, 0, -1); }, {3, 4}));
}

TEST(Views, Diagonal) {
  EXPECT_TRUE(check_view([](const Tensor& x) { return diagonal(x); }, {3, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return diagonal(x, 1, 0, 2); }, {2, 3, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return diagonal(x, -1, -1, 1); }, {2, 3, 4}));
  // Off the diagonal the gradient is zero; on it, the output's gradient.
  Tensor x = raw::zeros({2, 2}, TensorOptions(kFloat64).requires_grad(true));
  mul(diagonal(x), raw::tensor({3.0, 5.0}, kFloat64)).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({{3.0, 0.0}, {0.0, 5.0}}, kFloat64)));
}

TEST(Views, OverlappingSlicesSumTheirGradients) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, TensorOptions().requires_grad(true));
  (x.slice(0, 0, 3) + x.slice(0, 1, 4)).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({1.0, 2.0, 2.0, 1.0})));
}

TEST(Views, FlattenSqueezeUnsqueeze) {
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.flatten(); }, {2, 3, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.flatten(1); }, {2, 3, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return flatten(x, 0, 1); }, {2, 3, 4}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.squeeze(); }, {2, 1, 3}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.squeeze(1); }, {2, 1, 3}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return squeeze(x, 0); }, {2, 1, 3}));  // no-op squeeze
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.unsqueeze(0); }, {2, 3}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return unsqueeze(x, -1); }, {2, 3}));
}

TEST(Views, Expand) {
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.expand({2, 4, 3}); }, {4, 1}));
  EXPECT_TRUE(check_view([](const Tensor& x) { return x.expand({-1, 3}); }, {2, 1}));
  Tensor other = raw::zeros({3, 2}, kFloat64);
  EXPECT_TRUE(check_view([&](const Tensor& x) { return x.expand_as(other); }, {2}));
}

TEST(Views, ViewsShareStorageAndRecordHistory) {
  Tensor x = input({2, 3});
  for (Tensor v : {x.view({6}), x.transpose(0, 1), x.narrow(1, 0, 2), x.select(0, 1), x.unsqueeze(0),
                   x.expand({4, 2, 3}), x.permute({1, 0}), x.flatten()}) {
    EXPECT_EQ(v.storage(), x.storage());
    EXPECT_TRUE(v.requires_grad());
    EXPECT_FALSE(v.is_leaf());
  }
}

}  // namespace
}  // namespace colony
