// max_pool2d, avg_pool2d and adaptive_avg_pool2d (ops/pool_ops.cc, declared in
// ops/raw_nn_ops.h) against naive windows written from the definitions (tests/kernels/pool_reference.h), gradients against
// finite differences in float64, and the CUDA paths against the CPU.
#include "ops/raw_nn_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tests/kernels/pool_reference.h"
#include "tests/ops/nn_op_testing.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using raw::Int2;
using namespace colony::testing;  // NOLINT(build/namespaces): the shared helpers of these tests

TEST(MaxPool2d, MatchesNaiveValuesAndIndices) {
  uint32_t seed = 100;
  for (const PoolCase& c : pool_cases()) {
    std::vector<double> x = random_values(shape_numel(c.in), seed++);
    NaiveMax ref = naive_max_pool(c, x);
    for (DType dt : {kFloat64, kFloat32}) {
      SCOPED_TRACE(shape_str(c.in) + " " + dtype_name(dt));
      auto r = raw::max_pool2d(from(x, c.in, dt), c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
      Shape expected = c.in;
      expected[expected.size() - 2] = ref.ho;
      expected[expected.size() - 1] = ref.wo;
      ASSERT_EQ(r.output.sizes(), expected);
      EXPECT_EQ(r.indices.dtype(), kInt64);
      EXPECT_TRUE(all_close(r.output, from(ref.y, expected), 1e-7, 0));
      std::vector<int64_t> idx(r.indices.data_ptr<int64_t>(), r.indices.data_ptr<int64_t>() + r.indices.numel());
      EXPECT_EQ(idx, ref.idx);
    }
  }
}

TEST(MaxPool2d, NaNWinsAndTiesKeepTheFirst) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Window 0: a tie (the first kept); window 1: a NaN; window 2: two NaNs (the last one kept, as in
  // PyTorch's CPU kernel); window 3: all -inf (the first).
  std::vector<double> rows = {1, 1, 5, nan, 1, nan, -inf, -inf,
                              0, 1, 2, 3, nan, 0, -inf, -inf};
  auto fast = raw::max_pool2d(from(rows, {1, 1, 2, 8}), 2);  // the 2 x 2 fast path
  // The general loop: a third row of -inf under a 3 x 2 window picks the same elements.
  for (int i = 0; i < 8; ++i) rows.push_back(-inf);
  auto general = raw::max_pool2d(from(rows, {1, 3, 8}), {3, 2});
  for (const auto& r : {fast, general}) {
    std::vector<double> y = values(r.output);
    const int64_t* idx = r.indices.data_ptr<int64_t>();
    ASSERT_EQ(y.size(), 4u);
    EXPECT_EQ(y[0], 1);
    EXPECT_EQ(idx[0], 0);
    EXPECT_TRUE(std::isnan(y[1]));
    EXPECT_EQ(idx[1], 3);
    EXPECT_TRUE(std::isnan(y[2]));
    EXPECT_EQ(idx[2], 12);
    EXPECT_EQ(y[3], -inf);
    EXPECT_EQ(idx[3], 6);
  }
}

TEST(MaxPool2d, BackwardScattersToIndicesAndMatchesFiniteDifferences) {
  for (const PoolCase& c : pool_cases()) {
    SCOPED_TRACE(shape_str(c.in));
    Tensor x = random_tensor(c.in, 200);
    auto r = raw::max_pool2d(x, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
    Tensor gy = random_tensor(r.output.sizes(), 201);
    Tensor gx = raw::max_pool2d_backward(gy, r.indices, c.in);
    // naive scatter
    const int64_t H = c.in[c.in.size() - 2], W = c.in[c.in.size() - 1];
    const int64_t plane_out = r.output.size(-2) * r.output.size(-1);
    std::vector<double> ref(x.numel(), 0.0), g = values(gy);
    const int64_t* idx = r.indices.data_ptr<int64_t>();
    for (int64_t o = 0; o < r.output.numel(); ++o) ref[(o / plane_out) * H * W + idx[o]] += g[o];
    EXPECT_TRUE(all_close(gx, from(ref, c.in), 1e-12, 1e-12));
    if (c.in[0] * (c.in.size() == 4 ? c.in[1] : 1) > 8) continue;  // finite differences on the small ones
    auto loss = [&] {
      return raw::sum(raw::mul(raw::max_pool2d(x, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode).output, gy))
          .item();
    };
    EXPECT_TRUE(all_close(gx, from(numeric_grad(x, loss), c.in), 1e-6, 1e-7));
  }
}

TEST(MaxPool2d, Errors) {
  Tensor x = raw::zeros({1, 1, 4, 4});
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d(raw::zeros({16}), 2); },
                          "max_pool2d: input must be 3-D (C,H,W) or 4-D (N,C,H,W), got [16]"));
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d(x, 3, 1, 2); },
                          "max_pool2d: padding (2, 2) must be at most half of kernel_size (3, 3)"));
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d(x, 5); },
                          "max_pool2d: input [1, 1, 4, 4] is too small for kernel_size (5, 5)"));
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d(x, 2, Int2(0)); }, "max_pool2d: stride must be positive, got (0, 0)"));
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d(raw::zeros({1, 0, 4, 4}), 2); },
                          "expected non-empty channel and spatial dims"));
  auto r = raw::max_pool2d(x, 2);
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d_backward(r.output, r.output, {1, 1, 4, 4}); },
                          "max_pool2d_backward: expected int64 indices, got float32"));
  Tensor bad = raw::full({1, 1, 2, 2}, 16, TensorOptions(kInt64));
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { raw::max_pool2d_backward(r.output, bad, {1, 1, 4, 4}); },
                                             "index 16 at output element 0 is outside its input plane of 4 x 4"));
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d_backward(raw::zeros({1, 1, 3, 2}), r.indices, {1, 1, 4, 4}); },
                          "max_pool2d_backward: expected grad_output of shape [1, 1, 2, 2], got [1, 1, 3, 2]"));
}

