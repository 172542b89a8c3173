// Tensor::index and Tensor::index_put_ (autograd/indexing.cc): shapes and values as PyTorch's
// x[...] gives them (golden shapes from torch 2.x, by indexing_test.py beside this file), views
// where PyTorch returns views, gradients, in-place writes recorded by autograd, and errors.
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using namespace indexing;  // NOLINT: Slice, None, Ellipsis, as libtorch code writes them
using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::throws_with;
using testing::values;
using In = const std::vector<Tensor>&;

Tensor iota(const Shape& shape) {
  return raw::reshape(raw::arange(0, static_cast<double>(shape_numel(shape)), 1, TensorOptions(kFloat64)), shape);
}

TEST(Index, BasicIndicesGiveViews) {
  Tensor x = iota({2, 3, 4});
  Tensor a = x.index({1});
  EXPECT_EQ(a.sizes(), (Shape{3, 4}));
  EXPECT_EQ(values(a)[0], 12.0);
  EXPECT_TRUE(a.storage().get() == x.storage().get());  // a view
  EXPECT_EQ(x.index({-1, -1, -1}).item(), 23.0);
  EXPECT_EQ(x.index({Slice(), 0}).sizes(), (Shape{2, 4}));
  EXPECT_EQ(x.index({Ellipsis, 1}).sizes(), (Shape{2, 3}));
  EXPECT_EQ(x.index({"...", 1}).sizes(), (Shape{2, 3}));
  EXPECT_EQ(x.index({None, 0, None}).sizes(), (Shape{1, 1, 3, 4}));
  EXPECT_EQ(x.index({0, Ellipsis, None}).sizes(), (Shape{3, 4, 1}));
  // Python slices: t[-3:], t[::2], t[8:2], t[-100:100] of arange(10).
  Tensor t = iota({10});
  EXPECT_EQ(values(t.index({Slice(-3, None)})), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(values(t.index({Slice(None, None, 2)})), (std::vector<double>{0, 2, 4, 6, 8}));
  EXPECT_EQ(t.index({Slice(8, 2)}).numel(), 0);
  EXPECT_EQ(t.index({Slice(-100, 100)}).numel(), 10);
  EXPECT_EQ(values(x.index({1, Slice(1, 3), Slice(None, None, 3)})), (std::vector<double>{16, 19, 20, 23}));
}

TEST(Index, IndexTensorGathersAlongItsDim) {
  Tensor x = iota({2, 3, 4});
  Tensor idx = raw::tensor({{0, 1}, {2, 2}}, kInt64);
  // torch: arange(24).reshape(2, 3, 4)[..., None, 1:3, idx].shape == (2, 1, 2, 2, 2)
  EXPECT_EQ(x.index({Ellipsis, None, Slice(1, 3), idx}).sizes(), (Shape{2, 1, 2, 2, 2}));
  Tensor r = x.index({Slice(), raw::tensor({2, -3}, kInt64)});  // negative positions count from the end
  EXPECT_EQ(r.sizes(), (Shape{2, 2, 4}));
  EXPECT_EQ(values(r)[0], 8.0);
  EXPECT_EQ(values(r)[4], 0.0);
  EXPECT_EQ(x.index({0, raw::scalar_tensor(2.0, kInt64)}).sizes(), (Shape{4}));  // a 0-d index drops the dim
  EXPECT_EQ(x.index({raw::tensor({1}, kInt32)}).sizes(), (Shape{1, 3, 4}));
}

TEST(Index, Gradients) {
  Tensor idx = raw::tensor({2, 0, 2}, kInt64);
  EXPECT_TRUE(gradcheck([](In in) { return in[0].index({1, Slice(None, None, 2)}); }, {input({3, 4})}));
  EXPECT_TRUE(gradcheck([](In in) { return in[0].index({None, Ellipsis, -1}); }, {input({3, 4})}));
  EXPECT_TRUE(gradcheck([&](In in) { return in[0].index({Slice(1, None), idx}); }, {input({3, 4})}));
}

TEST(Index, Errors) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(throws_with([&] { x.index({0, 3}); }, "index: index 3 is out of range for dimension 1 with size 3 (expected -3 <= index < 3)"));
  EXPECT_TRUE(throws_with([&] { x.index({-3}); }, "index -3 is out of range for dimension 0 with size 2"));
  EXPECT_TRUE(throws_with([&] { x.index({Ellipsis, raw::tensor({0, 5}, kInt64)}); },
                          "index: index 5 is out of range for dimension 1 with size 3"));
  EXPECT_TRUE(throws_with([&] { x.index({0, 0, 0}); }, "too many indices for a tensor of dimension 2 (got 3)"));
  EXPECT_TRUE(throws_with([&] { x.index({Ellipsis, Ellipsis}); }, "a single ellipsis"));
  EXPECT_TRUE(throws_with([&] { x.index({Slice(None, None, -1)}); }, "slice step must be positive, got -1 for dimension 0"));
  EXPECT_TRUE(throws_with([&] { x.index({raw::tensor({1, 0, 1}, kBool)}); },
                          "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [2, 3] at index 0"));
  EXPECT_TRUE(throws_with([&] { x.index({Slice(), raw::tensor({1, 0}, kBool)}); },
                          "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [2, 3] at index 1"));
  EXPECT_TRUE(throws_with([&] { x.index({raw::zeros({2, 3, 4}, kBool)}); }, "too many indices for a tensor of dimension 2 (got 3)"));
  EXPECT_TRUE(throws_with([&] { x.index({raw::tensor({1, 0}, kFloat32)}); }, "index tensors must be int64, int32 or bool, got float32"));
  EXPECT_TRUE(throws_with([&] { x.index({raw::tensor({0}, kInt64), raw::tensor({0}, kInt64)}); }, "one is supported"));
  EXPECT_TRUE(throws_with([&] { x.index({"..x"}); }, "the only string index is \"...\""));
}

