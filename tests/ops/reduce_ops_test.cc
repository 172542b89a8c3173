// Reductions (ops/reduce_ops.cc): values against naive loops over the elements written here in
// double, every dim subset of a 3-D tensor, strided inputs (both the in-place column path and the
// permute-and-copy row path), keepdim, negative dims, dtype rules, NaN handling and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "ops/raw_ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;
using testing::values;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor iota(const Shape& shape, DType dtype = kFloat32) {
  return raw::reshape(raw::arange(0, static_cast<double>(shape_numel(shape)), 1, TensorOptions(dtype)), shape);
}

Tensor randn(const Shape& shape, uint64_t seed, DType dtype = kFloat32) {
  Generator gen(seed);
  return raw::randn(shape, TensorOptions(dtype), &gen);
}

// Reduces a 3-D tensor's values over the dims flagged in `reduced` with `fold` (called with the
// elements of one output in row-major order), keeping reduced dims as size 1.
Tensor naive_reduce3(const Tensor& t, std::vector<bool> reduced,
                     const std::function<double(const std::vector<double>&)>& fold) {
  std::vector<double> v = values(t);
  Shape s = t.sizes();
  Shape out_shape = s;
  for (int d = 0; d < 3; ++d)
    if (reduced[d]) out_shape[d] = 1;
  std::vector<double> out;
  for (int64_t i = 0; i < out_shape[0]; ++i)
    for (int64_t j = 0; j < out_shape[1]; ++j)
      for (int64_t k = 0; k < out_shape[2]; ++k) {
        std::vector<double> group;
        for (int64_t a = 0; a < s[0]; ++a)
          for (int64_t b = 0; b < s[1]; ++b)
            for (int64_t c = 0; c < s[2]; ++c) {
              if ((reduced[0] || a == i) && (reduced[1] || b == j) && (reduced[2] || c == k))
                group.push_back(v[(a * s[1] + b) * s[2] + c]);
            }
        out.push_back(fold(group));
      }
  return raw::from_vector(out, out_shape, TensorOptions(kFloat64));
}

double fold_sum(const std::vector<double>& g) {
  double s = 0;
  for (double x : g) s += x;
  return s;
}
double fold_mean(const std::vector<double>& g) { return fold_sum(g) / static_cast<double>(g.size()); }
double fold_var(const std::vector<double>& g, int correction) {
  double m = fold_mean(g), s = 0;
  for (double x : g) s += (x - m) * (x - m);
  return s / static_cast<double>(static_cast<int64_t>(g.size()) - correction);
}
double fold_max(const std::vector<double>& g) {
  double m = g[0];
  for (double x : g) m = std::max(m, x);
  return m;
}
double fold_min(const std::vector<double>& g) {
  double m = g[0];
  for (double x : g) m = std::min(m, x);
  return m;
}

const std::vector<std::vector<int64_t>> kDimSets = {{0}, {1}, {2}, {-1}, {0, 1}, {1, 2}, {0, 2}, {2, 0}, {}};

std::vector<bool> flags(const std::vector<int64_t>& dims) {
  std::vector<bool> r(3, dims.empty());
  for (int64_t d : dims) r[(d + 3) % 3] = true;
  return r;
}

// Every dim subset, on a contiguous tensor and on a permuted (non-contiguous) view of one.
void check_against_naive(const std::function<Tensor(const Tensor&, const std::vector<int64_t>&, bool)>& op,
                         const std::function<double(const std::vector<double>&)>& fold, double rtol) {
  Tensor base = randn({4, 5, 6}, 7);
  Tensor permuted = raw::permute(randn({6, 4, 5}, 8), {1, 2, 0});
  ASSERT_FALSE(permuted.is_contiguous());
  for (const Tensor& t : {base, permuted}) {
    for (const auto& dims : kDimSets) {
      Tensor expected = naive_reduce3(t, flags(dims), fold);
      Tensor kept = op(t, dims, true);
      EXPECT_TRUE(all_close(kept, expected, rtol, 1e-5)) << "dims " << shape_str(dims);
      Tensor dropped = op(t, dims, false);
      Shape want;
      for (int d = 0; d < 3; ++d)
        if (!flags(dims)[d]) want.push_back(t.size(d));
      EXPECT_EQ(dropped.sizes(), want) << "dims " << shape_str(dims);
      EXPECT_TRUE(all_close(raw::reshape(dropped, expected.sizes()), expected, rtol, 1e-5));
    }
  }
}