TEST(AvgPool2d, MatchesNaiveForEveryCountingRule) {
  const std::vector<PoolCase> cases = {
      {{2, 3, 8, 8}, 2, 2, 0, 1, false},
      {{2, 3, 9, 7}, 3, 2, 1, 1, true},
      {{1, 2, 10, 9}, {3, 2}, {2, 1}, {1, 1}, 1, false},
      {{3, 7, 6}, {4, 2}, {3, 3}, {2, 1}, 1, true},
  };
  uint32_t seed = 300;
  for (const PoolCase& c : cases) {
    std::vector<double> x = random_values(shape_numel(c.in), seed++);
    for (bool include_pad : {true, false}) {
      for (int64_t divisor : {0, 3}) {
        SCOPED_TRACE(shape_str(c.in) + " include_pad " + std::to_string(include_pad) + " divisor " +
                     std::to_string(divisor));
        int64_t ho, wo;
        std::vector<double> ref = naive_avg_pool(c, include_pad, divisor, x, &ho, &wo);
        std::optional<int64_t> div = divisor != 0 ? std::optional<int64_t>(divisor) : std::nullopt;
        Tensor y = raw::avg_pool2d(from(x, c.in), c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, div);
        Shape expected = c.in;
        expected[expected.size() - 2] = ho;
        expected[expected.size() - 1] = wo;
        EXPECT_TRUE(all_close(y, from(ref, expected), 1e-12, 1e-12));
        Tensor y32 = raw::avg_pool2d(from(x, c.in, kFloat32), c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, div);
        EXPECT_TRUE(all_close(y32, from(ref, expected), 1e-6, 1e-6));
        // The backward is linear in grad_output: compare with finite differences of the forward.
        Tensor xt = from(x, c.in), gy = random_tensor(expected, seed++);
        Tensor gx = raw::avg_pool2d_backward(gy, c.in, c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, div);
        auto loss = [&] {
          return raw::sum(raw::mul(raw::avg_pool2d(xt, c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, div), gy))
              .item();
        };
        EXPECT_TRUE(all_close(gx, from(numeric_grad(xt, loss), c.in), 1e-6, 1e-8));
      }
    }
  }
}