// x[mask] as torch: the mask covers as many dims as it has, which become one dim of its true
// elements in row-major order (indexing_test.py prints torch's results).
TEST(Index, BoolMasksSelectAsPyTorch) {
  Tensor x = iota({3, 4});
  Tensor r = x.index({x > 5.0});  // x[x > 5]
  EXPECT_EQ(r.sizes(), (Shape{6}));
  EXPECT_EQ(values(r), (std::vector<double>{6, 7, 8, 9, 10, 11}));
  Tensor c = x.index({Slice(), raw::tensor({1, 0, 1, 0}, kBool)});  // x[:, [True, False, True, False]]
  EXPECT_EQ(values(c), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(c.sizes(), (Shape{3, 2}));
  Tensor y = iota({2, 3, 4});
  Tensor m = raw::tensor({{1, 0, 1, 0}, {0, 0, 0, 1}, {1, 1, 0, 0}}, kBool);
  Tensor ym = y.index({Slice(), m});  // y[:, m]: [2, 5]
  EXPECT_EQ(ym.sizes(), (Shape{2, 5}));
  EXPECT_EQ(values(ym), (std::vector<double>{0, 2, 7, 8, 9, 12, 14, 19, 20, 21}));
  EXPECT_EQ(x.index({raw::zeros({3}, kBool)}).sizes(), (Shape{0, 4}));  // nothing selected
  EXPECT_EQ(values(x.t().index({x.t() > 8.0})), (std::vector<double>{9, 10, 11}));  // a transposed view
  EXPECT_TRUE(gradcheck([&](In in) { return in[0].index({Slice(), m}); }, {input({2, 3, 4})}));
}

TEST(IndexPut, BoolMasksWriteAsPyTorch) {
  Tensor x = iota({2, 3});
  x.index_put_({x.remainder(2.0) == 0.0}, -1.0);  // x[x % 2 == 0] = -1
  EXPECT_EQ(values(x), (std::vector<double>{-1, 1, -1, 3, -1, 5}));
  Tensor y = iota({3, 4});
  y.index_put_({y > 5.0}, raw::tensor({1, 2, 3, 4, 5, 6}));  // y[y > 5] = [1, ..., 6]
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 6}));
  Tensor z = iota({2, 3, 4});
  Tensor m = raw::tensor({{1, 0, 1, 0}, {0, 0, 0, 1}, {1, 1, 0, 0}}, kBool);
  z.index_put_({Slice(), m}, raw::tensor({-1, -2, -3, -4, -5}));  // z[:, m] = [-1, ..., -5]
  EXPECT_EQ(values(z), (std::vector<double>{-1, 1,  -2, 3,  4,  5,  6,  -3, -4, -5, 10, 11,
                                            -1, 13, -2, 15, 16, 17, 18, -3, -4, -5, 22, 23}));
  Tensor a = iota({3});
  a.index_put_({raw::tensor({1, 0, 1}, kBool)}, raw::tensor({5, 6}), /*accumulate=*/true);
  EXPECT_EQ(values(a), (std::vector<double>{5, 1, 8}));
  EXPECT_TRUE(throws_with([&] { iota({2, 3}).index_put_({raw::ones({2, 3}, kBool)}, raw::zeros({5})); },
                          "index_put_: value of shape [5] cannot be broadcast to the indexed shape [6]"));
  Tensor t = iota({2, 3}).t();  // a 2-d mask over a transposed view cannot be flattened in place
  EXPECT_TRUE(throws_with([&] { t.index_put_({raw::ones({3, 2}, kBool)}, 0.0); }, "make the tensor contiguous first"));
  EXPECT_TRUE(gradcheck(
      [&](In in) {
        Tensor w = in[0] * 1.0;
        w.index_put_({Slice(), m}, in[1]);
        return w;
      },
      {input({2, 3, 4}), input({5}, -1, 1, 5)}));
}

