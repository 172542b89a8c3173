// Indexing and joining (ops/index_ops.cc): values against naive loops or hand results, the
// adjoint identities autograd relies on (gather/scatter_add, index_select/index_add), strided
// inputs, bounds checks, and cat/stack/split/chunk shapes, views and errors.
#include <gtest/gtest.h>

#include <vector>

#include "ops/raw_ops.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;
using testing::values;

Tensor iota(const Shape& shape, DType dtype = kFloat32) {
  return raw::reshape(raw::arange(0, static_cast<double>(shape_numel(shape)), 1, TensorOptions(dtype)), shape);
}
Tensor randn(const Shape& shape, uint64_t seed, DType dtype = kFloat32) {
  Generator gen(seed);
  return raw::randn(shape, TensorOptions(dtype), &gen);
}
Tensor longs(const std::vector<int64_t>& v, const Shape& shape = {}) { return raw::from_vector(v, shape); }

double dot(const Tensor& a, const Tensor& b) {
  std::vector<double> va = values(a), vb = values(b);
  double s = 0;
  for (size_t i = 0; i < va.size(); ++i) s += va[i] * vb[i];
  return s;
}

TEST(IndexSelect, NDimensionalIndex) {
  Tensor x = iota({2, 3, 4});
  Tensor idx = raw::tensor({{0, 2}, {1, 1}, {2, 0}}, kInt64);  // [3, 2]
  Tensor y = raw::index_select(x, 1, idx);
  EXPECT_EQ(y.sizes(), (Shape{2, 3, 2, 4}));  // x.shape[:1] + index.shape + x.shape[2:]
  // Each [a, i, j, :] is x[a, idx[i][j], :].
  Tensor flat = raw::index_select(x, 1, raw::tensor({0, 2, 1, 1, 2, 0}, kInt64));
  EXPECT_TRUE(raw::equal(y, raw::reshape(flat, {2, 3, 2, 4})));
  EXPECT_EQ(raw::index_select(x, 0, raw::reshape(raw::tensor({1}, kInt64), {1, 1, 1})).sizes(), (Shape{1, 1, 1, 3, 4}));
  EXPECT_EQ(raw::index_select(x, -1, raw::zeros({0, 2}, kInt64)).sizes(), (Shape{2, 3, 0, 2}));
  EXPECT_TRUE(throws_with([&] { raw::index_select(x, 1, raw::tensor({{0, 3}}, kInt64)); },
                          "index_select: index 3 is out of range for dimension 1 with size 3"));
}

TEST(IndexSelect, RowsColumnsAndRepeats) {
  Tensor t = iota({4, 3});  // row r is [3r, 3r + 1, 3r + 2]
  Tensor rows = raw::index_select(t, 0, longs({2, 0, 2}));
  EXPECT_EQ(rows.sizes(), Shape({3, 3}));
  EXPECT_EQ(values(rows), std::vector<double>({6, 7, 8, 0, 1, 2, 6, 7, 8}));
  Tensor cols = raw::index_select(t, -1, raw::from_vector(std::vector<int32_t>{2, 1}));
  EXPECT_EQ(values(cols), std::vector<double>({2, 1, 5, 4, 8, 7, 11, 10}));
  // A transposed (non-contiguous) input and an int64 tensor.
  Tensor tt = raw::transpose(iota({3, 4}, kInt64), 0, 1);  // tt[i][j] = 4j + i
  EXPECT_EQ(values(raw::index_select(tt, 0, longs({3}))), std::vector<double>({3, 7, 11}));
  EXPECT_EQ(raw::index_select(t, 0, longs({})).sizes(), Shape({0, 3}));
}

TEST(IndexSelect, Errors) {
  Tensor t = iota({5, 2});
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { raw::index_select(t, 0, longs({1, 7})); },
                                             "index_select: index 7 is out of range for dimension 0 with size 5"));
  EXPECT_TRUE(throws_with([&] { raw::index_select(t, 1, longs({-1})); }, "index -1 is out of range for dimension 1"));
  EXPECT_TRUE(throws_with([&] { raw::index_select(t, 0, raw::tensor({1.0})); }, "index must be int64 or int32, got float32"));
  EXPECT_TRUE(throws_with([&] { raw::index_select(t, 2, longs({0})); }, "index_select: dim 2 out of range"));
}

