#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/common/philox.h"
#include "kernels/common/random_fill.h"
#include "ops/raw_ops.h"
#include "tensor/threads.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::values;

TEST(Philox, MatchesPublishedKnownAnswer) {
  // Random123's kat_vectors for philox4x32-10: counter 0 and key 0 give this block.
  kernels::Philox4 r = kernels::philox4x32_10(0, 0);
  EXPECT_EQ(r.v[0], 0x6627e8d5u);
  EXPECT_EQ(r.v[1], 0xe169c58du);
  EXPECT_EQ(r.v[2], 0xbc57ac4cu);
  EXPECT_EQ(r.v[3], 0x9b00dbd8u);
}

TEST(Random, SameSeedSameBits) {
  manual_seed(123);
  Tensor a = raw::randn({1000});
  Tensor b = raw::rand({7, 3}, kFloat64);
  manual_seed(123);
  Tensor c = raw::randn({1000});
  Tensor d = raw::rand({7, 3}, kFloat64);
  EXPECT_TRUE(raw::equal(a, c));
  EXPECT_TRUE(raw::equal(b, d));
  Tensor e = raw::randn({1000});
  EXPECT_FALSE(raw::equal(a, e));  // the generator advanced
}

TEST(Random, IndependentOfThreadCount) {
  int saved = get_num_threads();
  Generator g1(7), g2(7);
  set_num_threads(1);
  Tensor a = raw::randn({100000}, {}, &g1);
  set_num_threads(2);
  Tensor b = raw::randn({100000}, {}, &g2);
  set_num_threads(saved);
  EXPECT_TRUE(raw::equal(a, b));
}

// The CPU fill computes each Philox block once for its 2 or 4 elements; every element must still be
// random_value_at's (the per-element definition the CUDA kernel uses): uniform float32 (4 per
// block), float64 (2), float16, normals (a cos / sin pair), lengths that end inside a block, an
// offset that is not 0, and a length split over two threads.
TEST(Random, FillMatchesPerElementDefinition) {
  const int saved = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (DType dtype : {kFloat32, kFloat64, kFloat16}) {
      for (bool normal : {false, true}) {
        for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{5}, int64_t{7}, int64_t{70001}}) {
          Generator g(11);
          g.philox_args(3, kCPU);  // start past block 0
          const uint64_t seed = g.seed(), offset = g.offset();
          Tensor t = normal ? raw::randn({n}, TensorOptions(dtype), &g) : raw::rand({n}, TensorOptions(dtype), &g);
          Tensor d = raw::to(t, kCPU, kFloat64);
          const double* got = d.data_ptr<double>();
          int64_t bad = 0;
          for (int64_t i = 0; i < n; ++i) {
            double want = 0;
            if (dtype == kFloat32) {
              want = kernels::random_value_at<float>(normal, 0.0, 1.0, seed, offset, i);
            } else if (dtype == kFloat64) {
              want = kernels::random_value_at<double>(normal, 0.0, 1.0, seed, offset, i);
            } else {
              want = static_cast<float>(kernels::random_value_at<Half>(normal, 0.0, 1.0, seed, offset, i));
            }
            if (got[i] != want) ++bad;
          }
          EXPECT_EQ(bad, 0) << dtype_name(dtype) << (normal ? " normal" : " uniform") << " n=" << n
                            << " threads=" << threads;
        }
      }
    }
  }
  set_num_threads(saved);
}

// The float32 uniform fill's 8-block vector path: uniform_ on [-2, 1.3) (a + (b - a) u, rounded as the
// scalar expression), counters whose low word wraps inside a group of 8 blocks, a length that ends
// inside a block.
TEST(Random, UniformFloatVectorPathMatchesPerElementDefinition) {
  for (uint64_t start : {uint64_t{0}, uint64_t{0xFFFFFFFBu}, (uint64_t{5} << 32) - 3}) {
    Generator g(0x123456789abcULL);
    g.set_state(0x123456789abcULL, start);
    Tensor t = raw::empty({1001}, TensorOptions(kFloat32));
    raw::uniform_(t, -2.0, 1.3, &g);
    const float* got = t.data_ptr<float>();
    int64_t bad = 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (got[i] != kernels::random_value_at<float>(false, -2.0, 1.3, 0x123456789abcULL, start, i)) ++bad;
    }
    EXPECT_EQ(bad, 0) << "offset " << start;
  }
}