// Without accumulate, an index naming a row twice leaves the last write there (torch's CPU
// result), never the sum of the writes: y[[0, 0]] = 1 is 1.
TEST(IndexPut, DuplicateIndicesLastWriteWins) {
  Tensor y = raw::zeros({4}, kFloat64);
  y.index_put_({raw::tensor({1, 3, 1, 1}, kInt64)}, raw::tensor({1, 2, 3, 4}));
  EXPECT_EQ(values(y), (std::vector<double>{0, 4, 0, 2}));
  Tensor z = raw::zeros({3}, kFloat64);
  z.index_put_({raw::tensor({0, 0}, kInt64)}, 1.0);
  EXPECT_EQ(values(z), (std::vector<double>{1, 0, 0}));
  Tensor r = raw::zeros({3, 2}, kFloat64);
  r.index_put_({raw::tensor({2, 0, 2}, kInt64)}, raw::tensor({{1, 2}, {3, 4}, {5, 6}}));
  EXPECT_EQ(values(r), (std::vector<double>{3, 4, 0, 0, 5, 6}));
  Tensor c = raw::zeros({2, 3}, kFloat64);  // along dim 1, the value broadcast
  c.index_put_({Slice(), raw::tensor({1, 1}, kInt64)}, raw::tensor({{7, 8}}));
  EXPECT_EQ(values(c), (std::vector<double>{0, 8, 0, 0, 8, 0}));
  // The gradient is the true one: only the write that stays receives any (torch also gives the
  // overwritten duplicates the gradient of their row).
  Tensor x = input({3}), v = input({3}, -1, 1, 7);
  Tensor w = x * 1.0;
  w.index_put_({raw::tensor({0, 0, 1}, kInt64)}, v);
  (w * raw::tensor({1, 10, 100}, kFloat64)).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 0, 100}));
  EXPECT_EQ(values(v.grad()), (std::vector<double>{0, 1, 10}));
  // accumulate still sums every duplicate.
  Tensor s = raw::zeros({3}, kFloat64);
  s.index_put_({raw::tensor({0, 0}, kInt64)}, raw::tensor({1, 2}), /*accumulate=*/true);
  EXPECT_EQ(values(s), (std::vector<double>{3, 0, 0}));
}