TEST(IndexAdd, AccumulatesRepeatsAndIsIndexSelectsAdjoint) {
  Tensor src = raw::tensor({{1, 2}, {10, 20}, {100, 200}});
  Tensor out = raw::index_add({4, 2}, 0, longs({3, 0, 3}), src);
  EXPECT_EQ(values(out), std::vector<double>({10, 20, 0, 0, 0, 0, 101, 202}));
  // <index_select(x, idx), y> == <x, index_add(shape(x), idx, y)> along every dim.
  Tensor x = randn({4, 5, 6}, 1);
  for (int64_t dim : {0, 1, 2}) {
    Tensor i = dim == 0 ? longs({3, 0, 3, 1, 2, 3, 0}) : longs({4, 0, 4, 2, 1, 4, 3});
    Tensor sel = raw::index_select(x, dim, i);
    Tensor y = randn(sel.sizes(), 2 + dim);
    EXPECT_NEAR(dot(sel, y), dot(x, raw::index_add(x.sizes(), dim, i, y)), 1e-3) << "dim " << dim;
  }
  EXPECT_TRUE(throws_with([&] { raw::index_add({4, 2}, 0, longs({0, 1}), src); },
                          "index_add: src has shape [3, 2], expected [2, 2]"));
  EXPECT_TRUE(throws_with([&] { raw::index_add({4, 2}, 0, longs({0, 4, 1}), src); },
                          "index_add: index 4 is out of range for dimension 0 with size 4"));
}

TEST(Gather, MatchesNaiveAlongEachDim) {
  Tensor t = iota({3, 4});  // t[i][j] = 4i + j
  Tensor idx0 = longs({2, 0, 1, 1, 0, 0, 2, 2}, {2, 4});
  // out[i][j] = t[idx[i][j]][j]
  EXPECT_EQ(values(raw::gather(t, 0, idx0)), std::vector<double>({8, 1, 6, 7, 0, 1, 10, 11}));
  Tensor idx1 = longs({3, 3, 0, 1, 2, 2}, {3, 2});
  // out[i][j] = t[i][idx[i][j]]
  EXPECT_EQ(values(raw::gather(t, 1, idx1)), std::vector<double>({3, 3, 4, 5, 10, 10}));
  // An index smaller than the input in the other dims, on a transposed input.
  Tensor tt = raw::transpose(iota({4, 3}), 0, 1);  // tt[i][j] = 3j + i, shape [3, 4]
  Tensor small = longs({1, 3}, {1, 2});
  EXPECT_EQ(values(raw::gather(tt, 1, small)), std::vector<double>({3, 9}));
}

TEST(Gather, Errors) {
  Tensor t = iota({3, 4});
  EXPECT_TRUE(throws_with([&] { raw::gather(t, 1, longs({0, 4}, {1, 2})); },
                          "gather: index 4 is out of range for dimension 1 with size 4"));
  EXPECT_TRUE(throws_with([&] { raw::gather(t, 1, longs({0, 1})); }, "must have as many dimensions as the input"));
  EXPECT_TRUE(throws_with([&] { raw::gather(t, 1, longs({0, 0, 0, 0, 0}, {5, 1})); },
                          "gather: index shape [5, 1] is larger than input shape [3, 4] in dimension 0"));
  EXPECT_TRUE(throws_with([&] { raw::gather(t, 0, raw::from_vector(std::vector<int32_t>{0}, {1, 1})); },
                          "gather: index must be int64, got int32"));
}