TEST(Sum, SmallHandValues) {
  Tensor t = iota({2, 3});  // [[0, 1, 2], [3, 4, 5]]
  EXPECT_EQ(values(raw::sum(t)), std::vector<double>({15}));
  EXPECT_EQ(raw::sum(t).dim(), 0);
  EXPECT_EQ(values(raw::sum(t, {0})), std::vector<double>({3, 5, 7}));
  EXPECT_EQ(values(raw::sum(t, {1})), std::vector<double>({3, 12}));
  EXPECT_EQ(raw::sum(t, {-1}, true).sizes(), Shape({2, 1}));
  EXPECT_EQ(raw::sum(t, {}, true).sizes(), Shape({1, 1}));
  EXPECT_EQ(raw::sum(t).dtype(), kFloat32);
}

TEST(Sum, EveryDimSubsetMatchesNaiveLoop) {
  check_against_naive([](const Tensor& t, const std::vector<int64_t>& d, bool k) { return raw::sum(t, d, k); },
                      fold_sum, 1e-5);
}

TEST(Sum, IntegralAndBoolSumToInt64) {
  Tensor i = iota({2, 3}, kInt32);
  Tensor s = raw::sum(i, {1});
  EXPECT_EQ(s.dtype(), kInt64);
  EXPECT_EQ(values(s), std::vector<double>({3, 12}));
  Tensor b = raw::binary(raw::BinaryOp::Gt, iota({2, 3}), 1.5);  // [[f, f, t], [t, t, t]]
  Tensor bs = raw::sum(b, {1});
  EXPECT_EQ(bs.dtype(), kInt64);
  EXPECT_EQ(values(bs), std::vector<double>({1, 3}));
  Tensor u = raw::full({300}, 200, TensorOptions(kUInt8));
  EXPECT_EQ(raw::sum(u).item<int64_t>(), 60000);  // no uint8 wrap-around
}

TEST(Sum, LongFloatSumIsPairwiseAccurate) {
  // 2^20 copies of 0.1f: a left-to-right float sum drifts by about 1%; pairwise summation stays
  // within a few float ulps of the exact sum of the stored values.
  const int64_t n = 1 << 20;
  Tensor t = raw::full({n}, 0.1, TensorOptions(kFloat32));
  double exact = static_cast<double>(0.1f) * n;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    EXPECT_NEAR(raw::sum(t).item<double>(), exact, exact * 1e-6) << threads << " thread(s)";
  }
  // Column path: summing over dim 0 of a contiguous [n/4, 4] tensor.
  Tensor cols = raw::sum(raw::reshape(t, {n / 4, 4}), {0});
  for (double v : values(cols)) EXPECT_NEAR(v, exact / 4, exact / 4 * 1e-6);
}

TEST(Sum, ManyRowsMultithreadedMatchesNaive) {
  set_num_threads(2);
  Tensor t = randn({300, 257}, 11);
  std::vector<double> v = values(t);
  std::vector<double> rows(300, 0.0), cols(257, 0.0);
  for (int64_t i = 0; i < 300; ++i)
    for (int64_t j = 0; j < 257; ++j) {
      rows[i] += v[i * 257 + j];
      cols[j] += v[i * 257 + j];
    }
  EXPECT_TRUE(all_close(raw::sum(t, {1}), raw::from_vector(rows, {300}, TensorOptions(kFloat64)), 1e-5, 1e-4));
  EXPECT_TRUE(all_close(raw::sum(t, {0}), raw::from_vector(cols, {257}, TensorOptions(kFloat64)), 1e-5, 1e-4));
}

TEST(Sum, Float16AccumulatesInFloat) {
  // 4096 halves of 1.0: a half accumulator would stop at 2048 (2048 + 1 rounds back to 2048).
  Tensor h = raw::ones({4096}, TensorOptions(kFloat16));
  Tensor s = raw::sum(h);
  EXPECT_EQ(s.dtype(), kFloat16);
  EXPECT_EQ(s.item<double>(), 4096.0);
  Tensor bf = raw::ones({4, 1000}, TensorOptions(kBFloat16));
  EXPECT_EQ(values(raw::sum(bf, {1})), std::vector<double>(4, 1000.0));
}

