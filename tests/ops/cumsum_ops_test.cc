// cumsum (ops/cumsum_ops.cc): every dim position against a running sum in double, PyTorch's
// result dtypes (integral and bool inputs give int64), 0-d and empty inputs, a strided input,
// errors, the reversed scan (cumsum's gradient), and CUDA against the CPU (both the row and the
// column kernel, both directions).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/raw_ops.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;
using testing::values;

// Running sums along `dim` of a 3-D tensor, in double.
std::vector<double> naive_cumsum3(const Tensor& t, int64_t dim) {
  std::vector<double> v = values(t), out(v.size());
  Shape s = t.sizes();
  Shape strides = contiguous_strides(s);
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    int64_t pos = (i / strides[dim]) % s[dim];
    out[i] = v[i] + (pos > 0 ? out[i - strides[dim]] : 0.0);
  }
  return out;
}

TEST(Cumsum, EveryDimAgainstDouble) {
  Generator gen(1);
  Tensor x = raw::randn({4, 70, 300}, kFloat64, &gen);
  for (int64_t dim : {0, 1, 2}) {
    Tensor want = raw::reshape(raw::from_vector(naive_cumsum3(x, dim)), x.sizes());
    EXPECT_TRUE(all_close(raw::cumsum(x, dim), want, 1e-12, 1e-12)) << "dim " << dim;
    EXPECT_TRUE(all_close(raw::cumsum(raw::to(x, kCPU, kFloat32), dim - 3), want, 1e-4, 1e-4)) << "dim " << dim;
  }
  Tensor strided = raw::transpose(x, 0, 2);
  EXPECT_TRUE(all_close(raw::cumsum(strided, 2), raw::transpose(raw::cumsum(x, 0), 0, 2), 1e-12, 1e-12));
}

// The last axis has its own row loop (kernels/cpu/cumsum.cc): each of 21 rows of 37 must be its own
// float32 running sum, in order (bitwise), NaN and inf spreading along their row only; int32 rows
// give exact int64 sums.
TEST(Cumsum, LastDimRowByRow) {
  constexpr int64_t kRows = 21, kLen = 37;
  Generator gen(3);
  Tensor x = raw::randn({kRows, kLen}, kFloat32, &gen);
  std::vector<double> v = values(x);
  v[2 * kLen + 10] = std::nan("");
  v[9 * kLen + 3] = std::numeric_limits<double>::infinity();
  v[19 * kLen + 36] = -std::numeric_limits<double>::infinity();
  x = raw::reshape(raw::to(raw::from_vector(v), kCPU, kFloat32), {kRows, kLen});
  std::vector<double> got = values(raw::cumsum(x, 1));
  for (int64_t r = 0; r < kRows; ++r) {
    float acc = 0.0f;
    for (int64_t i = 0; i < kLen; ++i) {
      acc += static_cast<float>(v[r * kLen + i]);
      const float g = static_cast<float>(got[r * kLen + i]);
      if (std::isnan(acc)) {
        ASSERT_TRUE(std::isnan(g)) << r << ", " << i;
      } else {
        ASSERT_EQ(g, acc) << r << ", " << i;
      }
    }
  }
  std::vector<double> vi(v.size());
  for (size_t i = 0; i < v.size(); ++i) vi[i] = std::isfinite(v[i]) ? std::round(v[i] * 1000.0) : 7.0;
  Tensor xi = raw::reshape(raw::to(raw::from_vector(vi), kCPU, kInt32), {kRows, kLen});
  std::vector<double> gi = values(raw::cumsum(xi, -1));
  for (int64_t r = 0; r < kRows; ++r) {
    double acc = 0;
    for (int64_t i = 0; i < kLen; ++i) {
      acc += vi[r * kLen + i];
      ASSERT_EQ(gi[r * kLen + i], acc) << r << ", " << i;
    }
  }
  // A transposed input along its last axis: the same sums as the contiguous copy's.
  Tensor xt = raw::transpose(raw::reshape(raw::randn({kLen, kRows}, kFloat32, &gen), {kLen, kRows}), 0, 1);
  EXPECT_TRUE(raw::equal(raw::cumsum(xt, 1), raw::cumsum(raw::contiguous(xt), 1)));
}

// reverse: the sums from the end, bit for bit flip(cumsum(flip(x))) (the flips as index_select with
// descending positions): every dim of a 3-D float32 tensor (the row loop and the column walk), a
// strided input, NaN spreading toward the start only, int32 to exact int64 sums.
Tensor flipped(const Tensor& t, int64_t dim) {
  const int64_t n = t.size(dim);
  return raw::index_select(t, dim, raw::arange(static_cast<double>(n - 1), -1.0, -1.0, TensorOptions(kInt64)));
}