TEST(ScatterAdd, AccumulatesAndIsGathersAdjoint) {
  Tensor idx = longs({0, 2, 0, 1, 1, 1}, {2, 3});
  Tensor src = raw::tensor({{1, 2, 3}, {4, 5, 6}});
  // dim 1: out[i][idx[i][j]] += src[i][j]
  Tensor out = raw::scatter_add({2, 3}, 1, idx, src);
  EXPECT_EQ(values(out), std::vector<double>({4, 0, 2, 0, 15, 0}));
  // dim 0: out[idx[i][j]][j] += src[i][j]
  Tensor out0 = raw::scatter_add({3, 3}, 0, idx, src);
  EXPECT_EQ(values(out0), std::vector<double>({1, 0, 3, 4, 5, 6, 0, 2, 0}));
  // <gather(x, idx), y> == <x, scatter_add(shape(x), idx, y)>
  Tensor x = randn({4, 5, 3}, 3);
  for (int64_t dim : {0, 1, 2}) {
    Shape is = {3, 4, 2};
    Generator gen(10 + dim);
    Tensor i = raw::randint(0, x.size(dim), is, TensorOptions(kInt64), &gen);
    Tensor y = randn(is, 20 + dim);
    EXPECT_NEAR(dot(raw::gather(x, dim, i), y), dot(x, raw::scatter_add(x.sizes(), dim, i, y)), 1e-4) << dim;
  }
  // src larger than index: only index's extent is read; a strided src.
  Tensor big = raw::transpose(iota({4, 3}), 0, 1);  // [3, 4]: big[i][j] = 3j + i
  Tensor r = raw::scatter_add({2, 2}, 1, longs({1, 1}, {1, 2}), big);
  EXPECT_EQ(values(r), std::vector<double>({0, 3, 0, 0}));
  EXPECT_TRUE(throws_with([&] { raw::scatter_add({2, 3}, 1, longs({3}, {1, 1}), src); },
                          "scatter_add: index 3 is out of range for dimension 1 with size 3"));
  EXPECT_TRUE(throws_with([&] { raw::scatter_add({2, 3}, 1, longs({0, 0, 0, 0}, {1, 4}), src); }, "no larger than src"));
}

TEST(ScatterAdd, IntegerAndHalf) {
  Tensor idx = longs({1, 1, 1});
  Tensor s = raw::from_vector(std::vector<int64_t>{5, 6, 7});
  EXPECT_EQ(values(raw::scatter_add({2}, 0, idx, s)), std::vector<double>({0, 18}));
  Tensor h = raw::to(raw::tensor({0.5, 0.25, 0.125}), kCPU, kFloat16);
  Tensor hs = raw::scatter_add({2}, 0, idx, h);
  EXPECT_EQ(hs.dtype(), kFloat16);
  EXPECT_EQ(values(hs), std::vector<double>({0, 0.875}));
}

// A [rows, cols] int64 index with values in [0, size), from a generator seeded with `seed`.
Tensor random_index(int64_t rows, int64_t cols, int64_t size, uint64_t seed) {
  Generator gen(seed);
  return raw::randint(0, size, {rows, cols}, TensorOptions(kInt64), &gen);
}

// gather and scatter_add along a dim where input, index and output are all dense (the last dim of
// contiguous tensors) take the CPU kernel's pointer path with one range check per run; rows of 37
// and 3 (not multiples of any vector width), several dtypes, against naive loops; each element's
// additions in index order, so the float sums are the sequential loop's bit for bit.
TEST(Gather, DenseRowsMatchNaiveForEachDtype) {
  const int64_t rows = 5, cols = 41;
  for (int64_t len : {int64_t{37}, int64_t{3}}) {
    Tensor idx = random_index(rows, len, cols, 7 + len);
    const std::vector<double> iv = values(idx);
    for (DType dtype : {kFloat32, kFloat64, kInt32, kInt64, kFloat16}) {
      Tensor x = raw::to(iota({rows, cols}), kCPU, dtype);
      std::vector<double> want(rows * len);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < len; ++j) want[r * len + j] = static_cast<double>(r * cols + iv[r * len + j]);
      Tensor y = raw::gather(x, 1, idx);
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_EQ(values(y), want) << dtype_name(dtype) << " len " << len;
    }
  }
}

TEST(Gather, OutOfRangeIndexInADenseOrStridedRun) {
  Tensor t = iota({3, 40});
  std::vector<int64_t> iv(3 * 37, 5);
  iv[1 * 37 + 29] = 40;  // past the end, in the middle of the second dense run
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { raw::gather(t, 1, longs(iv, {3, 37})); },
                                             "gather: index 40 is out of range for dimension 1 with size 40"));
  iv[1 * 37 + 29] = -1;  // negative: torch's gather refuses it too
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { raw::gather(t, 1, longs(iv, {3, 37})); },
                                             "gather: index -1 is out of range for dimension 1 with size 40"));
  // A strided index (transposed) falls back to the strided loop, which checks each element.
  Tensor strided = raw::transpose(longs(iv, {37, 3}), 0, 1);
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { raw::gather(t, 1, strided); },
                                             "gather: index -1 is out of range for dimension 1 with size 40"));
  // Along dim 0 (runs strided in x and y).
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { raw::gather(t, 0, longs({0, 3}, {2, 1})); },
                                             "gather: index 3 is out of range for dimension 0 with size 3"));
}