TEST(Sum, EmptyReductionIsZero) {
  Tensor e = raw::zeros({0, 3});
  EXPECT_EQ(values(raw::sum(e, {0})), std::vector<double>({0, 0, 0}));
  EXPECT_EQ(raw::sum(e, {1}).sizes(), Shape({0}));
  EXPECT_EQ(raw::sum(e).item<double>(), 0.0);
}

TEST(Sum, ZeroDimTensor) {
  Tensor s = raw::scalar_tensor(2.5);
  EXPECT_EQ(raw::sum(s).item<double>(), 2.5);
  EXPECT_EQ(raw::sum(s, {0}).item<double>(), 2.5);
  EXPECT_EQ(raw::sum(s, {-1}, true).dim(), 0);
}

TEST(Sum, DimErrors) {
  Tensor t = iota({2, 3});
  EXPECT_TRUE(throws_with([&] { raw::sum(t, {2}); }, "sum: dim 2 out of range"));
  EXPECT_TRUE(throws_with([&] { raw::sum(t, {-3}); }, "out of range"));
  EXPECT_TRUE(throws_with([&] { raw::sum(t, {1, -1}); }, "appears more than once"));
}

TEST(Mean, MatchesNaiveAndRejectsIntegers) {
  check_against_naive([](const Tensor& t, const std::vector<int64_t>& d, bool k) { return raw::mean(t, d, k); },
                      fold_mean, 1e-5);
  EXPECT_TRUE(throws_with([] { raw::mean(iota({3}, kInt64)); },
                          "mean: could not infer output dtype. Input dtype must be a floating point dtype, got int64"));
  EXPECT_TRUE(std::isnan(raw::mean(raw::zeros({0})).item<double>()));
  Tensor d = iota({2, 2}, kFloat64);
  EXPECT_EQ(values(raw::mean(d, {0})), std::vector<double>({1, 2}));
}

// raw::vector_norm2: sqrt(sum(x^2)) with x read once (kernels/common/vector_norm.h).
double fold_norm2(const std::vector<double>& g) {
  double s = 0;
  for (double x : g) s += x * x;
  return std::sqrt(s);
}

TEST(VectorNorm2, EveryDimSubsetMatchesNaiveLoop) {
  check_against_naive(
      [](const Tensor& t, const std::vector<int64_t>& d, bool k) { return raw::vector_norm2(t, d, k); }, fold_norm2,
      1e-6);
}

// The rows (inner == 1: pairwise trees, long rows cut into pieces) and the columns (inner > 1:
// block counters, rows split into groups) give the same bits on 1 and 2 threads, within float32
// rounding of the float64 norm, and within a few ulps of sqrt(sum(square(x))), whose additions
// they repeat (each square may skip its rounding under a fused multiply-add).
TEST(VectorNorm2, RowsAndColumnsIndependentOfThreadsAndAsSumOfSquares) {
  struct Shaped {
    Shape shape;
    std::vector<int64_t> dims;
  };
  for (const Shaped& c : std::vector<Shaped>{{{300, 1029}, {1}},      // many rows, a tail of 5
                                             {{2, 100003}, {1}},      // few long rows: pieces
                                             {{70001}, {}},           // a full reduction
                                             {{5000, 3}, {0}},        // tall columns: groups
                                             {{7, 300, 33}, {1}},     // slabs of columns
                                             {{3, 40, 50}, {0, 1}}}) {
    SCOPED_TRACE(shape_str(c.shape));
    Tensor x = randn(c.shape, 31);
    set_num_threads(1);
    Tensor one = raw::vector_norm2(x, c.dims);
    set_num_threads(2);
    Tensor two = raw::vector_norm2(x, c.dims);
    EXPECT_TRUE(raw::equal(one, two));
    Tensor x64 = raw::to(x, kCPU, kFloat64);
    EXPECT_TRUE(all_close(one, raw::vector_norm2(x64, c.dims), 1e-6, 0));
    Tensor composed = raw::unary(raw::UnaryOp::Sqrt, raw::sum(raw::mul(x, x), c.dims));
    EXPECT_TRUE(all_close(one, composed, 4e-7, 0));
  }
}

