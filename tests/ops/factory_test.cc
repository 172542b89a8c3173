#include <cmath>

#include <gtest/gtest.h>

#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::throws_with;
using testing::values;

TEST(Factory, ZerosOnesFull) {
  Tensor z = raw::zeros({2, 3});
  EXPECT_EQ(z.dtype(), kFloat32);
  EXPECT_EQ(z.sizes(), (Shape{2, 3}));
  EXPECT_EQ(values(z), std::vector<double>(6, 0.0));
  EXPECT_EQ(values(raw::ones({2}, kInt64)), (std::vector<double>{1, 1}));
  EXPECT_EQ(raw::full({1}, 2.5, kFloat64).item<double>(), 2.5);
  EXPECT_EQ(raw::scalar_tensor(3).dim(), 0);
  EXPECT_EQ(raw::scalar_tensor(3).numel(), 1);
  EXPECT_TRUE(throws_with([&] { raw::zeros({2, -1}); }, "empty: negative dimension in shape [2, -1]"));
}

TEST(Factory, AlignedCpuMemory) {
  for (int64_t n : {1, 3, 17, 1000}) {
    Tensor t = raw::empty({n}, kUInt8);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr_raw()) % 64, 0u);
  }
}

TEST(Factory, Arange) {
  Tensor a = raw::arange(5);
  EXPECT_EQ(a.dtype(), kInt64);
  EXPECT_EQ(values(a), (std::vector<double>{0, 1, 2, 3, 4}));
  Tensor b = raw::arange(0, 1, 0.25);
  EXPECT_EQ(b.dtype(), kFloat32);
  EXPECT_EQ(values(b), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_EQ(values(raw::arange(5, 0, -2)), (std::vector<double>{5, 3, 1}));
  EXPECT_TRUE(throws_with([&] { raw::arange(0, 5, -1); }, "arange: upper bound and larger bound inconsistent"));
  EXPECT_TRUE(throws_with([&] { raw::arange(0, 5, 0); }, "arange: step must be nonzero"));
}

TEST(Factory, LinspaceEndsExactly) {
  Tensor l = raw::linspace(0, 1, 5, kFloat64);
  EXPECT_EQ(values(l), (std::vector<double>{0, 0.25, 0.5, 0.75, 1.0}));
  Tensor m = raw::linspace(-1, 0.3, 7);
  EXPECT_EQ(values(m).back(), static_cast<double>(0.3f));
  EXPECT_EQ(raw::linspace(2, 3, 1).item<double>(), 2.0);
}

TEST(Factory, Eye) {
  EXPECT_EQ(values(raw::eye(2, 3)), (std::vector<double>{1, 0, 0, 0, 1, 0}));
}

TEST(Factory, FromVectorAndInitializerLists) {
  Tensor v = raw::from_vector(std::vector<int64_t>{1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(v.dtype(), kInt64);
  EXPECT_EQ(v.sizes(), (Shape{2, 2}));
  Tensor f = raw::from_vector(std::vector<float>{1.5f}, {}, kFloat64);
  EXPECT_EQ(f.dtype(), kFloat64);
  EXPECT_EQ(raw::from_vector(std::vector<bool>{true, false}).dtype(), kBool);
  EXPECT_TRUE(throws_with([&] { raw::from_vector(std::vector<float>{1, 2, 3}, {2, 2}); },
                          "from_vector: shape [2, 2] holds 4 elements, got 3 values"));
  Tensor m = raw::tensor({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(m.sizes(), (Shape{2, 3}));
  EXPECT_EQ(m.dtype(), kFloat32);
  EXPECT_EQ(values(m), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(throws_with([&] { raw::tensor({{1, 2}, {3}}); }, "rows have different lengths"));
}

TEST(Factory, FromBlobWrapsWithoutCopyAndRunsDeleter) {
  static float data[6] = {0, 1, 2, 3, 4, 5};
  bool deleted = false;
  {
    Tensor t = raw::from_blob(data, {2, 3}, kFloat32, kCPU, [&](void*) { deleted = true; });
    EXPECT_EQ(t.data_ptr<float>(), data);
    Tensor view = raw::transpose(t, 0, 1);
    t = Tensor();
    EXPECT_FALSE(deleted);  // the view still holds the storage
    EXPECT_EQ(values(view), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  }
  EXPECT_TRUE(deleted);
}

TEST(Factory, RequiresGradOption) {
  Tensor t = raw::zeros({2}, TensorOptions().requires_grad(true));
  EXPECT_TRUE(t.requires_grad());
  EXPECT_TRUE(t.is_leaf());
  EXPECT_TRUE(throws_with([&] { raw::zeros({2}, TensorOptions(kInt64).requires_grad(true)); },
                          "only floating point tensors can require gradients"));
}

TEST(Factory, CudaWithoutDeviceIsAClearError) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "a CUDA device exists";
  EXPECT_TRUE(throws_with([&] { raw::zeros({2}, Device("cuda:0")); }, "no CUDA device available"));
}

TEST(Factory, DataPtrChecksDtypeAndItemChecksSize) {
  Tensor t = raw::zeros({2});
  EXPECT_TRUE(throws_with([&] { t.data_ptr<double>(); }, "data_ptr: tensor has dtype float32, requested float64"));
  EXPECT_TRUE(throws_with([&] { t.item<float>(); }, "item: a Tensor with 2 elements cannot be converted to a scalar"));
}

TEST(Device, ParsesAndPrints) {
  EXPECT_EQ(Device("cuda:3").index, 3);
  EXPECT_TRUE(Device("cuda").is_cuda());
  EXPECT_EQ(Device("cpu").str(), "cpu");
  EXPECT_EQ(Device::cuda(1).str(), "cuda:1");
  EXPECT_TRUE(throws_with([&] { Device("gpu0"); }, "expected \"cpu\", \"cuda\" or \"cuda:N\""));
  EXPECT_TRUE(throws_with([&] { Device("cuda:x"); }, "cannot parse \"cuda:x\""));
}

TEST(DTypes, PromotionFollowsPyTorch) {
  EXPECT_EQ(promote_types(kInt64, kFloat16), kFloat16);
  EXPECT_EQ(promote_types(kFloat16, kBFloat16), kFloat32);
  EXPECT_EQ(promote_types(kFloat32, kFloat64), kFloat64);
  EXPECT_EQ(promote_types(kUInt8, kInt32), kInt32);
  EXPECT_EQ(promote_types(kBool, kUInt8), kUInt8);
  EXPECT_EQ(promote_types(kInt32, kInt64), kInt64);
  EXPECT_EQ(promote_types(kBool, kBool), kBool);
}

TEST(Shape, BroadcastAndWrap) {
  EXPECT_EQ(broadcast_shapes({3, 1}, {1, 4}, "add"), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shapes({2, 3}, {3}, "add"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({}, {5}, "add"), (Shape{5}));
  EXPECT_TRUE(throws_with([&] { broadcast_shapes({2, 3}, {4}, "mul"); },
                          "mul: shapes [2, 3] and [4] cannot be broadcast"));
  EXPECT_EQ(wrap_dim(-1, 3, "x"), 2);
  EXPECT_EQ(wrap_dim(0, 0, "x"), 0);
  EXPECT_TRUE(throws_with([&] { wrap_dim(-4, 3, "sum"); }, "sum: dim -4 out of range for a 3-D tensor"));
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
}

TEST(Print, MatchesPyTorchLayout) {
  EXPECT_EQ(raw::tensor({{1, 2}, {3, 4}}).str(), "tensor([[1.0000, 2.0000],\n        [3.0000, 4.0000]])");
  EXPECT_EQ(raw::arange(3).str(), "tensor([0, 1, 2])");
  EXPECT_EQ(raw::ones({2}, kFloat64).str(), "tensor([1.0000, 1.0000], dtype=float64)");
  EXPECT_EQ(raw::zeros({2}, TensorOptions().requires_grad(true)).str(), "tensor([0.0000, 0.0000], requires_grad=True)");
  std::string big = raw::arange(2000).str();
  EXPECT_NE(big.find("0, 1, 2, ..., 1997, 1998, 1999"), std::string::npos) << big;
}

// torch switches to scientific notation where 4 decimals would hide the values: a gradient of
// 1e-8 printed as 0.0000 reads as a zero gradient. torch.tensor([1e-8, 0.5]) prints
// tensor([1.0000e-08, 5.0000e-01]); [1, 2e8] and [1, 5000] too; [0.5, 2] and [1, 1000] do not.
TEST(Print, ScientificWhereTorchSwitchesToIt) {
  EXPECT_EQ(raw::tensor({1e-8, 0.5}).str(), "tensor([1.0000e-08, 5.0000e-01])");
  EXPECT_EQ(raw::tensor({1.0, 2e8}, kFloat64).str(), "tensor([1.0000e+00, 2.0000e+08], dtype=float64)");
  EXPECT_EQ(raw::tensor({1.0, 5000.0}).str(), "tensor([1.0000e+00, 5.0000e+03])");
  EXPECT_EQ(raw::tensor({0.5, 2.0}).str(), "tensor([0.5000, 2.0000])");
  EXPECT_EQ(raw::tensor({1.0, 1000.0}).str(), "tensor([1.0000, 1000.0000])");
  EXPECT_EQ(raw::tensor({0.0, std::nan(""), -INFINITY, 0.25}).str(), "tensor([0.0000, nan, -inf, 0.2500])");
  // Integers print from their int64 values: 2^53 + 1 is not a double.
  EXPECT_EQ(raw::from_vector<int64_t>({9007199254740993LL, -5}).str(), "tensor([9007199254740993, -5])");
}

// Unchecked, [2^62] float32s needed 2^64 bytes, which wrapped to a 0-byte allocation.
TEST(Factory, EmptyRefusesShapesThatOverflow) {
  EXPECT_TRUE(throws_with<std::overflow_error>(
      [] { raw::empty({int64_t{1} << 62}, kFloat32); }, "spans more bytes than int64 can count"));
  EXPECT_TRUE(throws_with<std::overflow_error>(
      [] { raw::empty({int64_t{1} << 32, int64_t{1} << 32}, kUInt8); },
      "empty: shape [4294967296, 4294967296] has more elements than int64 can count"));
}


}  // namespace
}  // namespace colony
