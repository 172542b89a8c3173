// raw::resample and raw::resample_adjoint (ops/resample_ops.cc, kernels/cpu/resample.cc,
// kernels/cuda/resample.cu) against the dense [out, in] product on random taps: both kernels'
// loops (the last dim, blocked over outputs; inner rows, cut into pieces), the adjoint identity
// <adjoint(y), x> == <y, forward(x)>, the thread count, the refusals, and CUDA against the CPU.
#include "ops/resample_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/common/resample.h"
#include "kernels/cpu/parallel.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using colony::testing::throws_with;
using colony::testing::values;

// Random taps: `taps` positions from a non-decreasing random start, weights in [-1, 1).
raw::ResampleTaps random_taps(int64_t in, int64_t out, int64_t taps, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> pick(0, in - taps);
  raw::ResampleTaps r;
  r.in = in;
  r.taps = taps;
  r.start.resize(out);
  for (auto& s : r.start) s = pick(gen);
  std::sort(r.start.begin(), r.start.end());
  r.weight = colony::testing::random_values(out * taps, seed + 1);
  return r;
}

// The interpolation matrix of the taps, [out, in], row-major.
std::vector<double> dense(const raw::ResampleTaps& r) {
  std::vector<double> m(r.out() * r.in, 0.0);
  for (int64_t j = 0; j < r.out(); ++j) {
    for (int64_t t = 0; t < r.taps; ++t) m[j * r.in + r.start[j] + t] += r.weight[j * r.taps + t];
  }
  return m;
}

// y[o, j, i] = sum_p m[j, p] x[o, p, i] (transposed: gx[o, p, i] = sum_j m[j, p] gy[o, j, i]).
std::vector<double> dense_apply(const std::vector<double>& m, const std::vector<double>& x, int64_t outer,
                                int64_t in, int64_t out, int64_t inner, bool transposed) {
  const int64_t from = transposed ? out : in, to = transposed ? in : out;
  std::vector<double> y(outer * to * inner, 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t a = 0; a < to; ++a) {
      for (int64_t b = 0; b < from; ++b) {
        const double w = transposed ? m[b * in + a] : m[a * in + b];
        for (int64_t i = 0; i < inner; ++i) y[(o * to + a) * inner + i] += w * x[(o * from + b) * inner + i];
      }
    }
  }
  return y;
}

Tensor tensor_of(const std::vector<double>& v, const Shape& shape, DType dtype) {
  return raw::to(raw::from_vector(v, shape), kCPU, dtype);
}

bool close(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(std::abs(a[i] - b[i]) <= tol * (1.0 + std::abs(b[i])))) return false;
  }
  return true;
}

struct Geometry {
  int64_t outer, in, out, inner, taps;
};

// The last dim (inner 1) with outputs more than one block of 64 and fewer; inner rows shorter and
// longer than one piece of 1024; taps from 1 to the whole input; a downsample and an upsample.
const std::vector<Geometry>& geometries() {
  static const std::vector<Geometry> all = {
      {3, 20, 150, 1, 2},  {2, 17, 5, 1, 4},   {4, 9, 70, 1, 9},  {1, 300, 40, 1, 13},
      {2, 11, 23, 5, 2},   {3, 40, 13, 7, 6},  {1, 6, 9, 1500, 4}, {2, 5, 3, 3, 1},
  };
  return all;
}

TEST(Resample, ForwardAndAdjointMatchTheDenseProduct) {
  uint32_t seed = 1;
  for (const Geometry& g : geometries()) {
    SCOPED_TRACE(::testing::Message() << "outer " << g.outer << " in " << g.in << " out " << g.out << " inner "
                                      << g.inner << " taps " << g.taps);
    const raw::ResampleTaps r = random_taps(g.in, g.out, g.taps, seed += 7);
    const std::vector<double> m = dense(r);
    const std::vector<double> x = colony::testing::random_values(g.outer * g.in * g.inner, seed + 3);
    const std::vector<double> gy = colony::testing::random_values(g.outer * g.out * g.inner, seed + 5);
    const std::vector<double> y_ref = dense_apply(m, x, g.outer, g.in, g.out, g.inner, false);
    const std::vector<double> gx_ref = dense_apply(m, gy, g.outer, g.in, g.out, g.inner, true);
    for (DType dtype : {kFloat64, kFloat32}) {
      SCOPED_TRACE(dtype_name(dtype));
      const double tol = dtype == kFloat64 ? 1e-13 : 2e-6;
      Tensor y = raw::resample(tensor_of(x, {g.outer, g.in, g.inner}, dtype), 1, r);
      EXPECT_EQ(y.sizes(), (Shape{g.outer, g.out, g.inner}));
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_TRUE(close(values(y), y_ref, tol)) << "forward";
      Tensor gx = raw::resample_adjoint(tensor_of(gy, {g.outer, g.out, g.inner}, dtype), 1, r);
      EXPECT_EQ(gx.sizes(), (Shape{g.outer, g.in, g.inner}));
      EXPECT_TRUE(close(values(gx), gx_ref, tol)) << "adjoint";
    }
  }
}