TEST(VectorNorm2, SpecialValuesDtypesAndErrors) {
  const double kInf = std::numeric_limits<double>::infinity();
  // A NaN anywhere gives NaN, even beside an infinity; +-inf gives inf; zeros (-0 too) give +0;
  // on the row path and, transposed, the column path.
  Tensor x = raw::tensor({{1.0, kNaN, 2.0}, {kInf, 1.0, kNaN}, {-kInf, 3.0, 4.0}, {0.0, -0.0, 0.0}, {3.0, 4.0, 12.0}});
  for (bool columns : {false, true}) {
    Tensor t = columns ? raw::contiguous(raw::transpose(x, 0, 1)) : x;
    std::vector<double> n = values(raw::vector_norm2(t, {columns ? 0 : 1}));
    ASSERT_EQ(n.size(), 5u);
    EXPECT_TRUE(std::isnan(n[0]));
    EXPECT_TRUE(std::isnan(n[1]));
    EXPECT_EQ(n[2], kInf);
    EXPECT_EQ(n[3], 0.0);
    EXPECT_FALSE(std::signbit(n[3]));
    EXPECT_EQ(n[4], 13.0);
  }
  // float16 and bfloat16 square in float32: 300^2 + 400^2 overflows a half, the norm does not.
  for (DType dt : {kFloat16, kBFloat16}) {
    Tensor h = raw::to(raw::tensor({{300.0, 400.0}, {-6.0, 8.0}}), kCPU, dt);
    Tensor n = raw::vector_norm2(h, {1});
    EXPECT_EQ(n.dtype(), dt);
    EXPECT_EQ(values(n), std::vector<double>({500.0, 10.0})) << dtype_name(dt);
  }
  EXPECT_EQ(values(raw::vector_norm2(raw::tensor({{3.0, 4.0}}, kFloat64), {1})), std::vector<double>({5.0}));
  // Empty reductions are 0; empty outputs are empty.
  EXPECT_EQ(values(raw::vector_norm2(raw::zeros({0, 3}), {0})), std::vector<double>({0, 0, 0}));
  EXPECT_EQ(raw::vector_norm2(raw::zeros({0, 3}), {1}).sizes(), Shape({0}));
  EXPECT_TRUE(throws_with([] { raw::vector_norm2(iota({2, 3}, kInt64)); }, "norm: expected a floating point tensor"));
  EXPECT_TRUE(throws_with([] { raw::vector_norm2(iota({2, 3}), {2}); }, "out of range"));
}

TEST(Var, UnbiasedAndBiasedMatchNaive) {
  check_against_naive(
      [](const Tensor& t, const std::vector<int64_t>& d, bool k) { return raw::var(t, d, true, k); },
      [](const std::vector<double>& g) { return fold_var(g, 1); }, 1e-4);
  check_against_naive(
      [](const Tensor& t, const std::vector<int64_t>& d, bool k) { return raw::var(t, d, false, k); },
      [](const std::vector<double>& g) { return fold_var(g, 0); }, 1e-4);
}