TEST(ScatterAdd, DenseRowsAddInIndexOrderBitForBit) {
  const int64_t rows = 4, len = 37, size = 5;  // many repeats per output element
  Tensor idx = random_index(rows, len, size, 3);
  const std::vector<double> iv = values(idx);
  for (DType dtype : {kFloat32, kFloat64}) {
    Tensor src = randn({rows, len}, 11, dtype);
    const std::vector<double> sv = values(src);
    Tensor out = raw::scatter_add({rows, size}, 1, idx, src);
    if (dtype == kFloat32) {
      std::vector<float> want(rows * size, 0.0f);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < len; ++j)
          want[r * size + static_cast<int64_t>(iv[r * len + j])] += static_cast<float>(sv[r * len + j]);
      const float* got = out.data_ptr<float>();
      for (int64_t i = 0; i < rows * size; ++i) EXPECT_EQ(got[i], want[i]) << i;
    } else {
      std::vector<double> want(rows * size, 0.0);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < len; ++j) want[r * size + static_cast<int64_t>(iv[r * len + j])] += sv[r * len + j];
      EXPECT_EQ(values(out), want);
    }
  }
  // Integers, and scatter_reduce's sum on the same path.
  Tensor ints = raw::from_vector(std::vector<int64_t>(rows * len, 3), {rows, len});
  Tensor counts = raw::scatter_add({rows, size}, 1, idx, ints);
  std::vector<double> want(rows * size, 0.0);
  for (int64_t i = 0; i < rows * len; ++i) want[(i / len) * size + static_cast<int64_t>(iv[i])] += 3;
  EXPECT_EQ(values(counts), want);
  EXPECT_EQ(values(raw::scatter_reduce(raw::zeros({rows, size}, TensorOptions(kInt64)), 1, idx, ints, raw::ScatterOp::Sum)),
            want);
  // A strided src (a transposed matrix) takes the strided loop: same sums as its contiguous copy.
  Tensor srct = raw::transpose(randn({len, rows}, 12), 0, 1);
  EXPECT_EQ(values(raw::scatter_add({rows, size}, 1, idx, srct)),
            values(raw::scatter_add({rows, size}, 1, idx, raw::contiguous(srct))));
  // Bounds, in a dense run and through scatter_reduce.
  std::vector<int64_t> bad(rows * len, 0);
  bad[2 * len + 36] = size;
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { raw::scatter_add({rows, size}, 1, longs(bad, {rows, len}), ints); },
                                             "scatter_add: index 5 is out of range for dimension 1 with size 5"));
  EXPECT_TRUE(throws_with<std::out_of_range>(
      [&] { raw::scatter_reduce(raw::zeros({rows, size}, TensorOptions(kInt64)), 1, longs(bad, {rows, len}), ints,
                                raw::ScatterOp::Sum); },
      "scatter: index 5 is out of range for dimension 1 with size 5"));
}

// raw::index_add_ adds into the tensor's own values, each element's additions in index order: the
// bits of old + src[0] + src[1] + ..., as torch's CPU index_add_ and index_put_(accumulate=True).
TEST(IndexAdd, InPlaceAddsToTheOldValuesInIndexOrder) {
  Tensor out = randn({6, 37}, 21);
  const std::vector<float> old(out.data_ptr<float>(), out.data_ptr<float>() + 6 * 37);
  Tensor src = randn({5, 37}, 22);
  const std::vector<int64_t> iv = {4, 1, 4, 4, 0};
  for (DType index_dtype : {kInt64, kInt32}) {
    Tensor o = raw::clone(out);
    raw::index_add_(o, 0, raw::to(longs(iv), kCPU, index_dtype), src);
    std::vector<float> want = old;
    for (size_t j = 0; j < iv.size(); ++j)
      for (int64_t c = 0; c < 37; ++c) want[iv[j] * 37 + c] += src.data_ptr<float>()[j * 37 + c];
    for (int64_t i = 0; i < 6 * 37; ++i) ASSERT_EQ(o.data_ptr<float>()[i], want[i]) << dtype_name(index_dtype) << " " << i;
  }
  Tensor strided = raw::transpose(raw::zeros({37, 6}), 0, 1);
  EXPECT_TRUE(throws_with([&] { raw::index_add_(strided, 0, longs(iv), src); },
                          "index_add_: expected a contiguous output of src's dtype and device"));
  Tensor o = raw::clone(out);
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { raw::index_add_(o, 0, longs({6}), raw::zeros({1, 37})); },
                                             "index_add: index 6 is out of range for dimension 0 with size 6"));
}