TEST(Cumsum, ReverseIsFlipCumsumFlip) {
  Generator gen(5);
  Tensor x = raw::randn({5, 37, 41}, kFloat32, &gen);
  std::vector<double> v = values(x);
  v[2 * 37 * 41 + 20 * 41 + 40] = std::nan("");
  x = raw::reshape(raw::to(raw::from_vector(v), kCPU, kFloat32), {5, 37, 41});
  for (int64_t dim : {0, 1, 2}) {
    Tensor got = raw::cumsum(x, dim, /*reverse=*/true);
    Tensor want = flipped(raw::cumsum(flipped(x, dim), dim), dim);
    std::vector<double> g = values(got), w = values(want);
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) {
      if (std::isnan(w[i])) {
        ASSERT_TRUE(std::isnan(g[i])) << "dim " << dim << " at " << i;
      } else {
        ASSERT_EQ(g[i], w[i]) << "dim " << dim << " at " << i;
      }
    }
  }
  // Only the elements at or before the NaN (along the last axis) are NaN.
  std::vector<double> last = values(raw::cumsum(x, 2, /*reverse=*/true));
  EXPECT_TRUE(std::isnan(last[2 * 37 * 41 + 20 * 41 + 0]));
  EXPECT_FALSE(std::isnan(last[2 * 37 * 41 + 21 * 41 + 0]));
  // A strided input: its contiguous copy's sums (the NaN included: equal with NaN equal to NaN).
  Tensor strided = raw::transpose(x, 1, 2);
  EXPECT_TRUE(raw::allclose(raw::cumsum(strided, 2, true), raw::cumsum(raw::contiguous(strided), 2, true), 0, 0,
                            /*equal_nan=*/true));
  Tensor xi = raw::to(raw::mul(raw::randn({6, 9}, kFloat64, &gen), 1000.0), kCPU, kInt32);
  for (int64_t dim : {0, 1}) {
    Tensor gi = raw::cumsum(xi, dim, true);
    EXPECT_EQ(gi.dtype(), kInt64);
    EXPECT_TRUE(raw::equal(gi, flipped(raw::cumsum(flipped(xi, dim), dim), dim)));
  }
}

TEST(Cumsum, DtypesAsPyTorch) {
  Tensor b = raw::cumsum(raw::tensor({1, 1, 0, 1}, kBool), 0);
  EXPECT_EQ(b.dtype(), kInt64);
  EXPECT_EQ(values(b), (std::vector<double>{1, 2, 2, 3}));
  Tensor i = raw::cumsum(raw::tensor({2000000000, 2000000000}, kInt32), 0);
  EXPECT_EQ(i.dtype(), kInt64);  // no int32 overflow
  EXPECT_EQ(values(i), (std::vector<double>{2e9, 4e9}));
  Tensor u = raw::cumsum(raw::tensor({200, 200}, kUInt8), 0);
  EXPECT_EQ(values(u), (std::vector<double>{200, 400}));
  Tensor h = raw::cumsum(raw::tensor({0.5, 0.25, 1}, kFloat16), 0);
  EXPECT_EQ(h.dtype(), kFloat16);
  EXPECT_EQ(values(h), (std::vector<double>{0.5, 0.75, 1.75}));
}

TEST(Cumsum, EdgeShapesAndErrors) {
  Tensor s = raw::cumsum(raw::scalar_tensor(3.0), 0);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item(), 3.0);
  EXPECT_EQ(raw::cumsum(raw::zeros({2, 0}), 1).sizes(), (Shape{2, 0}));
  EXPECT_TRUE(throws_with([] { raw::cumsum(raw::zeros({2, 3}), 2); }, "cumsum: dim 2 out of range"));
}

TEST(Cumsum, AgainstCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Device dev = Device::cuda(0);
  Generator gen(2);
  for (const Shape& shape : {Shape{3, 5000}, Shape{7, 33, 40}, Shape{1, 1}}) {
    Tensor x = raw::randn(shape, kFloat64, &gen);
    for (int64_t dim : {0, -1}) {
      EXPECT_TRUE(all_close(raw::cumsum(raw::to(x, dev, kFloat64), dim), raw::cumsum(x, dim), 1e-12, 1e-10));
      EXPECT_TRUE(all_close(raw::cumsum(raw::to(x, dev, kFloat32), dim), raw::cumsum(x, dim), 1e-4, 1e-3));
      Tensor xi = raw::to(raw::mul(x, 100.0), kCPU, kInt32);
      Tensor gi = raw::cumsum(raw::to(xi, dev, kInt32), dim);
      EXPECT_EQ(gi.dtype(), kInt64);
      EXPECT_TRUE(raw::equal(raw::to(gi, kCPU, kInt64), raw::cumsum(xi, dim)));
      EXPECT_TRUE(all_close(raw::cumsum(raw::to(x, dev, kFloat64), dim, true), raw::cumsum(x, dim, true), 1e-12, 1e-10));
      EXPECT_TRUE(all_close(raw::cumsum(raw::to(x, dev, kFloat32), dim, true), raw::cumsum(x, dim, true), 1e-4, 1e-3));
      EXPECT_TRUE(raw::equal(raw::to(raw::cumsum(raw::to(xi, dev, kInt32), dim, true), kCPU, kInt64),
                             raw::cumsum(xi, dim, true)));
    }
  }
}

}  // namespace
}  // namespace colony
