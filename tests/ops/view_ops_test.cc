#include "ops/raw_ops.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace colony {
namespace {

using testing::throws_with;
using testing::values;

Tensor iota(const Shape& shape) { return raw::reshape(raw::arange(0, shape_numel(shape), 1, TensorOptions(kFloat32)), shape); }

TEST(ViewOps, ViewSharesStorageAndInfersSize) {
  Tensor a = iota({2, 6});
  Tensor v = raw::view(a, {3, -1});
  EXPECT_EQ(v.sizes(), (Shape{3, 4}));
  EXPECT_EQ(v.storage().get(), a.storage().get());
  v.data_ptr<float>()[5] = 100;
  EXPECT_EQ(a.data_ptr<float>()[5], 100);
}

TEST(ViewOps, ViewErrors) {
  Tensor a = iota({2, 6});
  EXPECT_TRUE(throws_with([&] { raw::view(a, {5, -1}); }, "view: shape [5, -1] is invalid for input of size 12"));
  EXPECT_TRUE(throws_with([&] { raw::view(a, {-1, -1}); }, "only one dimension can be inferred"));
  Tensor t = raw::transpose(a, 0, 1);  // [6, 2], strides [1, 6]
  EXPECT_TRUE(throws_with([&] { raw::view(t, {12}); }, "use reshape() instead"));
}

TEST(ViewOps, ViewOfNonContiguousWhenChunksAllow) {
  // [4, 3] narrowed to columns 0..1 is not contiguous, but splitting dim 0 keeps a valid view.
  Tensor a = iota({4, 3});
  Tensor n = raw::narrow(a, 1, 0, 2);
  Tensor v = raw::view(n, {2, 2, 2});
  EXPECT_EQ(v.strides(), (Shape{6, 3, 1}));
  EXPECT_EQ(values(v), (std::vector<double>{0, 1, 3, 4, 6, 7, 9, 10}));
}

TEST(ViewOps, ReshapeCopiesOnlyWhenNeeded) {
  Tensor a = iota({2, 3});
  EXPECT_EQ(raw::reshape(a, {6}).storage().get(), a.storage().get());
  Tensor t = raw::transpose(a, 0, 1);
  Tensor r = raw::reshape(t, {6});
  EXPECT_NE(r.storage().get(), a.storage().get());
  EXPECT_EQ(values(r), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(ViewOps, Diagonal) {
  // torch.arange(24.).reshape(2, 3, 4).diagonal(offset, dim1, dim2): shapes, strides, offsets, values.
  Tensor a = iota({2, 3, 4});
  Tensor above = raw::diagonal(a, 1, 0, 2);
  EXPECT_EQ(above.sizes(), (Shape{3, 2}));
  EXPECT_EQ(above.strides(), (Shape{4, 13}));
  EXPECT_EQ(above.storage_offset(), 1);
  EXPECT_EQ(above.storage().get(), a.storage().get());
  EXPECT_EQ(values(above), (std::vector<double>{1, 14, 5, 18, 9, 22}));
  Tensor below = raw::diagonal(a, -1, 2, 1);
  EXPECT_EQ(below.sizes(), (Shape{2, 3}));
  EXPECT_EQ(below.strides(), (Shape{12, 5}));
  EXPECT_EQ(values(below), (std::vector<double>{1, 6, 11, 13, 18, 23}));
  Tensor none = raw::diagonal(a, 5, 1, 2);  // past the corner: empty, the offset left alone
  EXPECT_EQ(none.sizes(), (Shape{2, 0}));
  EXPECT_EQ(none.storage_offset(), 0);
  EXPECT_EQ(values(raw::diagonal(iota({3, 3}))), (std::vector<double>{0, 4, 8}));
  EXPECT_TRUE(throws_with([&] { raw::diagonal(a, 0, 1, -2); }, "diagonal dimensions cannot be identical 1, -2"));
  EXPECT_TRUE(throws_with([&] { raw::diagonal(iota({3})); }, "at least 2 dimensions"));
}

TEST(ViewOps, TransposePermute) {
  Tensor a = iota({2, 3, 4});
  Tensor p = raw::permute(a, {2, 0, 1});
  EXPECT_EQ(p.sizes(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Shape{1, 12, 4}));
  EXPECT_FALSE(p.is_contiguous());
  // p[i][j][k] = a[j][k][i] = j*12 + k*4 + i
  std::vector<double> v = values(p);
  EXPECT_EQ(v[1 * 6 + 1 * 3 + 2], 1 * 12 + 2 * 4 + 1);
  EXPECT_EQ(raw::transpose(a, -1, 0).sizes(), (Shape{4, 3, 2}));
  EXPECT_TRUE(throws_with([&] { raw::permute(a, {0, 1}); }, "permute: number of dims 2"));
  EXPECT_TRUE(throws_with([&] { raw::permute(a, {0, 1, 1}); }, "appears more than once"));
  EXPECT_TRUE(throws_with([&] { raw::transpose(a, 0, 3); }, "transpose: dim 3 out of range for a 3-D tensor"));
}

TEST(ViewOps, NarrowSliceSelect) {
  Tensor a = iota({4, 5});
  EXPECT_EQ(values(raw::narrow(a, 1, 1, 2)), (std::vector<double>{1, 2, 6, 7, 11, 12, 16, 17}));
  EXPECT_EQ(values(raw::slice(a, 0, 0, 4, 2)), (std::vector<double>{0, 1, 2, 3, 4, 10, 11, 12, 13, 14}));
  EXPECT_EQ(values(raw::slice(a, 1, -2, 100)), (std::vector<double>{3, 4, 8, 9, 13, 14, 18, 19}));
  EXPECT_EQ(values(raw::select(a, 1, -1)), (std::vector<double>{4, 9, 14, 19}));
  EXPECT_TRUE(throws_with([&] { raw::narrow(a, 0, 3, 2); }, "narrow: start 3 + length 2 exceeds dimension 0 of size 4"));
  EXPECT_TRUE(throws_with([&] { raw::select(a, 0, 4); }, "select: index 4 is out of range for dimension 0 with size 4"));
}

TEST(ViewOps, FlattenSqueezeUnsqueeze) {
  Tensor a = iota({2, 1, 3, 1});
  EXPECT_EQ(raw::flatten(a, 1).sizes(), (Shape{2, 3}));
  EXPECT_EQ(raw::flatten(a).sizes(), (Shape{6}));
  EXPECT_EQ(raw::squeeze(a).sizes(), (Shape{2, 3}));
  EXPECT_EQ(raw::squeeze(a, 1).sizes(), (Shape{2, 3, 1}));
  EXPECT_EQ(raw::squeeze(a, 0).sizes(), (Shape{2, 1, 3, 1}));  // size 2: unchanged, as in PyTorch
  EXPECT_EQ(raw::unsqueeze(raw::squeeze(a), -1).sizes(), (Shape{2, 3, 1}));
  EXPECT_EQ(raw::unsqueeze(raw::squeeze(a), 0).sizes(), (Shape{1, 2, 3}));
  EXPECT_TRUE(throws_with([&] { raw::flatten(a, 2, 1); }, "flatten: start_dim 2 comes after end_dim 1"));
}

TEST(ViewOps, ExpandBroadcastsWithZeroStrides) {
  Tensor a = iota({3, 1});
  Tensor e = raw::expand(a, {2, 3, 4});
  EXPECT_EQ(e.strides(), (Shape{0, 1, 0}));
  EXPECT_EQ(values(e)[4 * 2 + 3], 2);
  EXPECT_EQ(raw::expand(a, {-1, 5}).sizes(), (Shape{3, 5}));
  EXPECT_TRUE(throws_with([&] { raw::expand(a, {4, 4}); },
                          "expand: the expanded size of the tensor (4) must match the existing size (3)"));
}

TEST(ViewOps, ContiguousOfViewsRoundTrips) {
  Tensor a = iota({3, 4});
  Tensor t = raw::contiguous(raw::transpose(a, 0, 1));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(values(t), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

}  // namespace
}  // namespace colony