TEST(OneHot, ValuesInferenceAndErrors) {
  Tensor l = longs({2, 0, 1, 2}, {2, 2});
  Tensor oh = raw::one_hot(l);
  EXPECT_EQ(oh.sizes(), Shape({2, 2, 3}));
  EXPECT_EQ(oh.dtype(), kInt64);
  EXPECT_EQ(values(oh), std::vector<double>({0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(raw::one_hot(longs({1}), 4).sizes(), Shape({1, 4}));
  EXPECT_EQ(raw::one_hot(longs({}), 5).sizes(), Shape({0, 5}));
  EXPECT_TRUE(throws_with([] { raw::one_hot(longs({0, 3}), 3); }, "one_hot: class value 3 is out of range for num_classes 3"));
  EXPECT_TRUE(throws_with([] { raw::one_hot(longs({-1})); }, "one_hot: class values must be non-negative, got -1"));
  EXPECT_TRUE(throws_with([] { raw::one_hot(longs({})); }, "cannot infer the number of classes from an empty tensor"));
  EXPECT_TRUE(throws_with([] { raw::one_hot(raw::tensor({1.0})); }, "one_hot: expected int64 class indices, got float32"));
}

TEST(Cat, DimsPromotionAndLegacyEmpty) {
  Tensor a = iota({2, 2}), b = raw::add(iota({1, 2}), 10.0);
  Tensor r = raw::cat({a, b});
  EXPECT_EQ(r.sizes(), Shape({3, 2}));
  EXPECT_EQ(values(r), std::vector<double>({0, 1, 2, 3, 10, 11}));
  Tensor c = raw::cat({a, raw::transpose(iota({3, 2}), 0, 1)}, -1);  // [2, 2] ++ [2, 3]
  EXPECT_EQ(c.sizes(), Shape({2, 5}));
  EXPECT_EQ(values(c), std::vector<double>({0, 1, 0, 2, 4, 2, 3, 1, 3, 5}));
  Tensor mixed = raw::cat({iota({2}, kInt64), raw::tensor({0.5})});
  EXPECT_EQ(mixed.dtype(), kFloat32);
  EXPECT_EQ(values(mixed), std::vector<double>({0, 1, 0.5}));
  Tensor skipped = raw::cat({raw::zeros({0}), a, raw::zeros({0})}, 1);
  EXPECT_EQ(skipped.sizes(), Shape({2, 2}));
  EXPECT_EQ(raw::cat({raw::zeros({2, 0}), a}, 1).sizes(), Shape({2, 2}));
}

TEST(Cat, Errors) {
  EXPECT_TRUE(throws_with([] { raw::cat({}); }, "cat: expected a non-empty list of tensors"));
  EXPECT_TRUE(throws_with([] { raw::cat({raw::zeros({2, 3}), raw::zeros({3, 3})}, 1); },
                          "cat: sizes of tensors must match except in dimension 1: tensor 0 has shape [2, 3] and "
                          "tensor 1 has shape [3, 3]"));
  EXPECT_TRUE(throws_with([] { raw::cat({raw::zeros({2, 3}), raw::zeros({3})}); }, "tensor 1 has shape [3]"));
  EXPECT_TRUE(throws_with([] { raw::cat({raw::zeros({2}), raw::scalar_tensor(1)}); },
                          "cat: zero-dimensional tensor (at position 1) cannot be concatenated"));
  EXPECT_TRUE(throws_with([] { raw::cat({raw::zeros({2})}, 1); }, "cat: dim 1 out of range"));
}

TEST(Stack, NewDimEverywhere) {
  Tensor a = iota({2, 3}), b = raw::add(iota({2, 3}), 100.0);
  EXPECT_EQ(raw::stack({a, b}).sizes(), Shape({2, 2, 3}));
  Tensor s1 = raw::stack({a, b}, 1);
  EXPECT_EQ(s1.sizes(), Shape({2, 2, 3}));
  EXPECT_EQ(values(raw::select(s1, 0, 0)), std::vector<double>({0, 1, 2, 100, 101, 102}));
  Tensor last = raw::stack({a, b}, -1);
  EXPECT_EQ(last.sizes(), Shape({2, 3, 2}));
  EXPECT_EQ(values(raw::select(raw::select(last, 0, 1), 0, 2)), std::vector<double>({5, 105}));
  EXPECT_TRUE(throws_with([&] { raw::stack({a, iota({2, 4})}); },
                          "stack: expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 1"));
  EXPECT_TRUE(throws_with([&] { raw::stack({a}, 3); }, "stack: dim 3 out of range"));
}

TEST(Split, PiecesAreViews) {
  Tensor t = iota({5, 2});
  std::vector<Tensor> parts = raw::split(t, 2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].sizes(), Shape({2, 2}));
  EXPECT_EQ(parts[2].sizes(), Shape({1, 2}));
  EXPECT_EQ(values(parts[1]), std::vector<double>({4, 5, 6, 7}));
  EXPECT_EQ(parts[1].storage().get(), t.storage().get());
  EXPECT_EQ(parts[1].storage_offset(), 4);
  std::vector<Tensor> cols = raw::split(t, 1, -1);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(values(cols[1]), std::vector<double>({1, 3, 5, 7, 9}));
  EXPECT_EQ(raw::split(raw::zeros({0, 2}), 0).size(), 1u);
  EXPECT_TRUE(throws_with([&] { raw::split(t, 0); }, "split: split_size can only be 0 if dimension 0 has size 0, but it has size 5"));
  EXPECT_TRUE(throws_with([&] { raw::split(t, -1); }, "split: split_size must be non-negative, got -1"));
}

TEST(Split, WithSizesAndChunk) {
  Tensor t = iota({6});
  std::vector<Tensor> p = raw::split_with_sizes(t, {1, 0, 5});
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[1].sizes(), Shape({0}));
  EXPECT_EQ(values(p[2]), std::vector<double>({1, 2, 3, 4, 5}));
  EXPECT_TRUE(throws_with([&] { raw::split_with_sizes(t, {1, 2}); },
                          "split_with_sizes: split sizes [1, 2] must sum to 6, the size of dimension 0 of [6]"));
  EXPECT_TRUE(throws_with([&] { raw::split_with_sizes(t, {7, -1}); }, "split sizes must be non-negative"));
  // 6 into 4 chunks: pieces of ceil(6 / 4) = 2, so only 3 chunks come back (as in PyTorch).
  std::vector<Tensor> c = raw::chunk(t, 4);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(values(c[2]), std::vector<double>({4, 5}));
  EXPECT_EQ(raw::chunk(iota({2, 7}), 2, 1)[1].sizes(), Shape({2, 3}));
  EXPECT_EQ(raw::chunk(raw::zeros({0}), 3).size(), 3u);
  EXPECT_TRUE(throws_with([&] { raw::chunk(t, 0); }, "chunk: chunks must be greater than 0, got 0"));
}

// ---------- CUDA against CPU ----------

TEST(Index, AllOps_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Device dev = Device::cuda(0);
  auto gpu = [&](const Tensor& t) { return raw::to(t, dev, t.dtype()); };
  Tensor x = randn({6, 7, 5}, 40);
  Tensor idx = longs({5, 0, 5, 2});
  for (int64_t dim : {0, 1, 2}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    EXPECT_TRUE(all_close(raw::index_select(gpu(x), dim, gpu(idx)), raw::index_select(x, dim, idx), 0, 0));
    Tensor src = randn(raw::index_select(x, dim, idx).sizes(), 41);
    EXPECT_TRUE(all_close(raw::index_add(x.sizes(), dim, gpu(idx), gpu(src)), raw::index_add(x.sizes(), dim, idx, src),
                          1e-6, 1e-6));
    Generator gen(42 + dim);
    Tensor gi = raw::randint(0, x.size(dim), {4, 3, 2}, TensorOptions(kInt64), &gen);
    EXPECT_TRUE(all_close(raw::gather(gpu(x), dim, gpu(gi)), raw::gather(x, dim, gi), 0, 0));
    Tensor y = randn({4, 3, 2}, 43);
    EXPECT_TRUE(all_close(raw::scatter_add(x.sizes(), dim, gpu(gi), gpu(y)), raw::scatter_add(x.sizes(), dim, gi, y),
                          1e-5, 1e-6));
  }
  Tensor h = raw::to(randn({4, 3, 2}, 44), kCPU, kFloat16), hi = longs(std::vector<int64_t>(24, 1), {4, 3, 2});
  EXPECT_TRUE(all_close(raw::scatter_add({4, 3, 2}, 0, gpu(hi), gpu(h)), raw::scatter_add({4, 3, 2}, 0, hi, h), 1e-2, 1e-2));
  Tensor labels = longs({3, 0, 1, 3, 2});
  EXPECT_TRUE(all_close(raw::one_hot(gpu(labels)), raw::one_hot(labels), 0, 0));
  // Checked on the device: reported at the next synchronization (DeviceSideIndexChecks_CUDA).
  EXPECT_TRUE(throws_with([&] { raw::index_select(gpu(x), 0, gpu(longs({6}))); cuda::synchronize(); },
                          "index_select: index 6 is out of range for a dimension of size 6"));
  Tensor a = randn({2, 3}, 45), b = randn({2, 4}, 46);
  EXPECT_TRUE(all_close(raw::cat({gpu(a), gpu(b)}, 1), raw::cat({a, b}, 1), 0, 0));
  EXPECT_TRUE(all_close(raw::stack({gpu(a), gpu(a)}, 1), raw::stack({a, a}, 1), 0, 0));
  EXPECT_TRUE(throws_with([&] { raw::cat({a, gpu(a)}); }, "cat: expected all tensors on the same device"));
}

TEST(Index, DeviceSideIndexChecks_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Device dev = Device::cuda(0);
  auto gpu = [&](const Tensor& t) { return raw::to(t, dev, t.dtype()); };
  Tensor x = gpu(randn({4, 3}, 50));
  // Each op returns without a host round trip; the bad index surfaces at the next synchronization
  // the program asks for (a copy to the host here, cuda::synchronize() below), naming the op.
  Tensor y;
  ASSERT_NO_THROW(y = raw::index_select(x, 0, gpu(longs({1, 9}))));
  EXPECT_TRUE(throws_with([&] { raw::to(y, kCPU, y.dtype()); }, "index_select: index 9 is out of range for a dimension of size 4"));
  ASSERT_NO_THROW(y = raw::gather(x, 1, gpu(longs({0, -2, 1, 2}, {4, 1}))));
  EXPECT_TRUE(throws_with([&] { cuda::synchronize(); }, "gather: index -2 is out of range for a dimension of size 3"));
  ASSERT_NO_THROW(y = raw::index_add({4, 3}, 0, gpu(longs({4})), gpu(raw::ones({1, 3}))));
  EXPECT_TRUE(throws_with([&] { cuda::synchronize(); }, "index_add: index 4 is out of range for a dimension of size 4"));
  ASSERT_NO_THROW(y = raw::scatter_add({4, 3}, 1, gpu(longs({3}, {1, 1})), gpu(raw::ones({1, 1}))));
  EXPECT_TRUE(throws_with([&] { raw::sum(y).item<double>(); }, "scatter_add: index 3 is out of range for a dimension of size 3"));
  // A bad index writes nothing out of place: the good ones still land.
  Tensor added = raw::index_add({4, 3}, 0, gpu(longs({1, 7})), gpu(raw::ones({2, 3})));
  EXPECT_THROW(cuda::synchronize(), std::runtime_error);
  EXPECT_EQ(values(added), (std::vector<double>{0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0}));
  // Reported once: a later clean op and synchronization do not throw.
  EXPECT_NO_THROW(raw::sum(raw::index_select(x, 0, gpu(longs({3})))).item<double>());
}

}  // namespace
}  // namespace colony
