// roll, unbind, movedim, unflatten, meshgrid, lerp, addcmul, addcdiv, nan_to_num and count_nonzero
// (autograd/compose.cc): values printed by torch 2.15 for the same inputs, gradchecks, errors.
#include <cmath>
#include <limits>

#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::throws_with;
using testing::values;
using In = const std::vector<Tensor>&;
using V = std::vector<double>;

Tensor x34() { return raw::reshape(raw::arange(0, 12, 1, kFloat32), {3, 4}); }

TEST(Compose, RollAsTorch) {
  // torch.roll(x, 1); torch.roll(x, (1, -1), (0, 1)); torch.roll(x, 5, 1) for x = arange(12).reshape(3, 4).
  EXPECT_EQ(values(roll(x34(), {1})), V({11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(values(roll(x34(), {1, -1}, {0, 1})), V({9, 10, 11, 8, 1, 2, 3, 0, 5, 6, 7, 4}));
  EXPECT_EQ(values(x34().roll({5}, {1})), V({3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10}));
  Tensor same = x34();
  Tensor rolled = roll(same, {4}, {1});  // a whole turn: equal values, a new tensor
  EXPECT_EQ(values(rolled), values(same));
  EXPECT_NE(rolled.data_ptr_raw(), same.data_ptr_raw());
  EXPECT_TRUE(gradcheck([](In in) { return roll(in[0], {2, -3}, {0, 1}); }, {input({3, 5})}));
  EXPECT_TRUE(throws_with([] { roll(x34(), {1, 2}, {0}); }, "shifts and dimensions must align. shifts: 2, dims: 1"));
}

TEST(Compose, UnbindMovedimUnflatten) {
  std::vector<Tensor> rows = x34().unbind(0);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(values(rows[2]), V({8, 9, 10, 11}));
  EXPECT_EQ(values(unbind(x34(), -1)[1]), V({1, 5, 9}));
  Tensor y = raw::reshape(raw::arange(0, 24, 1, kFloat32), {2, 3, 4});
  // torch.movedim(y, (0, 1), (2, 0)): [3, 4, 2] starting 0, 12, 1, 13, 2, 14, 3, 15.
  Tensor m = movedim(y, std::vector<int64_t>{0, 1}, std::vector<int64_t>{2, 0});
  EXPECT_EQ(m.sizes(), (Shape{3, 4, 2}));
  const V mv = values(m);
  EXPECT_EQ(V(mv.begin(), mv.begin() + 8), V({0, 12, 1, 13, 2, 14, 3, 15}));
  EXPECT_EQ(y.movedim(-1, 0).sizes(), (Shape{4, 2, 3}));
  EXPECT_EQ(unflatten(y, 2, {2, -1}).sizes(), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(y.unflatten(0, {1, 2}).sizes(), (Shape{1, 2, 3, 4}));
  EXPECT_TRUE(gradcheck([](In in) { return movedim(unflatten(in[0], 1, {2, 3}), 0, 2); }, {input({2, 6})}));
  EXPECT_TRUE(gradcheck([](In in) { return mul(unbind(in[0], 1)[0], unbind(in[0], 1)[2]); }, {input({4, 3})}));
  EXPECT_TRUE(throws_with([&] { unflatten(y, 2, {3, -1}); }, "don't multiply up to the size of dim 2 (4)"));
  EXPECT_TRUE(throws_with([&] { movedim(y, std::vector<int64_t>{0}, std::vector<int64_t>{1, 2}); },
                          "should contain the same number of dims"));
}

TEST(Compose, MeshgridIndexings) {
  Tensor a = raw::tensor({1.0, 2.0, 3.0}), b = raw::tensor({4.0, 5.0});
  std::vector<Tensor> ij = meshgrid({a, b});
  EXPECT_EQ(ij[0].sizes(), (Shape{3, 2}));
  EXPECT_EQ(values(ij[0]), V({1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(values(ij[1]), V({4, 5, 4, 5, 4, 5}));
  // torch.meshgrid(a, b, indexing="xy"): [2, 3], [1, 2, 3, 1, 2, 3] and [4, 4, 4, 5, 5, 5].
  std::vector<Tensor> xy = meshgrid({a, b}, "xy");
  EXPECT_EQ(xy[0].sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(xy[0]), V({1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(values(xy[1]), V({4, 4, 4, 5, 5, 5}));
  EXPECT_TRUE(throws_with([&] { meshgrid({a, b}, "yx"); }, "indexing must be \"ij\" or \"xy\""));
  EXPECT_TRUE(throws_with([&] { meshgrid({x34()}); }, "Expected 0D or 1D tensor"));
}

TEST(Compose, LerpAddcmulAddcdivAsTorch) {
  Tensor s = raw::tensor({1.0, 2.0, 3.0}, kFloat32), e = raw::tensor({5.0, -2.0, 3.5}, kFloat32);
  // torch.lerp(s, e, 0.3), (s, e, 0.75) and with weight tensor([0.1, 0.6, -1.0]), float32.
  EXPECT_TRUE(all_close(lerp(s, e, 0.3), raw::tensor({2.200000047683716, 0.7999999523162842, 3.1500000953674316}), 0, 0));
  EXPECT_EQ(values(s.lerp(e, 0.75)), V({4.0, -1.0, 3.375}));
  EXPECT_TRUE(all_close(lerp(s, e, raw::tensor({0.1, 0.6, -1.0}, kFloat32)),
                        raw::tensor({1.399999976158142, -0.40000009536743164, 2.5}), 0, 0));
  EXPECT_EQ(values(addcmul(s, e, e, 0.5)), V({13.5, 4.0, 9.125}));
  EXPECT_EQ(values(s.addcdiv(e, raw::tensor({2.0, 4.0, 0.5}, kFloat32), 2)), V({6.0, 1.0, 17.0}));
  EXPECT_TRUE(gradcheck([](In in) { return lerp(in[0], in[1], in[2]); }, {input({4}), input({4}, -1, 1, 8), input({4}, -2, 2, 9)}));
  EXPECT_TRUE(gradcheck([](In in) { return addcdiv(in[0], in[1], in[2], -0.7); }, {input({3}), input({3}), input({3}, 1, 2)}));
  EXPECT_TRUE(throws_with([] { addcdiv(raw::zeros({2}), raw::ones({2}, kInt64), raw::ones({2}, kInt64)); },
                          "Integer division with addcdiv is no longer supported"));
}

TEST(Compose, NanToNumAndCountNonzero) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Tensor n = raw::tensor({nan, inf, -inf, 1.5}, kFloat32);
  EXPECT_EQ(values(nan_to_num(n)), V({0.0, 3.4028234663852886e+38, -3.4028234663852886e+38, 1.5}));
  EXPECT_EQ(values(n.nan_to_num(2.0, 9.0)), V({2.0, 9.0, -3.4028234663852886e+38, 1.5}));
  EXPECT_EQ(values(nan_to_num(raw::to(n, kCPU, kFloat64))), V({0.0, 1.7976931348623157e+308, -1.7976931348623157e+308, 1.5}));
  // The gradient is 0 where an element was replaced.
  Tensor g = raw::tensor({nan, 2.0, inf}, kFloat64);
  g.requires_grad_(true);
  sum(mul(nan_to_num(g), 3.0)).backward();
  EXPECT_EQ(values(g.grad()), V({0.0, 3.0, 0.0}));
  // torch.count_nonzero([[0, 1, 2], [0, 0, 3]], dim=0) = [0, 1, 2].
  Tensor c = raw::tensor({0.0, 1.0, 2.0, 0.0, 0.0, 3.0});
  c = raw::reshape(c, {2, 3});
  EXPECT_EQ(values(count_nonzero(c, {0})), V({0, 1, 2}));
  EXPECT_EQ(c.count_nonzero().dtype(), kInt64);
  EXPECT_EQ(c.count_nonzero().item<int64_t>(), 3);
}

TEST(Compose, DiagAndTraceAsTorch) {
  Tensor v = raw::tensor({1.0, 2.0, 3.0});
  // torch.diag(tensor([1, 2, 3]), 1): 4 x 4, [0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0].
  EXPECT_EQ(values(diag(v, 1)), V({0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0}));
  EXPECT_EQ(values(diag(v, -1)), V({0, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0}));
  EXPECT_EQ(values(v.diag()), V({1, 0, 0, 0, 2, 0, 0, 0, 3}));
  Tensor m = x34();
  EXPECT_EQ(values(diag(m)), V({0, 5, 10}));
  EXPECT_EQ(values(m.diag(1)), V({1, 6, 11}));
  EXPECT_EQ(values(m.diag(-1)), V({4, 9}));
  EXPECT_EQ(m.trace().item<double>(), 15.0);
  EXPECT_EQ(raw::reshape(raw::arange(0, 4, 1, kInt64), {2, 2}).trace().item<int64_t>(), 3);
  EXPECT_TRUE(gradcheck([](In in) { return diag(in[0], -2); }, {input({3})}));
  EXPECT_TRUE(gradcheck([](In in) { return mul(in[0].trace(), diag(in[0], 1)); }, {input({3, 3})}));
  EXPECT_TRUE(throws_with([] { diag(raw::zeros({2, 2, 2})); }, "diag: Supports 1D or 2D tensors. Got 3D"));
  EXPECT_TRUE(throws_with([] { raw::zeros({3}).trace(); }, "trace: expected a matrix, but got tensor with dim 1"));
}

}  // namespace
}  // namespace colony