TEST(AvgPool2d, Errors) {
  Tensor x = raw::zeros({1, 1, 4, 4});
  EXPECT_TRUE(throws_with([&] { raw::avg_pool2d(x, 2, std::nullopt, 0, false, true, 0); },
                          "avg_pool2d: divisor_override must not be zero"));
  EXPECT_TRUE(throws_with([&] { raw::avg_pool2d(x, 2, std::nullopt, 2); },
                          "avg_pool2d: padding (2, 2) must be at most half of kernel_size (2, 2)"));
  EXPECT_TRUE(throws_with([&] { raw::avg_pool2d_backward(raw::zeros({1, 1, 3, 3}), {1, 1, 4, 4}, 2); },
                          "avg_pool2d_backward: expected grad_output of shape [1, 1, 2, 2], got [1, 1, 3, 3]"));
}

TEST(AdaptiveAvgPool2d, MatchesNaiveAndFiniteDifferences) {
  const std::vector<std::pair<Shape, Int2>> cases = {
      {{2, 3, 8, 8}, 1},        // global average pooling
      {{2, 3, 10, 7}, {3, 4}},  // uneven, overlapping windows
      {{2, 5, 3}, {7, 5}},      // more outputs than inputs
      {{1, 2, 6, 6}, {6, 6}},   // identity
  };
  uint32_t seed = 400;
  for (const auto& [in, out] : cases) {
    SCOPED_TRACE(shape_str(in));
    std::vector<double> x = random_values(shape_numel(in), seed++);
    Shape expected = in;
    expected[expected.size() - 2] = out.h;
    expected[expected.size() - 1] = out.w;
    Tensor y = raw::adaptive_avg_pool2d(from(x, in), out);
    EXPECT_TRUE(all_close(y, from(naive_adaptive(in, out, x), expected), 1e-12, 1e-12));
    Tensor xt = from(x, in), gy = random_tensor(expected, seed++);
    Tensor gx = raw::adaptive_avg_pool2d_backward(gy, in);
    auto loss = [&] { return raw::sum(raw::mul(raw::adaptive_avg_pool2d(xt, out), gy)).item(); };
    EXPECT_TRUE(all_close(gx, from(numeric_grad(xt, loss), in), 1e-6, 1e-8));
  }
  EXPECT_TRUE(throws_with([&] { raw::adaptive_avg_pool2d(raw::zeros({1, 2, 3, 3}), {-1, 2}); },
                          "adaptive_avg_pool2d: output_size must be non-negative, got (-1, 2)"));
}

// ---------------------------------------------------------------------------------------------
// CUDA against the CPU (skipped without a GPU).