// The duplicate-index and bool-mask writes and reads on CUDA give the CPU's results.
std::vector<Tensor> mask_and_duplicate_cases(Device dev) {
  const TensorOptions f64 = TensorOptions(kFloat64).device(dev);
  std::vector<Tensor> out;
  Tensor y = raw::zeros({4}, f64);
  y.index_put_({raw::to(raw::tensor({1, 3, 1, 1}, kInt64), dev, kInt64)}, raw::to(raw::tensor({1, 2, 3, 4}), dev, kFloat64));
  out.push_back(y);
  Tensor r = raw::zeros({3, 2}, f64);
  r.index_put_({Slice(), raw::to(raw::tensor({1, 1}, kInt64), dev, kInt64)}, raw::to(raw::tensor({{7, 8}}), dev, kFloat64));
  out.push_back(r);
  Tensor x = raw::to(iota({2, 3, 4}), dev, kFloat64);
  Tensor m = raw::to(raw::tensor({{1, 0, 1, 0}, {0, 0, 0, 1}, {1, 1, 0, 0}}, kBool), dev, kBool);
  out.push_back(x.index({Slice(), m}));
  out.push_back(x.index({x > 13.0}));
  x.index_put_({Slice(), m}, raw::to(raw::tensor({-1, -2, -3, -4, -5}), dev, kFloat64));
  out.push_back(x);
  x.index_put_({x > 13.0}, 0.0);
  out.push_back(x);
  return out;
}

TEST(IndexPut, MasksAndDuplicatesMatchCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  std::vector<Tensor> cpu = mask_and_duplicate_cases(kCPU), gpu = mask_and_duplicate_cases(Device::cuda(0));
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_EQ(gpu[i].sizes(), cpu[i].sizes()) << "case " << i;
    EXPECT_EQ(values(raw::to(gpu[i], kCPU, kFloat64)), values(cpu[i])) << "case " << i;
  }
}

TEST(IndexPut, SliceAssignmentAsPyTorch) {
  Tensor x = iota({3, 4});
  x.index_put_({Slice(), 0}, -1.0);  // x[:, 0] = -1
  x.index_put_({2}, raw::tensor({10, 11, 12, 13}));  // x[2] = [10, 11, 12, 13]
  x.index_put_({0, Slice(2, None)}, raw::tensor({7}, kInt64));  // broadcast and cast
  EXPECT_EQ(values(x), (std::vector<double>{-1, 1, 7, 7, -1, 5, 6, 7, 10, 11, 12, 13}));
  Tensor y = iota({4, 2});
  y.index_put_({raw::tensor({3, -4}, kInt64)}, raw::tensor({{5, 6}, {8, 9}}));  // y[[3, -4]] = ...
  EXPECT_EQ(values(y), (std::vector<double>{8, 9, 2, 3, 4, 5, 5, 6}));
  EXPECT_TRUE(throws_with([&] { x.index_put_({0}, raw::zeros({3})); },
                          "index_put_: value of shape [3] cannot be broadcast to the indexed shape [4]"));
  EXPECT_TRUE(throws_with([&] { x.index_put_({5}, 0.0); }, "index_put_: index 5 is out of range for dimension 0 with size 3"));
}

