// cumprod, prod, cummax, cummin and logcumsumexp (autograd/scan.cc, ops/scan_ops.cc, kernels
// scan.cc/scan.cu) against torch's values, indices and gradients (reduce_golden.h, written by
// reduce_golden.py), float64 gradient checks, and the errors.
#include "tests/autograd/gradcheck.h"
#include "tests/autograd/reduce_golden_check.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::strided_input;
using testing::throws_with;
using testing::reduce_golden::Case;
using testing::reduce_golden::golden;
using testing::reduce_golden::golden_input;
using testing::reduce_golden::matches_golden;
using In = const std::vector<Tensor>&;

// Every scan golden case by its op, on `device`.
void check_scan_cases(Device device) {
  struct Named {
    const char* name;
    int64_t dim;
  };
  for (const Named& n : std::vector<Named>{{"cumprod/f64", 1}, {"cumprod/f32/3d", 1}, {"cumprod/f64/one_zero", 1},
                                           {"cumprod/f64/two_zeros", -1}, {"cumprod/i32", 1}, {"cumprod/bool", 0},
                                           {"cumprod/u8", 0}, {"cumprod/nan", 0}, {"cumprod/size1", 1},
                                           {"cumprod/scalar", 0}}) {
    const Case& c = golden(n.name);
    Tensor x = golden_input(c, device);
    EXPECT_TRUE(matches_golden(c, x, cumprod(x, n.dim)));
  }
  {
    const Case& c = golden("cumprod/f64/dim0");
    Tensor x = golden_input(c, device);
    EXPECT_TRUE(matches_golden(c, x, x.cumprod(-2)));
  }
  for (const char* name : {"prod/all", "prod/all/one_zero", "prod/all/two_zeros", "prod/f32", "prod/bool",
                           "prod/empty", "prod/nan"}) {
    const Case& c = golden(name);
    Tensor x = golden_input(c, device);
    EXPECT_TRUE(matches_golden(c, x, prod(x)));
  }
  for (const char* name : {"prod/dim1", "prod/i32", "prod/empty_dim"}) {
    const Case& c = golden(name);
    Tensor x = golden_input(c, device);
    EXPECT_TRUE(matches_golden(c, x, x.prod(1)));
  }
  {
    const Case& c = golden("prod/dim0/keepdim");
    Tensor x = golden_input(c, device);
    EXPECT_TRUE(matches_golden(c, x, prod(x, -2, /*keepdim=*/true)));
  }
  for (const char* name : {"cummax/f64", "cummax/nan", "cummax/2d", "cummax/f32", "cummax/bool", "cummax/empty"}) {
    const Case& c = golden(name);
    Tensor x = golden_input(c, device);
    auto [values, indices] = cummax(x, 0);
    EXPECT_TRUE(matches_golden(c, x, values, indices));
  }
  {
    const Case& c = golden("cummax/i32");
    Tensor x = golden_input(c, device);
    auto [values, indices] = x.cummax(1);
    EXPECT_TRUE(matches_golden(c, x, values, indices));
  }
  for (const char* name : {"cummin/2d", "cummin/i64"}) {
    const Case& c = golden(name);
    Tensor x = golden_input(c, device);
    auto [values, indices] = cummin(x, -1);
    EXPECT_TRUE(matches_golden(c, x, values, indices));
  }
  {
    const Case& c = golden("cummin/nan");
    Tensor x = golden_input(c, device);
    auto [values, indices] = x.cummin(0);
    EXPECT_TRUE(matches_golden(c, x, values, indices));
  }
  for (const char* name : {"logcumsumexp/f64", "logcumsumexp/inf", "logcumsumexp/nan", "logcumsumexp/f32"}) {
    const Case& c = golden(name);
    Tensor x = golden_input(c, device);
    EXPECT_TRUE(matches_golden(c, x, c.shape.size() == 2 ? logcumsumexp(x, 1) : x.logcumsumexp(-1)));
  }
  {
    const Case& c = golden("logcumsumexp/f64/dim0");
    Tensor x = golden_input(c, device);
    EXPECT_TRUE(matches_golden(c, x, logcumsumexp(x, 0)));
  }
}