TEST(Var, HandValuesAndEdgeCases) {
  Tensor t = raw::tensor({1, 2, 3, 4}, kFloat64);  // mean 2.5, squared deviations sum to 5
  EXPECT_DOUBLE_EQ(raw::var(t).item<double>(), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(raw::var(t, {}, false).item<double>(), 5.0 / 4.0);
  // One element: Bessel's correction divides by zero, giving NaN as PyTorch does.
  EXPECT_TRUE(std::isnan(raw::var(raw::tensor({3.0})).item<double>()));
  EXPECT_EQ(raw::var(raw::tensor({3.0}), {}, false).item<double>(), 0.0);
  // A large offset: a one-pass E[x^2] - E[x]^2 in float would lose every digit.
  Tensor shifted = raw::add(raw::tensor({1, 2, 3, 4}, kFloat32), 1e4);
  EXPECT_NEAR(raw::var(shifted).item<double>(), 5.0 / 3.0, 1e-3);
  EXPECT_TRUE(throws_with([] { raw::var(iota({3}, kInt32)); }, "var: only floating point dtypes are supported, got int32"));
}

TEST(Var, LongRowSplitAcrossThreads) {
  set_num_threads(2);
  const int64_t n = 100000;
  Tensor t = raw::add(randn({n}, 21, kFloat64), 3.0);
  std::vector<double> v = values(t);
  EXPECT_NEAR(raw::var(t).item<double>(), fold_var(v, 1), 1e-10);
}

TEST(AmaxAmin, MatchNaiveAndKeepDtype) {
  check_against_naive([](const Tensor& t, const std::vector<int64_t>& d, bool k) { return raw::amax(t, d, k); },
                      fold_max, 0);
  check_against_naive([](const Tensor& t, const std::vector<int64_t>& d, bool k) { return raw::amin(t, d, k); },
                      fold_min, 0);
  Tensor i = raw::from_vector(std::vector<int64_t>{5, -7, 3, 9}, {2, 2});
  Tensor m = raw::amax(i, {1});
  EXPECT_EQ(m.dtype(), kInt64);
  EXPECT_EQ(values(m), std::vector<double>({5, 9}));
  EXPECT_EQ(values(raw::amin(i, {0})), std::vector<double>({3, -7}));
}

TEST(AmaxAmin, NaNPropagatesAndEmptyIsAnError) {
  Tensor t = raw::tensor({{1, kNaN, 3}, {4, 5, 6}});
  std::vector<double> mx = values(raw::amax(t, {1}));
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_EQ(mx[1], 6);
  EXPECT_TRUE(std::isnan(raw::amin(t).item<double>()));
  EXPECT_TRUE(throws_with([] { raw::amax(raw::zeros({0, 3})); }, "amax: cannot reduce over a dimension of size 0"));
  EXPECT_EQ(raw::amax(raw::zeros({0, 3}), {1}).sizes(), Shape({0}));
}

TEST(MaxMin, ValuesAndFirstIndexOfTies) {
  Tensor t = raw::tensor({{1, 3, 3, 2}, {2, 0, 5, 0}});
  auto [v, i] = raw::max(t, 1);
  EXPECT_EQ(values(v), std::vector<double>({3, 5}));
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(values(i), std::vector<double>({1, 2}));
  auto [mv, mi] = raw::min(t, -1, true);
  EXPECT_EQ(mv.sizes(), Shape({2, 1}));
  EXPECT_EQ(values(mv), std::vector<double>({1, 0}));
  EXPECT_EQ(values(mi), std::vector<double>({0, 1}));
  auto [cv, ci] = raw::max(t, 0);
  EXPECT_EQ(values(cv), std::vector<double>({2, 3, 5, 2}));
  EXPECT_EQ(values(ci), std::vector<double>({1, 0, 1, 0}));
}

TEST(MaxMin, NaNWinsAtItsFirstPosition) {
  Tensor t = raw::tensor({1, kNaN, 5, kNaN});
  auto [v, i] = raw::max(t, 0);
  EXPECT_TRUE(std::isnan(v.item<double>()));
  EXPECT_EQ(i.item<int64_t>(), 1);
  EXPECT_EQ(raw::argmin(t, 0).item<int64_t>(), 1);
}

TEST(MaxMin, StridedInputAndNaiveArgmax) {
  Tensor t = raw::transpose(randn({7, 9}, 31), 0, 1);  // [9, 7], non-contiguous
  std::vector<double> v = values(t);
  for (int64_t dim : {0, 1}) {
    std::vector<double> want_idx, want_max;
    int64_t rows = dim == 1 ? 9 : 7, len = dim == 1 ? 7 : 9;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t best = 0;
      auto at = [&](int64_t k) { return dim == 1 ? v[r * 7 + k] : v[k * 7 + r]; };
      for (int64_t k = 1; k < len; ++k)
        if (at(k) > at(best)) best = k;
      want_idx.push_back(static_cast<double>(best));
      want_max.push_back(at(best));
    }
    EXPECT_EQ(values(raw::argmax(t, dim)), want_idx);
    EXPECT_EQ(values(raw::max(t, dim).first), want_max);
  }
}

TEST(MaxMin, LongRowSplitAcrossThreadsKeepsFirstOccurrence) {
  set_num_threads(2);
  const int64_t n = 200000;
  std::vector<float> v(n, 0.0f);
  v[150001] = 7.0f;  // in the second thread's piece...
  v[190000] = 7.0f;
  v[120000] = -3.0f;
  v[170000] = -3.0f;
  Tensor t = raw::from_vector(v);
  EXPECT_EQ(raw::argmax(t, 0).item<int64_t>(), 150001);
  EXPECT_EQ(raw::argmin(t, 0).item<int64_t>(), 120000);
  v[3] = 7.0f;  // ...and a tie in the first one wins.
  EXPECT_EQ(raw::argmax(raw::from_vector(v), 0).item<int64_t>(), 3);
}