// index_put_ with accumulate and nothing to record adds the rows into the target in place, each
// element's additions in index order: on a contiguous target and on a strided view (every other
// column), with int64 and int32 indices and a broadcast value; and in torch's order, bit for bit:
// float32 1 + 1e8 - 1e8 is 0 (torch 2.15 gives tensor([0., 5.]); summing the repeats first gave 1).
TEST(IndexPut, AccumulateWithoutGradAddsInPlaceInIndexOrder) {
  for (DType index_dtype : {kInt64, kInt32}) {
    Tensor x = iota({4, 6});
    const Tensor rows = raw::tensor({3, 1, 3, -4}, index_dtype);  // row 3 twice, -4 is row 0
    Tensor v = raw::reshape(raw::arange(1, 25, 1, TensorOptions(kFloat64)), {4, 6});
    x.index_put_({rows}, v, /*accumulate=*/true);
    std::vector<double> want = values(iota({4, 6}));
    const int64_t r[4] = {3, 1, 3, 0};
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t c = 0; c < 6; ++c) want[r[j] * 6 + c] += values(v)[j * 6 + c];
    EXPECT_EQ(values(x), want) << dtype_name(index_dtype);

    Tensor y = iota({4, 6});
    Tensor view = y.index({Slice(), Slice(None, None, 2)});  // [4, 3], strided
    view.index_put_({raw::tensor({2, 2}, index_dtype)}, raw::tensor({1.0, 2.0, 3.0}, kFloat64), true);
    std::vector<double> want_y = values(iota({4, 6}));
    for (int64_t c = 0; c < 3; ++c) want_y[2 * 6 + 2 * c] += 2.0 * (1.0 + c);
    EXPECT_EQ(values(y), want_y) << dtype_name(index_dtype);

    Tensor f = raw::tensor({1.0, 5.0}, kFloat32);
    f.index_put_({raw::tensor({0, 0}, index_dtype)}, raw::tensor({1e8, -1e8}, kFloat32), true);
    EXPECT_EQ(values(f), (std::vector<double>{0.0, 5.0})) << dtype_name(index_dtype);
    // The same on a transposed (strided) target: y.t()[[0, 0]] += [[1e8, 1e8], [-1e8, -1e8]].
    Tensor g = raw::tensor({{1.0, 5.0}, {2.0, 3.0}}, kFloat32);
    Tensor gt = g.t();
    gt.index_put_({raw::tensor({0, 0}, index_dtype)}, raw::tensor({{1e8, 1e8}, {-1e8, -1e8}}, kFloat32), true);
    EXPECT_EQ(values(gt), (std::vector<double>{0.0, 0.0, 5.0, 3.0})) << dtype_name(index_dtype);
  }
}

TEST(IndexPut, RecordedByAutograd) {
  // y = x * 1 (not a leaf); y[1:, 0] = v; the gradient of x is zero where written, v's is the
  // written positions' incoming gradient summed over the broadcast.
  Tensor x = input({3, 2}), v = input({1}, -1, 1, 9);
  Tensor y = x * 1.0;
  y.index_put_({Slice(1, None), 0}, v);
  Tensor w = raw::reshape(raw::arange(1, 7, 1, TensorOptions(kFloat64)), {3, 2});
  (y * w).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({{1, 2}, {0, 4}, {0, 6}}, kFloat64)));
  EXPECT_TRUE(all_close(v.grad(), raw::tensor({3.0 + 5.0}, kFloat64)));
  // By finite differences, slices and an index tensor.
  EXPECT_TRUE(gradcheck(
      [](In in) {
        Tensor y = in[0] * 1.0;
        y.index_put_({Ellipsis, Slice(None, None, 2)}, in[1]);
        return y;
      },
      {input({3, 4}), input({3, 1}, -1, 1, 3)}));
  Tensor idx = raw::tensor({2, 0}, kInt64);
  EXPECT_TRUE(gradcheck(
      [&](In in) {
        Tensor y = in[0] * 1.0;
        y.index_put_({Slice(), idx}, in[1]);
        return y;
      },
      {input({2, 3}), input({2, 2}, -1, 1, 4)}));
  // As PyTorch, a leaf that requires grad cannot be written in place.
  Tensor leaf = input({3});
  EXPECT_TRUE(throws_with([&] { leaf.index_put_({0}, 1.0); }, "a view of a leaf Variable that requires grad"));
}

}  // namespace
}  // namespace colony