// <adjoint(gy), x> == <gy, forward(x)> in float64, the identity that makes the adjoint the
// forward's gradient.
TEST(Resample, AdjointIdentity) {
  uint32_t seed = 100;
  for (const Geometry& g : geometries()) {
    const raw::ResampleTaps r = random_taps(g.in, g.out, g.taps, seed += 11);
    const std::vector<double> x = colony::testing::random_values(g.outer * g.in * g.inner, seed + 1);
    const std::vector<double> gy = colony::testing::random_values(g.outer * g.out * g.inner, seed + 2);
    const std::vector<double> y = values(raw::resample(tensor_of(x, {g.outer, g.in, g.inner}, kFloat64), 1, r));
    const std::vector<double> gx =
        values(raw::resample_adjoint(tensor_of(gy, {g.outer, g.out, g.inner}, kFloat64), 1, r));
    double lhs = 0, rhs = 0, scale = 0;
    for (size_t i = 0; i < x.size(); ++i) lhs += gx[i] * x[i], scale += std::abs(gx[i] * x[i]);
    for (size_t i = 0; i < y.size(); ++i) rhs += gy[i] * y[i];
    EXPECT_NEAR(lhs, rhs, 1e-12 * scale) << "in " << g.in << " out " << g.out << " inner " << g.inner;
  }
}

// Any dim of a non-contiguous input: the kernel reads the contiguous copy as [outer, in, inner].
TEST(Resample, MiddleDimOfAStridedInput) {
  const raw::ResampleTaps r = random_taps(6, 10, 3, 5);
  Tensor base = tensor_of(colony::testing::random_values(4 * 6 * 5, 9), {4, 5, 6}, kFloat64);
  Tensor x = raw::transpose(base, 1, 2);  // [4, 6, 5], not contiguous
  Tensor y = raw::resample(x, 1, r);
  EXPECT_EQ(y.sizes(), (Shape{4, 10, 5}));
  EXPECT_TRUE(close(values(y), dense_apply(dense(r), values(x), 4, 6, 10, 5, false), 1e-13));
}

// Each output is one sum in a fixed order: the same bits on one thread as on several.
TEST(Resample, SameBitsOnAnyThreadCount) {
  const int saved = kernels::cpu::num_threads();
  const raw::ResampleTaps r = random_taps(200, 450, 4, 21);
  Tensor x = tensor_of(colony::testing::random_values(64 * 200, 22), {64, 200, 1}, kFloat32);
  Tensor xi = tensor_of(colony::testing::random_values(8 * 200 * 40, 23), {8, 200, 40}, kFloat32);
  Tensor g = tensor_of(colony::testing::random_values(64 * 450, 24), {64, 450, 1}, kFloat32);
  kernels::cpu::set_num_threads(1);
  const auto y1 = values(raw::resample(x, 1, r)), yi1 = values(raw::resample(xi, 1, r));
  const auto g1 = values(raw::resample_adjoint(g, 1, r));
  kernels::cpu::set_num_threads(3);
  EXPECT_EQ(values(raw::resample(x, 1, r)), y1);
  EXPECT_EQ(values(raw::resample(xi, 1, r)), yi1);
  EXPECT_EQ(values(raw::resample_adjoint(g, 1, r)), g1);
  kernels::cpu::set_num_threads(saved);
}

// The readers table: the outputs whose taps cover each input position, none for an uncovered one.
TEST(Resample, ReadersTable) {
  const std::vector<int64_t> start = {0, 0, 2, 5};  // taps 2: covers 0-1, 0-1, 2-3, 5-6 of 8
  std::vector<int64_t> readers(16);
  kernels::resample_readers(start.data(), 8, 4, 2, readers.data());
  EXPECT_EQ(readers, (std::vector<int64_t>{0, 2, 0, 2, 2, 3, 2, 3, 3, 3, 3, 4, 3, 4, 4, 4}));
}

TEST(Resample, Refusals) {
  const raw::ResampleTaps r = random_taps(6, 4, 2, 3);
  Tensor x = tensor_of(std::vector<double>(12, 1.0), {2, 6}, kFloat64);
  EXPECT_TRUE(throws_with([&] { raw::resample(raw::to(x, kCPU, kInt64), 1, r); }, "expects a float32 or float64"));
  EXPECT_TRUE(throws_with([&] { raw::resample(x, 0, r); }, "dim 0 of a 2-D tensor must have size 6"));
  EXPECT_TRUE(throws_with([&] { raw::resample_adjoint(x, 1, r); }, "dim 1 of a 2-D tensor must have size 4"));
  raw::ResampleTaps bad = r;
  bad.start = {3, 1, 2, 2};
  EXPECT_TRUE(throws_with([&] { raw::resample(x, 1, bad); }, "non-decreasing and within the input"));
  bad.start = {0, 0, 0, 5};
  EXPECT_TRUE(throws_with([&] { raw::resample(x, 1, bad); }, "non-decreasing and within the input"));
  bad = r;
  bad.weight.pop_back();
  EXPECT_TRUE(throws_with([&] { raw::resample(x, 1, bad); }, "inconsistent taps"));
}

// cuda:0 against the CPU, both directions, float32 and float64, every geometry.
TEST(Resample, OnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  uint32_t seed = 300;
  for (const Geometry& g : geometries()) {
    const raw::ResampleTaps r = random_taps(g.in, g.out, g.taps, seed += 13);
    for (DType dtype : {kFloat64, kFloat32}) {
      Tensor x = tensor_of(colony::testing::random_values(g.outer * g.in * g.inner, seed + 1), {g.outer, g.in, g.inner}, dtype);
      Tensor gy =
          tensor_of(colony::testing::random_values(g.outer * g.out * g.inner, seed + 2), {g.outer, g.out, g.inner}, dtype);
      const double tol = dtype == kFloat64 ? 1e-13 : 2e-6;
      EXPECT_TRUE(close(values(raw::resample(raw::to(x, Device::cuda(0), dtype), 1, r)), values(raw::resample(x, 1, r)), tol));
      EXPECT_TRUE(close(values(raw::resample_adjoint(raw::to(gy, Device::cuda(0), dtype), 1, r)),
                        values(raw::resample_adjoint(gy, 1, r)), tol));
    }
  }
}

}  // namespace
}  // namespace colony