TEST(MaxMin, IntegerBoolAndZeroDim) {
  Tensor i = raw::from_vector(std::vector<int32_t>{4, 9, 9, -1}, {4});
  auto [v, idx] = raw::max(i, 0);
  EXPECT_EQ(v.dtype(), kInt32);
  EXPECT_EQ(v.item<int64_t>(), 9);
  EXPECT_EQ(idx.item<int64_t>(), 1);
  Tensor b = raw::binary(raw::BinaryOp::Gt, raw::tensor({0, 0, 1, 1}), 0.5);
  EXPECT_EQ(raw::argmax(b, 0).item<int64_t>(), 2);
  auto [sv, si] = raw::max(raw::scalar_tensor(4.0), 0);
  EXPECT_EQ(sv.item<double>(), 4.0);
  EXPECT_EQ(si.item<int64_t>(), 0);
}

TEST(MaxMin, Errors) {
  EXPECT_TRUE(throws_with([] { raw::max(raw::zeros({2, 0}), 1); }, "max: cannot reduce over a dimension of size 0"));
  EXPECT_TRUE(throws_with([] { raw::argmin(raw::zeros({2, 3}), 2); }, "argmin: dim 2 out of range"));
}

TEST(SumTo, ReversesBroadcasting) {
  Tensor t = iota({2, 3});
  EXPECT_EQ(values(raw::sum_to(t, {3})), std::vector<double>({3, 5, 7}));
  Tensor col = raw::sum_to(t, {2, 1});
  EXPECT_EQ(col.sizes(), Shape({2, 1}));
  EXPECT_EQ(values(col), std::vector<double>({3, 12}));
  EXPECT_EQ(raw::sum_to(t, {}).item<double>(), 15);
  // Column c of iota [4, 2, 3] holds c, c + 3, ..., c + 21: they sum to 8c + 84.
  EXPECT_EQ(values(raw::sum_to(iota({4, 2, 3}), {1, 3})), std::vector<double>({84, 92, 100}));
  Tensor same = raw::sum_to(t, {2, 3});
  EXPECT_TRUE(same.is_same(t));
  // Only leading size-1 dims differ: a reshape, no sum.
  EXPECT_EQ(values(raw::sum_to(iota({1, 3}), {3})), std::vector<double>({0, 1, 2}));
  EXPECT_TRUE(throws_with([&] { raw::sum_to(t, {2}); }, "sum_to: shape [2] does not broadcast to [2, 3]"));
  EXPECT_TRUE(throws_with([&] { raw::sum_to(t, {1, 2, 3}); }, "does not broadcast"));
}

// ---------- CUDA against CPU ----------

void expect_cuda_matches(const Tensor& cpu_in, const std::function<Tensor(const Tensor&)>& op, double rtol,
                         double atol) {
  Tensor want = op(cpu_in);
  Tensor got = op(raw::to(cpu_in, Device::cuda(0), cpu_in.dtype()));
  EXPECT_TRUE(got.is_cuda());
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_TRUE(all_close(got, want, rtol, atol));
}

TEST(Reduce, SumMeanVar_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const Shape& shape : {Shape{37, 5, 70}, Shape{3, 2000, 64}, Shape{1, 100000}, Shape{4096, 3}}) {
    Tensor t = randn(shape, 41);
    for (const auto& dims : std::vector<std::vector<int64_t>>{{0}, {1}, {-1}, {0, 1}, {}}) {
      if (static_cast<int64_t>(shape.size()) < 3 && (dims == std::vector<int64_t>{0, 1})) continue;
      SCOPED_TRACE(shape_str(shape) + " dims " + shape_str(dims));
      expect_cuda_matches(t, [&](const Tensor& x) { return raw::sum(x, dims); }, 1e-4, 1e-3);
      expect_cuda_matches(t, [&](const Tensor& x) { return raw::mean(x, dims, true); }, 1e-4, 1e-5);
      expect_cuda_matches(t, [&](const Tensor& x) { return raw::var(x, dims); }, 1e-4, 1e-5);
      expect_cuda_matches(t, [&](const Tensor& x) { return raw::amax(x, dims); }, 0, 0);
    }
  }
  Tensor h = raw::to(randn({64, 3000}, 43), kCPU, kFloat16);
  expect_cuda_matches(h, [](const Tensor& x) { return raw::sum(x, {1}); }, 2e-3, 1e-2);
  Tensor i = raw::randint(-50, 50, {33, 1500});
  expect_cuda_matches(i, [](const Tensor& x) { return raw::sum(x, {0}); }, 0, 0);
  expect_cuda_matches(i, [](const Tensor& x) { return raw::sum(x, {1}); }, 0, 0);
}

