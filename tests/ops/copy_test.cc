// Copies and conversion (ops/copy.cc): every dtype pair, the conversion rules, broadcasting and
// strided copies, overlap, fill_, and (with a GPU) transfers between devices.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/cuda.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::throws_with;
using testing::values;

const DType kAll[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool};
std::vector<double> V(std::initializer_list<double> v) { return v; }
Tensor iota(const Shape& shape, DType dtype = kFloat32) {
  return raw::reshape(raw::arange(0, static_cast<double>(shape_numel(shape)), 1, TensorOptions(dtype)), shape);
}

// Values every dtype holds exactly (bool: as != 0).
std::vector<double> sample(DType t) { return t == kBool ? V({0, 1, 1, 0}) : V({0, 1, 3, 100}); }
std::vector<double> as_dtype(const std::vector<double>& v, DType t) {
  if (t != kBool) return v;
  std::vector<double> out;
  for (double x : v) out.push_back(x != 0 ? 1 : 0);
  return out;
}

TEST(Copy, EveryDtypePair) {
  for (DType from : kAll) {
    Tensor src = raw::to(raw::from_vector(sample(from)), kCPU, from);
    ASSERT_EQ(src.dtype(), from);
    for (DType to : kAll) {
      Tensor dst = raw::empty({4}, to);
      raw::copy_(dst, src);
      EXPECT_EQ(values(dst), as_dtype(sample(from), to)) << dtype_name(from) << " -> " << dtype_name(to);
      Tensor conv = raw::to(src, kCPU, to);
      EXPECT_EQ(conv.dtype(), to);
      EXPECT_EQ(values(conv), as_dtype(sample(from), to));
    }
  }
}

TEST(Copy, FloatToIntegerTruncatesTowardZero) {
  Tensor f = raw::tensor({2.9, -2.9, 0.5, -0.5, 7.0});
  for (DType t : {kInt32, kInt64}) EXPECT_EQ(values(raw::to(f, kCPU, t)), V({2, -2, 0, 0, 7}));
  EXPECT_EQ(values(raw::to(raw::tensor({-1.0, 255.9, 256.0}), kCPU, kUInt8)), V({255, 255, 0}));  // wraps
  EXPECT_EQ(values(raw::to(raw::tensor({300}, kInt32), kCPU, kUInt8)), V({44}));
  EXPECT_EQ(values(raw::to(raw::tensor({-3}, kInt64), kCPU, kFloat16)), V({-3}));
}

TEST(Copy, ToBoolIsNonZero) {
  Tensor f = raw::tensor({0.0, -0.0, std::numeric_limits<double>::quiet_NaN(), 0.1, -7});
  EXPECT_EQ(values(raw::to(f, kCPU, kBool)), V({0, 0, 1, 1, 1}));
  EXPECT_EQ(values(raw::to(raw::tensor({0, 256}, kInt64), kCPU, kBool)), V({0, 1}));  // not truncated to a byte
}

TEST(Copy, SixteenBitFloatsRoundToNearestEven) {
  // Half steps are 2^-10 near 1 and 32 near 65504; bfloat16 steps are 2^-7 near 1.
  Tensor f = raw::tensor({1 + std::ldexp(1.0, -11), 1 + 3 * std::ldexp(1.0, -11), 65519, 65520, 1e-8},
                         kFloat32);
  std::vector<double> h = values(raw::to(f, kCPU, kFloat16));
  EXPECT_EQ(h[0], 1.0);
  EXPECT_EQ(h[1], 1 + std::ldexp(1.0, -9));
  EXPECT_EQ(h[2], 65504);
  EXPECT_TRUE(std::isinf(h[3]));
  EXPECT_EQ(h[4], 0.0);  // below half the smallest subnormal (2^-25 = 3e-8)
  std::vector<double> b =
      values(raw::to(raw::tensor({1 + std::ldexp(1.0, -8), 1 + 3 * std::ldexp(1.0, -8)}), kCPU, kBFloat16));
  EXPECT_EQ(b, V({1, 1 + std::ldexp(1.0, -6)}));
  // float64 -> float16 through float32, like c10::Half(double).
  EXPECT_EQ(values(raw::to(raw::tensor({0.1}, kFloat64), kCPU, kFloat16)), V({0.0999755859375}));
  // int64 -> float32 rounds to nearest even too: 2^24 + 1 is a tie between 2^24 and 2^24 + 2.
  EXPECT_EQ(values(raw::to(raw::tensor({16777217}, kInt64), kCPU, kFloat32)), V({16777216}));
}

