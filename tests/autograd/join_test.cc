// Gradient checks of cat, stack, split, split_with_sizes and chunk (autograd/join.cc); repeat and
// repeat_interleave against torch's documented examples.
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::gradcheck_multi;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

TEST(Join, Cat) {
  for (int64_t dim : {0, 1, -1}) {
    EXPECT_TRUE(gradcheck([&](In in) { return cat({in[0], in[1], in[2]}, dim); },
                          {input({2, 3}, -1, 1, 1), strided_input({2, 3}, -1, 1, 2), input({2, 3}, -1, 1, 3)}));
  }
  EXPECT_TRUE(gradcheck([](In in) { return cat({in[0], in[1]}, 1); }, {input({2, 1}, -1, 1, 1), input({2, 4})}));
}

TEST(Join, CatWithConstantOperand) {
  Tensor c = input({2, 2}).detach();
  EXPECT_TRUE(gradcheck([&](In in) { return cat({c, in[0], c}, 0); }, {input({1, 2})}));
}

TEST(Join, Stack) {
  for (int64_t dim : {0, 1, 2, -1}) {
    EXPECT_TRUE(gradcheck([&](In in) { return stack({in[0], in[1]}, dim); },
                          {input({2, 3}, -1, 1, 1), strided_input({2, 3}, -1, 1, 2)}));
  }
}

TEST(Join, Split) {
  for (Tensor x : {input({5, 4}), strided_input({5, 4})}) {
    EXPECT_TRUE(gradcheck_multi([](In in) { return split(in[0], 2, 0); }, {x}));
    EXPECT_TRUE(gradcheck_multi([](In in) { return in[0].split(3, 1); }, {x}));
    EXPECT_TRUE(gradcheck_multi([](In in) { return split_with_sizes(in[0], {1, 4}, 0); }, {x}));
    EXPECT_TRUE(gradcheck_multi([](In in) { return chunk(in[0], 2, -1); }, {x}));
  }
}

TEST(Join, SplitWithSomePiecesUnused) {
  EXPECT_TRUE(gradcheck([](In in) { return split(in[0], 2, 0)[1] * 3.0; }, {input({5, 2})}));
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0, 5.0}, TensorOptions().requires_grad(true));
  std::vector<Tensor> parts = chunk(x, 3);
  ASSERT_EQ(parts.size(), 3u);
  (parts[0].sum() + parts[2].sum() * 2.0).backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({1.0, 1.0, 0.0, 0.0, 2.0})));
}

TEST(Join, SplitBackwardJoinsAdjacentGradientsInPlaceAndOthersByCopy) {
  // Gradients that are adjacent views of one buffer (as attention hands back dq, dk, dv) are the
  // input's gradient as they stand; views of a buffer in another order, or overlapping, are
  // concatenated. Either way the values are the pieces' gradients side by side.
  Tensor buffer = raw::reshape(raw::arange(0, 24, 1, TensorOptions(kFloat64)), {2, 3, 4});
  auto run = [&](int64_t first, int64_t second) {
    Tensor x = raw::zeros({2, 3, 4}, kFloat64);
    x.requires_grad_(true);
    std::vector<Tensor> parts = split(x, 2, 2);
    autograd::backward(parts, {raw::narrow(buffer, 2, first, 2), raw::narrow(buffer, 2, second, 2)});
    return x.grad();
  };
  EXPECT_TRUE(all_close(run(0, 2), buffer, 0.0, 0.0));
  Tensor swapped = raw::cat({raw::narrow(buffer, 2, 2, 2), raw::narrow(buffer, 2, 0, 2)}, 2);
  EXPECT_TRUE(all_close(run(2, 0), swapped, 0.0, 0.0));
  Tensor twice = raw::cat({raw::narrow(buffer, 2, 1, 2), raw::narrow(buffer, 2, 1, 2)}, 2);
  EXPECT_TRUE(all_close(run(1, 1), twice, 0.0, 0.0));
}