TEST(VectorNorm2, MatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  // Rows by warps and blocks, few long rows and a full reduction in two passes, columns in one
  // pass and in two (tall), a 3-D middle dim; float64, float16, and the special values.
  struct Shaped {
    Shape shape;
    std::vector<int64_t> dims;
  };
  for (const Shaped& c : std::vector<Shaped>{{{37, 5, 70}, {2}},
                                             {{3, 2000, 64}, {1}},
                                             {{3, 500000}, {1}},
                                             {{3000000}, {}},
                                             {{4096, 33}, {0}},
                                             {{1000000, 64}, {0}},
                                             {{37, 5, 70}, {0, 1}}}) {
    SCOPED_TRACE(shape_str(c.shape) + " dims " + shape_str(c.dims));
    Tensor t = randn(c.shape, 71);
    expect_cuda_matches(t, [&](const Tensor& x) { return raw::vector_norm2(x, c.dims); }, 1e-5, 1e-6);
  }
  expect_cuda_matches(randn({64, 300}, 72, kFloat64), [](const Tensor& x) { return raw::vector_norm2(x, {1}); },
                      1e-12, 0);
  Tensor h = raw::to(raw::mul(randn({64, 3000}, 73), 100.0), kCPU, kFloat16);
  expect_cuda_matches(h, [](const Tensor& x) { return raw::vector_norm2(x, {1}); }, 2e-3, 0);
  const double kInf = std::numeric_limits<double>::infinity();
  Tensor special = raw::tensor({{1.0, kNaN, 2.0}, {kInf, 1.0, kNaN}, {-kInf, 3.0, 4.0}, {0.0, -0.0, 0.0}});
  expect_cuda_matches(special, [](const Tensor& x) { return raw::vector_norm2(x, {1}); }, 0, 0);
  expect_cuda_matches(special, [](const Tensor& x) { return raw::vector_norm2(x, {0}); }, 0, 0);
}

TEST(Reduce, FullAndFewLongRowSumsUseTheWholeDevice_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  // Shapes split into two passes (kernels::split_rows): one row of 3M (a full reduction), three
  // rows of 500K, and the edge just past 2 chunks of 16384; then the same values again in one
  // row of 32767 (one pass) for contrast.
  for (const Shape& shape : {Shape{3000000}, Shape{3, 500000}, Shape{32769}, Shape{32767}}) {
    SCOPED_TRACE(shape_str(shape));
    Tensor t = randn(shape, 51);
    std::vector<int64_t> last = {static_cast<int64_t>(shape.size()) - 1};
    expect_cuda_matches(t, [](const Tensor& x) { return raw::sum(x); }, 1e-4, 1e-2);
    expect_cuda_matches(t, [](const Tensor& x) { return raw::mean(x); }, 1e-4, 1e-6);
    expect_cuda_matches(t, [&](const Tensor& x) { return raw::sum(x, last); }, 1e-4, 1e-2);
  }
  // Tall column sums (x.sum(0) with few columns) deal their rows to many blocks too.
  for (const Shape& shape : {Shape{1000000, 64}, Shape{300000, 5}, Shape{2, 200000, 40}}) {
    SCOPED_TRACE(shape_str(shape) + " columns");
    Tensor t = randn(shape, 53);
    const int64_t rows_dim = static_cast<int64_t>(shape.size()) - 2;
    expect_cuda_matches(t, [&](const Tensor& x) { return raw::sum(x, {rows_dim}); }, 1e-4, 1e-2);
    expect_cuda_matches(t, [&](const Tensor& x) { return raw::mean(x, {rows_dim}); }, 1e-4, 1e-6);
  }
  Tensor ic = raw::randint(-1000, 1000, {500000, 7});
  expect_cuda_matches(ic, [](const Tensor& x) { return raw::sum(x, {0}); }, 0, 0);
  // Exact where the arithmetic is: 2^25 float ones (one float accumulator would stop at 2^24;
  // each block's partial stays far below), and int64.
  Tensor ones = raw::ones({int64_t{1} << 25}, TensorOptions(kFloat32).device(Device::cuda(0)));
  EXPECT_EQ(raw::sum(ones).item<double>(), static_cast<double>(int64_t{1} << 25));
  Tensor i = raw::randint(-1000, 1000, {2000000});
  expect_cuda_matches(i, [](const Tensor& x) { return raw::sum(x); }, 0, 0);
  Tensor h = raw::to(randn({1000000}, 52), kCPU, kFloat16);
  expect_cuda_matches(h, [](const Tensor& x) { return raw::mean(x); }, 2e-3, 2e-3);
}