TEST(Copy, BroadcastsSourceToDestination) {
  Tensor dst = raw::zeros({2, 3});
  raw::copy_(dst, raw::tensor({1, 2, 3}));
  EXPECT_EQ(values(dst), V({1, 2, 3, 1, 2, 3}));
  raw::copy_(dst, raw::reshape(raw::tensor({7, 8}, kInt32), {2, 1}));
  EXPECT_EQ(values(dst), V({7, 7, 7, 8, 8, 8}));
  raw::copy_(dst, raw::scalar_tensor(-1));
  EXPECT_EQ(values(dst), V({-1, -1, -1, -1, -1, -1}));
  Tensor small = raw::zeros({3});
  EXPECT_TRUE(throws_with([&] { raw::copy_(small, iota({2, 3})); },
                          "copy_: source shape [2, 3] cannot be broadcast to destination shape [3]"));
  EXPECT_TRUE(throws_with([&] { raw::copy_(small, iota({4})); }, "copy_: shapes [3] and [4] cannot be broadcast"));
}

TEST(Copy, StridedSourceAndDestination) {
  Tensor base = raw::zeros({3, 4});
  Tensor dst = raw::transpose(base, 0, 1);  // [4, 3] view
  raw::copy_(dst, iota({4, 3}));             // dst[i][j] = 3 i + j, so base[j][i] = 3 i + j
  EXPECT_EQ(values(base), V({0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
  Tensor cols = raw::narrow(base, 1, 1, 2);
  raw::copy_(cols, raw::transpose(raw::tensor({{-1, -2, -3}, {-4, -5, -6}}, kInt64), 0, 1));
  EXPECT_EQ(values(base), V({0, -1, -4, 9, 1, -2, -5, 10, 2, -3, -6, 11}));
  Tensor step = raw::slice(raw::zeros({6}, kInt32), 0, 0, 6, 2);
  raw::copy_(step, raw::tensor({1.5, 2.5, 3.5}));
  EXPECT_EQ(values(step), V({1, 2, 3}));
}

TEST(Copy, LargeTransposeWithConversion) {
  Tensor a = iota({70, 45}, kInt32);
  Tensor t = raw::to(raw::transpose(a, 0, 1), kCPU, kFloat64);  // [45, 70], a tiled walk
  ASSERT_TRUE(t.is_contiguous());
  const double* p = t.data_ptr<double>();
  for (int i = 0; i < 45; ++i)
    for (int j = 0; j < 70; ++j) ASSERT_EQ(p[i * 70 + j], j * 45 + i) << i << ", " << j;
}

TEST(Copy, OverlappingViewsCopyTheOriginalValues) {
  Tensor a = iota({5});
  Tensor to_view = raw::narrow(a, 0, 1, 4), from_view = raw::narrow(a, 0, 0, 4);
  raw::copy_(to_view, from_view);  // a shift right by one
  EXPECT_EQ(values(a), V({0, 0, 1, 2, 3}));
  Tensor b = iota({3});
  uint32_t v0 = b.version();
  raw::copy_(b, b);
  EXPECT_EQ(values(b), V({0, 1, 2}));
  EXPECT_GT(b.version(), v0);
  Tensor expanded = raw::expand(raw::zeros({1}), {3});
  EXPECT_TRUE(throws_with([&] { raw::copy_(expanded, iota({3})); },
                          "copy_: unsupported operation: more than one element of the written-to tensor"));
}

TEST(Copy, ContiguousCloneTo) {
  Tensor a = iota({2, 3});
  EXPECT_TRUE(raw::contiguous(a).is_same(a));
  Tensor t = raw::transpose(a, 0, 1);
  Tensor c = raw::contiguous(t);
  EXPECT_FALSE(c.is_same(t));
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.sizes(), (Shape{3, 2}));
  EXPECT_EQ(values(c), V({0, 3, 1, 4, 2, 5}));
  Tensor k = raw::clone(a);
  EXPECT_FALSE(k.storage() == a.storage());
  EXPECT_EQ(values(k), values(a));
  EXPECT_TRUE(raw::to(a, kCPU, kFloat32).is_same(a));
  Tensor d = raw::to(t, kCPU, kFloat64);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(values(d), V({0, 3, 1, 4, 2, 5}));
  Tensor e = raw::clone(raw::empty({0, 4}));
  EXPECT_EQ(e.sizes(), (Shape{0, 4}));
  Tensor s = raw::to(raw::scalar_tensor(3.5), kCPU, kInt64);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<int64_t>(), 3);
}

TEST(Copy, CopyBumpsVersion) {
  Tensor a = raw::zeros({2});
  uint32_t v0 = a.version();
  raw::copy_(a, raw::ones({2}));
  EXPECT_GT(a.version(), v0);
}

TEST(Copy, CudaWithoutDeviceFails) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_TRUE(throws_with([&] { raw::to(iota({2}), Device::cuda(0), kFloat32); }, "to(cuda:0)"));
}

TEST(PinMemory, CopiesIntoHostMemory) {
  Tensor a = raw::transpose(iota({2, 2}), 0, 1);
  Tensor p = raw::pin_memory(a);
  EXPECT_TRUE(p.is_cpu());
  EXPECT_TRUE(p.is_contiguous());
  EXPECT_EQ(values(p), V({0, 2, 1, 3}));
  if (pinned_memory_is_page_locked()) {
    EXPECT_TRUE(p.is_pinned());
    EXPECT_TRUE(raw::pin_memory(p).is_same(p));
  }
}