TEST(Join, RepeatAsTorch) {
  Tensor x = raw::tensor({1.0, 2.0, 3.0}, kFloat64);
  // torch: x.repeat(4, 2) is [4, 6] with every row 1 2 3 1 2 3; x.repeat(4, 2, 1) is [4, 2, 3].
  Tensor r = x.repeat({4, 2});
  EXPECT_EQ(r.sizes(), (Shape{4, 6}));
  std::vector<double> rows;
  for (int i = 0; i < 4; ++i) rows.insert(rows.end(), {1, 2, 3, 1, 2, 3});
  EXPECT_TRUE(testing::matches_values(r, rows));
  EXPECT_EQ(x.repeat({4, 2, 1}).sizes(), (Shape{4, 2, 3}));
  Tensor m = raw::tensor({{1.0, 2.0}, {3.0, 4.0}}, kFloat64);
  EXPECT_TRUE(testing::matches_values(m.repeat({2, 1}), {1, 2, 3, 4, 1, 2, 3, 4}));
  EXPECT_TRUE(testing::matches_values(m.repeat({1, 2}), {1, 2, 1, 2, 3, 4, 3, 4}));
  EXPECT_EQ(m.repeat({0, 3}).sizes(), (Shape{0, 6}));
  // Counts of 1 still give a new tensor, as torch's: writing into it leaves m alone.
  Tensor same = m.repeat({1, 1});
  raw::fill_(same, 9.0);
  EXPECT_TRUE(testing::matches_values(m, {1, 2, 3, 4}));
  EXPECT_TRUE(gradcheck([](In in) { return in[0].repeat({2, 1, 3}); }, {strided_input({2, 3})}));
  EXPECT_TRUE(testing::throws_with([&] { m.repeat({2}); }, "repeat: 1 repeats for a tensor of 2 dims [2, 2]"));
  EXPECT_TRUE(testing::throws_with([&] { m.repeat({2, -1}); }, "repeats must be >= 0"));
}

TEST(Join, RepeatInterleaveAsTorch) {
  // torch: repeat_interleave(tensor([1, 2, 3]), 2) = [1, 1, 2, 2, 3, 3]; of [[1, 2], [3, 4]] without
  // dim, the flattened tensor's; with dim=1 and 3: [[1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4]].
  Tensor x = raw::tensor({1.0, 2.0, 3.0}, kFloat64);
  EXPECT_TRUE(testing::matches_values(x.repeat_interleave(2), {1, 1, 2, 2, 3, 3}));
  Tensor y = raw::tensor({{1.0, 2.0}, {3.0, 4.0}}, kFloat64);
  EXPECT_TRUE(testing::matches_values(y.repeat_interleave(2), {1, 1, 2, 2, 3, 3, 4, 4}));
  Tensor by_col = repeat_interleave(y, 3, 1);
  EXPECT_EQ(by_col.sizes(), (Shape{2, 6}));
  EXPECT_TRUE(testing::matches_values(by_col, {1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}));
  EXPECT_TRUE(testing::matches_values(repeat_interleave(y, 2, -2), {1, 2, 1, 2, 3, 4, 3, 4}));
  Tensor once = y.repeat_interleave(1, 0);
  raw::fill_(once, 9.0);
  EXPECT_TRUE(testing::matches_values(y, {1, 2, 3, 4}));
  // Grouped-query attention's use: each of 2 key heads serves 3 query heads, in order.
  Tensor kv = input({1, 2, 4, 5});
  Tensor heads = kv.repeat_interleave(3, 1);
  EXPECT_EQ(heads.sizes(), (Shape{1, 6, 4, 5}));
  EXPECT_TRUE(all_close(heads.select(1, 4), kv.select(1, 1), 0, 0));
  EXPECT_TRUE(gradcheck([](In in) { return in[0].repeat_interleave(3, 1); }, {strided_input({2, 3})}));
  EXPECT_TRUE(gradcheck([](In in) { return in[0].repeat_interleave(2); }, {input({2, 3})}));
  EXPECT_TRUE(testing::throws_with([&] { y.repeat_interleave(-1, 0); }, "repeats must be >= 0, got -1"));
}

TEST(Join, FlipAsTorch) {
  // torch.flip(arange(6.).reshape(2, 3), [0, 1]) = [[5, 4, 3], [2, 1, 0]]; [1]: [[2, 1, 0], [5, 4, 3]].
  Tensor a = raw::reshape(raw::arange(6.0, TensorOptions(kFloat64)), {2, 3});
  EXPECT_TRUE(testing::matches_values(flip(a, {0, 1}), {5, 4, 3, 2, 1, 0}));
  EXPECT_TRUE(testing::matches_values(a.flip({-1}), {2, 1, 0, 5, 4, 3}));
  // A new tensor even when nothing moves (no dims, or a dim of size 1): writes do not reach a.
  for (Tensor same : {a.flip({}), raw::narrow(a, 0, 0, 1).flip({0})}) {
    raw::fill_(same, 9.0);
  }
  EXPECT_TRUE(testing::matches_values(a, {0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(gradcheck([](In in) { return flip(in[0], {0, 2}); }, {strided_input({2, 3, 4})}));
  EXPECT_TRUE(testing::throws_with([&] { a.flip({1, -1}); }, "appears more than once"));
  EXPECT_THROW(a.flip({2}), std::exception);
}

}  // namespace
}  // namespace colony