TEST(Reduce, MaxMinArgmax_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const Shape& shape : {Shape{50, 17}, Shape{8, 5000}, Shape{3, 300, 40}}) {
    // Few distinct values: many ties, so first-occurrence indices are exercised.
    Tensor t = raw::unary(raw::UnaryOp::Round, raw::mul(randn(shape, 51), 2.0));
    for (int64_t dim : {0, 1, -1}) {
      SCOPED_TRACE(shape_str(shape) + " dim " + std::to_string(dim));
      expect_cuda_matches(t, [&](const Tensor& x) { return raw::max(x, dim).first; }, 0, 0);
      expect_cuda_matches(t, [&](const Tensor& x) { return raw::max(x, dim).second; }, 0, 0);
      expect_cuda_matches(t, [&](const Tensor& x) { return raw::min(x, dim, true).second; }, 0, 0);
      expect_cuda_matches(t, [&](const Tensor& x) { return raw::argmax(x, dim); }, 0, 0);
    }
  }
  Tensor n = raw::tensor({1, kNaN, 5, kNaN, 2});
  expect_cuda_matches(n, [](const Tensor& x) { return raw::argmax(x, 0); }, 0, 0);
  expect_cuda_matches(n, [](const Tensor& x) { return raw::amin(x); }, 0, 0);
}

TEST(Reduce, FewLongRowMaxMinVarUseTheWholeDevice_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  // The shapes the sum splits into two passes (kernels::split_rows), and one just below the edge.
  for (const Shape& shape : {Shape{3000000}, Shape{3, 500000}, Shape{32769}, Shape{32767}}) {
    SCOPED_TRACE(shape_str(shape));
    // Few distinct values: the extremes tie across the blocks of a row, so the first occurrence
    // must win over a later block's.
    Tensor t = raw::unary(raw::UnaryOp::Round, raw::mul(randn(shape, 61), 2.0));
    const int64_t last = static_cast<int64_t>(shape.size()) - 1;
    expect_cuda_matches(t, [&](const Tensor& x) { return raw::max(x, last).first; }, 0, 0);
    expect_cuda_matches(t, [&](const Tensor& x) { return raw::max(x, last).second; }, 0, 0);
    expect_cuda_matches(t, [&](const Tensor& x) { return raw::min(x, last).second; }, 0, 0);
    expect_cuda_matches(t, [](const Tensor& x) { return raw::amax(x); }, 0, 0);
    expect_cuda_matches(t, [](const Tensor& x) { return raw::amin(x); }, 0, 0);
    Tensor r = randn(shape, 62);
    expect_cuda_matches(r, [&](const Tensor& x) { return raw::var(x, {last}); }, 1e-4, 1e-6);
    expect_cuda_matches(r, [](const Tensor& x) { return raw::var(x, {}); }, 1e-4, 1e-6);
  }
  // A NaN in a late block wins over every number; of two NaNs, the first.
  Tensor n = randn({2000000}, 63);
  n.data_ptr<float>()[1500000] = static_cast<float>(kNaN);
  n.data_ptr<float>()[1900000] = static_cast<float>(kNaN);
  expect_cuda_matches(n, [](const Tensor& x) { return raw::argmax(x, 0); }, 0, 0);
  expect_cuda_matches(n, [](const Tensor& x) { return raw::argmin(x, 0); }, 0, 0);
  // Integers and float64 take the same two passes.
  Tensor i = raw::randint(-1000, 1000, {2000000});
  expect_cuda_matches(i, [](const Tensor& x) { return raw::max(x, 0).second; }, 0, 0);
  Tensor d = randn({2000000}, 64, kFloat64);
  expect_cuda_matches(d, [](const Tensor& x) { return raw::var(x, {}); }, 1e-10, 1e-12);
}

}  // namespace
}  // namespace colony