TEST(Fill, EveryDtype) {
  for (DType t : kAll) {
    Tensor x = raw::empty({3}, t);
    raw::fill_(x, 2.7);
    double want = t == kBool ? 1 : is_floating(t) ? 0 : 2;
    if (t == kFloat32) want = 2.7f;
    if (t == kFloat64) want = 2.7;
    if (t == kFloat16) want = 2.69921875;  // 2 * (1 + 358 / 1024)
    if (t == kBFloat16) want = 2.703125;   // 2 * (1 + 45 / 128)
    EXPECT_EQ(values(x), std::vector<double>(3, want)) << dtype_name(t);
  }
  Tensor z = raw::ones({2}, kInt64);
  raw::fill_(z, 0);
  EXPECT_EQ(values(z), V({0, 0}));
}

TEST(Fill, ViewsAndVersion) {
  Tensor base = raw::zeros({3, 3});
  Tensor col = raw::select(base, 1, 1);
  uint32_t v0 = base.version();
  raw::fill_(col, 5);
  EXPECT_EQ(values(base), V({0, 5, 0, 0, 5, 0, 0, 5, 0}));
  EXPECT_GT(base.version(), v0);
  Tensor one = raw::zeros({1});
  Tensor expanded = raw::expand(one, {4});  // allowed, as in PyTorch: every location gets the value
  raw::fill_(expanded, 9);
  EXPECT_EQ(values(one), V({9}));
}

// ---------- across devices ----------

TEST(Copy, EveryDtypePairAcrossDevices_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (DType from : kAll) {
    Tensor src = raw::to(raw::from_vector(sample(from)), kCPU, from);
    for (DType to : kAll) {
      std::vector<double> want = as_dtype(sample(from), to);
      Tensor up = raw::to(src, Device::cuda(0), to);  // host to device, converting
      EXPECT_TRUE(up.is_cuda());
      EXPECT_EQ(up.dtype(), to);
      EXPECT_EQ(values(up), want) << dtype_name(from) << " -> " << dtype_name(to);
      Tensor on_gpu = raw::to(src, Device::cuda(0), from);
      Tensor conv = raw::to(on_gpu, Device::cuda(0), to);  // the conversion kernel
      EXPECT_EQ(values(conv), want);
      Tensor down = raw::empty({4}, to);
      raw::copy_(down, on_gpu);  // device to host, converting
      EXPECT_EQ(values(down), want);
    }
  }
}

TEST(Copy, StridedAndBroadcastAcrossDevices_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor t = raw::transpose(iota({3, 4}), 0, 1);
  Tensor g = raw::to(t, Device::cuda(0), kFloat32);
  EXPECT_EQ(values(g), values(t));
  Tensor gbase = raw::zeros({3, 4}, Device::cuda(0));
  Tensor gview = raw::transpose(gbase, 0, 1);
  raw::copy_(gview, iota({4, 3}, kInt32));  // strided destination on the device, converting
  Tensor host = raw::zeros({3, 4});
  raw::copy_(host, gbase);
  EXPECT_EQ(values(host), V({0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
  Tensor rows = raw::zeros({2, 3}, Device::cuda(0));
  raw::copy_(rows, raw::tensor({1, 2, 3}));  // broadcast from the host
  EXPECT_EQ(values(rows), V({1, 2, 3, 1, 2, 3}));
  Tensor back = raw::zeros({2, 3}, kFloat64);
  raw::copy_(back, raw::narrow(raw::to(iota({2, 4}), Device::cuda(0), kFloat32), 1, 1, 3));
  EXPECT_EQ(values(back), V({1, 2, 3, 5, 6, 7}));
  Tensor fg = raw::full({2, 2}, 2.5, Device::cuda(0));
  raw::fill_(fg, -1.25);
  EXPECT_EQ(values(fg), V({-1.25, -1.25, -1.25, -1.25}));
}

TEST(Copy, NonBlockingRoundTrip_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor p = raw::pin_memory(iota({1000}, kUInt8));
  Tensor g = raw::to(p, Device::cuda(0), kFloat32, /*non_blocking=*/true);
  Tensor h = raw::to(g, kCPU, kFloat32, /*non_blocking=*/true);
  EXPECT_TRUE(h.is_pinned());
  cuda::synchronize();
  std::vector<double> v = values(h);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(v[i], i % 256);
}

TEST(Copy, BetweenDevices_MultiCUDA) {
  COLONY_REQUIRE_CUDA(2);
  Tensor a = raw::to(iota({3, 3}), Device::cuda(0), kFloat32);
  Tensor b = raw::to(raw::transpose(a, 0, 1), Device::cuda(1), kFloat64);
  EXPECT_EQ(b.device(), Device::cuda(1));
  EXPECT_EQ(values(b), V({0, 3, 6, 1, 4, 7, 2, 5, 8}));
}

}  // namespace
}  // namespace colony