TEST(Random, Moments) {
  Generator g(42);
  std::vector<double> n = values(raw::randn({200000}, {}, &g));
  double mean = 0, sq = 0;
  for (double x : n) mean += x;
  mean /= n.size();
  for (double x : n) sq += (x - mean) * (x - mean);
  double var = sq / n.size();
  // Standard error of the mean is 1/sqrt(2e5) ~ 0.0022: 0.01 is > 4 sigma.
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(var, 1.0, 0.02);
  std::vector<double> u = values(raw::rand({200000}, {}, &g));
  double umin = 1, umax = 0, usum = 0;
  for (double x : u) {
    umin = std::min(umin, x);
    umax = std::max(umax, x);
    usum += x;
  }
  EXPECT_GE(umin, 0.0);
  EXPECT_LT(umax, 1.0);
  EXPECT_NEAR(usum / u.size(), 0.5, 0.005);
}

TEST(Random, UniformNormalInPlaceOnViews) {
  Generator g(1);
  Tensor t = raw::zeros({4, 6});
  Tensor col = raw::narrow(t, 1, 2, 2);
  uint32_t v0 = t.version();
  raw::uniform_(col, 5.0, 6.0, &g);
  EXPECT_GT(t.version(), v0);
  std::vector<double> all = values(t);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 6; ++c) {
      double x = all[r * 6 + c];
      if (c == 2 || c == 3) {
        EXPECT_GE(x, 5.0);
        EXPECT_LT(x, 6.0);
      } else {
        EXPECT_EQ(x, 0.0);
      }
    }
  }
}

TEST(Random, RandintRandpermBernoulli) {
  Generator g(3);
  std::vector<double> r = values(raw::randint(-2, 3, {5000}, kInt64, &g));
  std::vector<int> counts(5, 0);
  for (double x : r) {
    ASSERT_GE(x, -2);
    ASSERT_LT(x, 3);
    counts[static_cast<int>(x) + 2]++;
  }
  for (int c : counts) EXPECT_GT(c, 800);  // expected 1000 each
  std::vector<double> p = values(raw::randperm(50, kInt64, &g));
  std::sort(p.begin(), p.end());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(p[i], i);
  Tensor probs = raw::full({10000}, 0.3);
  std::vector<double> b = values(raw::bernoulli(probs, &g));
  double ones = 0;
  for (double x : b) {
    ASSERT_TRUE(x == 0 || x == 1);
    ones += x;
  }
  EXPECT_NEAR(ones / b.size(), 0.3, 0.02);
}

TEST(Random, GeneratorStateRoundTrip) {
  Generator g(9);
  raw::rand({10}, {}, &g);
  uint64_t seed = g.seed(), offset = g.offset();
  Tensor a = raw::rand({10}, {}, &g);
  Generator h;
  h.set_state(seed, offset);
  EXPECT_TRUE(raw::equal(a, raw::rand({10}, {}, &h)));
}

