// torch's resize_ and resize_as_ (ops/tensor_inplace.cc): sizes and strides as torch gives them,
// the storage kept when it is big enough and grown in place otherwise (seen by every tensor
// sharing it, the old values kept), the version bumped, and torch's refusals. Expected values are
// torch 2.15's.
#include <gtest/gtest.h>

#include <vector>

#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::throws_with;
using testing::values;

Tensor arange6() { return raw::arange(0, 6, 1, TensorOptions(kFloat32)); }

TEST(Resize, ShrinksKeepingTheStorage) {
  // torch: a = arange(6.); a.resize_(2, 2) -> [[0, 1], [2, 3]], version 1, storage 24 bytes.
  Tensor a = arange6();
  const void* data = a.data_ptr_raw();
  a.resize_({2, 2});
  EXPECT_EQ(a.sizes(), (Shape{2, 2}));
  EXPECT_EQ(a.strides(), (Shape{2, 1}));
  EXPECT_EQ(values(a), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(a.version(), 1u);
  EXPECT_EQ(a.storage()->nbytes(), 24u);
  EXPECT_EQ(a.data_ptr_raw(), data);
  // Empty and 0-D, storage untouched.
  a.resize_({0});
  EXPECT_EQ(a.numel(), 0);
  a.resize_({});
  EXPECT_EQ(a.dim(), 0);
  EXPECT_EQ(a.item(), 0.0);
  EXPECT_EQ(a.storage()->nbytes(), 24u);
}

TEST(Resize, SameSizesKeepTheStrides) {
  // torch: arange(6.).view(2, 3).t().resize_(3, 2) keeps strides (1, 3).
  Tensor b = raw::transpose(raw::view(arange6(), {2, 3}), 0, 1);
  b.resize_({3, 2});
  EXPECT_EQ(b.strides(), (Shape{1, 3}));
  EXPECT_EQ(values(b), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // Same count, other sizes: contiguous strides over the same bytes.
  b.resize_({6});
  EXPECT_EQ(b.strides(), (Shape{1}));
  EXPECT_EQ(values(b), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(Resize, GrowsTheSharedStorageInPlace) {
  // torch: a.resize_(4, 4) after resize_(2, 2): storage 64 bytes, first 6 values kept, strides (4, 1).
  Tensor a = arange6();
  Tensor other = raw::narrow(a, 0, 1, 2);  // another tensor on the same storage
  const Storage storage = a.storage();
  a.resize_({4, 4});
  EXPECT_EQ(a.strides(), (Shape{4, 1}));
  EXPECT_EQ(a.storage()->nbytes(), 64u);
  EXPECT_TRUE(a.storage() == storage);
  EXPECT_EQ(other.data_ptr_raw(), static_cast<char*>(a.data_ptr_raw()) + 4);
  std::vector<double> first = values(raw::narrow(raw::reshape(a, {16}), 0, 0, 6));
  EXPECT_EQ(first, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  a.fill_(7.0);
  EXPECT_EQ(values(other), (std::vector<double>{7, 7}));
  EXPECT_EQ(a.version(), other.version());
  // A view grows the storage from its own offset: torch: arange(6.)[2:].resize_(10) -> offset 2,
  // storage 48 bytes, shared with the base.
  Tensor base = arange6();
  Tensor v = raw::narrow(base, 0, 2, 4);
  v.resize_({10});
  EXPECT_EQ(v.storage_offset(), 2);
  EXPECT_EQ(base.storage()->nbytes(), 48u);
  EXPECT_EQ(values(base), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(Resize, ResizeAs) {
  // torch: zeros(2, 3).resize_as_(zeros(3, 2).t()) -> sizes (2, 3), strides (3, 1); dtype kept.
  Tensor a = raw::zeros({2, 3});
  a.resize_as_(raw::transpose(raw::zeros({3, 2}), 0, 1));
  EXPECT_EQ(a.sizes(), (Shape{2, 3}));
  EXPECT_EQ(a.strides(), (Shape{3, 1}));
  Tensor b = raw::zeros({2, 3});
  b.resize_as_(raw::zeros({4}, kInt64));
  EXPECT_EQ(b.sizes(), (Shape{4}));
  EXPECT_EQ(b.dtype(), kFloat32);
}

TEST(Resize, Refusals) {
  Tensor leaf = raw::zeros({2, 3}, TensorOptions(kFloat64).requires_grad(true));
  EXPECT_TRUE(throws_with([&] { leaf.resize_({6}); }, "cannot resize variables that require grad"));
  {
    NoGradGuard no_grad;  // refused with grad mode off too, as torch's
    EXPECT_TRUE(throws_with([&] { leaf.resize_({2, 3}); }, "cannot resize variables that require grad"));
  }
  EXPECT_EQ(leaf.sizes(), (Shape{2, 3}));
  EXPECT_TRUE(throws_with([&] { arange6().resize_({2, -1}); }, "Trying to create tensor with negative dimension -1"));
  // External memory: shrinking is fine, growing is refused.
  std::vector<float> memory(3, 1.0f);
  Tensor blob = raw::from_blob(memory.data(), {3}, kFloat32);
  EXPECT_TRUE(throws_with([&] { blob.resize_({10}); }, "Trying to resize storage that is not resizable"));
  EXPECT_EQ(blob.sizes(), (Shape{3}));
  blob.resize_({2});
  EXPECT_EQ(values(blob), (std::vector<double>{1, 1}));
}

TEST(Resize, Grows_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor a = raw::to(arange6(), Device::cuda(0), kFloat32);
  Tensor other = raw::narrow(a, 0, 1, 2);
  a.resize_({4, 4});
  EXPECT_EQ(a.storage()->nbytes(), 64u);
  EXPECT_EQ(values(raw::narrow(raw::reshape(a, {16}), 0, 0, 6)), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  a.fill_(7.0);
  EXPECT_EQ(values(other), (std::vector<double>{7, 7}));
}

}  // namespace
}  // namespace colony