TEST(Scan, MatchesTorch) { check_scan_cases(kCPU); }

TEST(Scan, MatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_scan_cases(Device::cuda(0));
}

TEST(Scan, Gradcheck) {
  for (Tensor x : {input({3, 5}), strided_input({3, 5}), input({2, 3, 4}), input({})}) {
    for (int64_t dim : {0, -1}) {
      EXPECT_TRUE(gradcheck([&](In in) { return cumprod(in[0], dim); }, {x})) << shape_str(x.sizes()) << dim;
      EXPECT_TRUE(gradcheck([&](In in) { return logcumsumexp(in[0], dim); }, {x})) << shape_str(x.sizes()) << dim;
      EXPECT_TRUE(gradcheck([&](In in) { return cummax(in[0], dim).first; }, {x})) << shape_str(x.sizes()) << dim;
      EXPECT_TRUE(gradcheck([&](In in) { return cummin(in[0], dim).first; }, {x})) << shape_str(x.sizes()) << dim;
      EXPECT_TRUE(gradcheck([&](In in) { return prod(in[0], dim, dim == 0); }, {x})) << shape_str(x.sizes()) << dim;
    }
    EXPECT_TRUE(gradcheck([&](In in) { return prod(in[0]); }, {x})) << shape_str(x.sizes());
  }
  // Zeros: finite differences of a product are exact in the other factors, so the check holds there.
  Tensor z = raw::tensor({{0.5, 0.0, -1.5, 2.0}, {0.0, 1.25, 0.0, -0.75}}, TensorOptions(kFloat64)).requires_grad_(true);
  for (int64_t dim : {0, 1}) {
    EXPECT_TRUE(gradcheck([&](In in) { return cumprod(in[0], dim); }, {z}));
    EXPECT_TRUE(gradcheck([&](In in) { return prod(in[0], dim); }, {z}));
  }
  Tensor z1 = raw::tensor({0.5, 0.0, -1.5, 2.0}, TensorOptions(kFloat64)).requires_grad_(true);
  EXPECT_TRUE(gradcheck([&](In in) { return prod(in[0]); }, {z1}));
}

TEST(Scan, CumprodGradientAtANanIsTheProductOfTheOthers) {
  // d/dx1 of 0.5 y0 + 1 y1 + 1.5 y2 = 1 * x0 + 1.5 * x0 * x2 = 11 (torch's division gives NaN).
  Tensor x = raw::tensor({2.0, std::nan(""), 3.0}, TensorOptions(kFloat64)).requires_grad_(true);
  sum(mul(cumprod(x, 0), raw::tensor({0.5, 1.0, 1.5}, TensorOptions(kFloat64)))).backward();
  EXPECT_EQ(testing::values(x.grad())[1], 11.0);
}

TEST(Scan, IntegerResultsHaveNoGradient) {
  Tensor x = raw::tensor({3.0, 1.0, 2.0}, TensorOptions(kFloat64));
  x.requires_grad_(true);
  auto [values, indices] = cummax(x, 0);
  EXPECT_TRUE(values.requires_grad());
  EXPECT_FALSE(indices.requires_grad());
  EXPECT_EQ(cumprod(raw::tensor({1.0, 2.0}, TensorOptions(kInt32)), 0).dtype(), kInt64);
}

TEST(Scan, Errors) {
  Tensor x = raw::tensor({{1.0, 2.0}}, TensorOptions(kFloat32));
  EXPECT_TRUE(throws_with([&] { cumprod(x, 2); }, "cumprod"));
  EXPECT_TRUE(throws_with([&] { prod(x, -3); }, "prod"));
  EXPECT_TRUE(throws_with([&] { cummax(x, 5); }, "cummax"));
  EXPECT_TRUE(throws_with([&] { logcumsumexp(raw::tensor({1.0, 2.0}, TensorOptions(kInt64)), 0); },
                          "logcumsumexp: expected a floating point input, got int64"));
  EXPECT_TRUE(throws_with([&] { prod(Tensor()); }, "prod: expected a defined input tensor"));
}

}  // namespace
}  // namespace colony