std::vector<int64_t> ints(const Tensor& t) {
  Tensor c = raw::contiguous(t);
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

TEST(Multinomial, WithReplacementFollowsTheWeights) {
  Generator gen(11);
  // Unnormalised weights with a zero: frequencies within 5 standard deviations of 1:0:3:4 / 8.
  Tensor w = raw::tensor({1, 0, 3, 4});
  const int64_t n = 40000;
  Tensor s = raw::multinomial(w, n, /*replacement=*/true, &gen);
  EXPECT_EQ(s.dtype(), kInt64);
  EXPECT_EQ(s.sizes(), (Shape{n}));
  std::vector<double> count(4, 0.0);
  for (int64_t v : ints(s)) count[v] += 1;
  EXPECT_EQ(count[1], 0.0);
  for (int c : {0, 2, 3}) {
    double p = values(w)[c] / 8.0;
    EXPECT_NEAR(count[c] / n, p, 5 * std::sqrt(p * (1 - p) / n)) << "category " << c;
  }
}

TEST(Multinomial, WithoutReplacementDrawsDistinctCategories) {
  Generator gen(12);
  Tensor w = raw::tensor({{1, 2, 3, 4, 0}, {0, 0, 5, 0, 1}});
  Tensor s = raw::multinomial(w, 3, false, &gen);
  EXPECT_EQ(s.sizes(), (Shape{2, 3}));
  std::vector<int64_t> v = ints(s);
  for (int r = 0; r < 2; ++r) {
    std::vector<int64_t> row(v.begin() + 3 * r, v.begin() + 3 * r + 3);
    std::sort(row.begin(), row.end());
    EXPECT_TRUE(std::adjacent_find(row.begin(), row.end()) == row.end()) << "row " << r;
  }
  // Row 1 has two positive weights: they come first, then a zero-weight category (as PyTorch).
  std::vector<int64_t> first_two = {v[3], v[4]};
  std::sort(first_two.begin(), first_two.end());
  EXPECT_EQ(first_two, (std::vector<int64_t>{2, 4}));
  // The first draw without replacement is as likely as with: category 3 of row 0 about 4/10.
  const int64_t trials = 4000;
  int64_t hits = 0;
  for (int64_t t = 0; t < trials; ++t) hits += raw::multinomial(raw::tensor({1, 2, 3, 4}), 1, false, &gen).item<int64_t>() == 3;
  EXPECT_NEAR(static_cast<double>(hits) / trials, 0.4, 5 * std::sqrt(0.24 / trials));
}

TEST(Multinomial, SeededGeneratorReproduces) {
  Tensor w = raw::tensor({0.2, 0.3, 0.5});
  for (bool replacement : {true, false}) {
    Generator a(99), b(99);
    EXPECT_TRUE(raw::equal(raw::multinomial(w, 3, replacement, &a), raw::multinomial(w, 3, replacement, &b)));
  }
}

TEST(Multinomial, Errors) {
  EXPECT_TRUE(testing::throws_with([] { raw::multinomial(raw::tensor({1, -1}), 1); }, "inf, NaN or a negative value"));
  EXPECT_TRUE(testing::throws_with([] { raw::multinomial(raw::tensor({1, INFINITY}), 1); }, "inf, NaN or a negative"));
  EXPECT_TRUE(testing::throws_with([] { raw::multinomial(raw::tensor({1, NAN}), 1); }, "inf, NaN or a negative"));
  EXPECT_TRUE(testing::throws_with([] { raw::multinomial(raw::tensor({{1, 1}, {0, 0}}), 1); },
                                   "row 1 of the weights sums to zero"));
  EXPECT_TRUE(testing::throws_with([] { raw::multinomial(raw::tensor({1, 0}), 3); },
                                   "cannot sample num_samples=3 > 2 categories without replacement"));
  EXPECT_TRUE(testing::throws_with([] { raw::multinomial(raw::tensor({1, 1}), 0); }, "num_samples must be positive, got 0"));
  EXPECT_TRUE(testing::throws_with([] { raw::multinomial(raw::zeros({2, 2, 2}), 1); }, "expected 1-D or 2-D weights, got shape [2, 2, 2]"));
  EXPECT_TRUE(testing::throws_with([] { raw::multinomial(raw::tensor({1, 2}, kInt64), 1); }, "expected floating-point weights, got int64"));
  // With replacement more samples than categories is fine; a zero weight is never drawn.
  EXPECT_EQ(ints(raw::multinomial(raw::tensor({1, 0}), 3, true)), (std::vector<int64_t>{0, 0, 0}));
}

TEST(Multinomial, CudaMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor w = raw::tensor({{1, 2, 3, 4, 0}, {0, 0, 5, 0, 1}});
  for (bool replacement : {true, false}) {
    // The same generator state draws the same uniforms on both devices, so the samples agree.
    Generator a(7), b(7);
    Tensor cpu = raw::multinomial(w, 3, replacement, &a);
    Tensor gpu = raw::multinomial(raw::to(w, Device::cuda(0), kFloat32), 3, replacement, &b);
    EXPECT_TRUE(raw::equal(raw::to(gpu, kCPU, kInt64), cpu));
  }
}

TEST(Random, CudaMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Generator g1(5), g2(5);
  Tensor cpu = raw::rand({4097}, {}, &g1);
  Tensor gpu = raw::rand({4097}, Device("cuda:0"), &g2);
  EXPECT_TRUE(raw::equal(cpu, raw::to(gpu, kCPU, kFloat32)));
  Tensor ncpu = raw::randn({4097}, kFloat64, &g1);
  Tensor ngpu = raw::randn({4097}, TensorOptions(kFloat64).device(Device("cuda:0")), &g2);
  EXPECT_TRUE(testing::all_close(ngpu, ncpu, 1e-12, 1e-12));
}

}  // namespace
}  // namespace colony