TEST(Pooling, MatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  uint32_t seed = 700;
  for (const PoolCase& c : pool_cases()) {
    Tensor x = random_tensor(c.in, seed++);
    auto r_cpu = raw::max_pool2d(x, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
    Tensor gy = random_tensor(r_cpu.output.sizes(), seed++);
    Tensor gx_cpu = raw::max_pool2d_backward(gy, r_cpu.indices, c.in);
    for (DType dt : {kFloat64, kFloat32}) {
      SCOPED_TRACE(shape_str(c.in) + " " + dtype_name(dt));
      auto r = raw::max_pool2d(to_cuda(x, dt), c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
      EXPECT_TRUE(all_close(to_cpu64(r.output), r_cpu.output, 1e-6, 0));
      EXPECT_TRUE(raw::equal(raw::to(r.indices, kCPU, kInt64), r_cpu.indices));
      Tensor gx = raw::max_pool2d_backward(to_cuda(gy, dt), r.indices, c.in);
      EXPECT_TRUE(all_close(to_cpu64(gx), gx_cpu, 1e-6, 1e-6));
      for (bool include_pad : {true, false}) {
        if (c.dilation.h != 1 || c.dilation.w != 1) continue;
        Tensor a_cpu = raw::avg_pool2d(x, c.kernel, c.stride, c.padding, c.ceil_mode, include_pad);
        Tensor a = raw::avg_pool2d(to_cuda(x, dt), c.kernel, c.stride, c.padding, c.ceil_mode, include_pad);
        EXPECT_TRUE(all_close(to_cpu64(a), a_cpu, 1e-6, 1e-6));
        Tensor ga_cpu = raw::avg_pool2d_backward(gy, c.in, c.kernel, c.stride, c.padding, c.ceil_mode, include_pad);
        Tensor ga = raw::avg_pool2d_backward(to_cuda(gy, dt), c.in, c.kernel, c.stride, c.padding, c.ceil_mode,
                                             include_pad);
        EXPECT_TRUE(all_close(to_cpu64(ga), ga_cpu, 1e-6, 1e-6));
      }
      for (Int2 out : {Int2(1), Int2(3, 2), Int2(9, 11)}) {
        Tensor ad_cpu = raw::adaptive_avg_pool2d(x, out);
        EXPECT_TRUE(all_close(to_cpu64(raw::adaptive_avg_pool2d(to_cuda(x, dt), out)), ad_cpu, 1e-6, 1e-6));
        Tensor gout = random_tensor(ad_cpu.sizes(), seed++);
        EXPECT_TRUE(all_close(to_cpu64(raw::adaptive_avg_pool2d_backward(to_cuda(gout, dt), c.in)),
                              raw::adaptive_avg_pool2d_backward(gout, c.in), 1e-6, 1e-6));
      }
    }
  }
}

// float16/bfloat16 on the CPU: the float32 kernels on the widened operands, rounded once, so the
// results equal the rounded float32 results bit for bit.
TEST(LowPrecisionCpu, PoolingRoundsTheFloat32Result) {
  for (DType dt : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = low(random_tensor({2, 3, 12, 12}, 71, kFloat32), dt);
    raw::MaxPool2dResult mp = raw::max_pool2d(x, 2), mp32 = raw::max_pool2d(f32(x), 2);
    EXPECT_EQ(mp.output.dtype(), dt);
    EXPECT_TRUE(all_close(mp.output, low(mp32.output, dt), 0, 0));
    Tensor gp = low(random_tensor({2, 3, 6, 6}, 75, kFloat32), dt);
    Tensor gx = raw::max_pool2d_backward(gp, mp.indices, x.sizes());
    EXPECT_EQ(gx.dtype(), dt);
    EXPECT_TRUE(all_close(gx, low(raw::max_pool2d_backward(f32(gp), mp32.indices, x.sizes()), dt), 0, 0));
    EXPECT_TRUE(all_close(raw::avg_pool2d(x, 2), low(raw::avg_pool2d(f32(x), 2), dt), 0, 0));
    EXPECT_TRUE(all_close(raw::avg_pool2d_backward(gp, x.sizes(), 2, std::nullopt, 0, false, true),
                          low(raw::avg_pool2d_backward(f32(gp), x.sizes(), 2, std::nullopt, 0, false, true), dt), 0, 0));
    EXPECT_TRUE(all_close(raw::adaptive_avg_pool2d(x, {3, 3}), low(raw::adaptive_avg_pool2d(f32(x), {3, 3}), dt), 0, 0));
    Tensor ga = low(random_tensor({2, 3, 3, 3}, 76, kFloat32), dt);
    EXPECT_TRUE(all_close(raw::adaptive_avg_pool2d_backward(ga, x.sizes()),
                          low(raw::adaptive_avg_pool2d_backward(f32(ga), x.sizes()), dt), 0, 0));
  }
}

}  // namespace
}  // namespace colony
