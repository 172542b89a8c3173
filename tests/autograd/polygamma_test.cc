// torch.polygamma(n, x) (autograd/unary_math.cc; math::polygamma and math::hurwitz_zeta in
// kernels/common/scalar_math.h) and the members x.polygamma(n), x.polygamma_(n): every case of
// polygamma_golden.h (torch's values and gradients for n = 0..4, poles, infinities, NaN, int64
// input, the in-place member; written by polygamma_golden.py), float64 gradchecks, the in-place
// member's recording and refusals, and a `_CUDA` test of the same cases.
#include <map>
#include <string>

#include "tests/autograd/gradcheck.h"
#include "tests/autograd/polygamma_golden.h"
#include "tests/golden_check.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::throws_with;
using In = const std::vector<Tensor>&;
namespace golden = testing::golden;

Tensor inplace(const Tensor& x, int64_t n) {
  Tensor y = x * 1.0;
  y.polygamma_(n);
  return y;
}

const std::map<std::string, golden::Op>& ops() {
  static const std::map<std::string, golden::Op> table = {
      {"polygamma0", [](In x, Device) { return polygamma(0, x[0]); }},
      {"polygamma1", [](In x, Device) { return polygamma(1, x[0]); }},
      {"polygamma2", [](In x, Device) { return polygamma(2, x[0]); }},
      {"polygamma3", [](In x, Device) { return x[0].polygamma(3); }},
      {"polygamma4", [](In x, Device) { return polygamma(4, x[0]); }},
      {"polygamma_2", [](In x, Device) { return inplace(x[0], 2); }},
      {"polygamma_3", [](In x, Device) { return inplace(x[0], 3); }},
  };
  return table;
}

TEST(Polygamma, EveryGoldenCase) {
  for (const golden::Case& c : testing::polygamma_golden::kCases) EXPECT_TRUE(golden::matches(c, ops(), kCPU));
}

TEST(Polygamma, Gradcheck) {
  for (int64_t n = 0; n < 4; ++n) {
    EXPECT_TRUE(gradcheck([n](In x) { return polygamma(n, x[0]); }, {input({6}, 0.5, 3.0)})) << n;
    EXPECT_TRUE(gradcheck([n](In x) { return inplace(x[0], n); }, {input({2, 3}, -0.9, -0.1)})) << n;
  }
}

TEST(Polygamma, InPlace) {
  Tensor x = raw::tensor({0.5, 1.5, 2.5}, kFloat64);
  const uint32_t version = x.version();
  Tensor want = polygamma(2, x);
  x.polygamma_(2);
  EXPECT_EQ(testing::values(x), testing::values(want));
  EXPECT_EQ(x.version(), version + 1);
  Tensor y = input({3}) * 1.0;
  y.polygamma_(1);
  EXPECT_EQ(y.grad_fn()->name(), "PolygammaBackward");
}

TEST(Polygamma, Refusals) {
  EXPECT_TRUE(throws_with([] { polygamma(-1, raw::ones({2})); }, "polygamma(n, x) does not support negative n."));
  EXPECT_TRUE(throws_with([] { raw::ones({2}, kInt64).polygamma_(1); },
                          "result type Float can't be cast to the desired output type Long"));
  EXPECT_TRUE(throws_with([] { input({2}).polygamma_(1); },
                          "a leaf Variable that requires grad is being used in an in-place operation."));
}

TEST(Polygamma, EveryGoldenCaseOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const golden::Case& c : testing::polygamma_golden::kCases) {
    EXPECT_TRUE(golden::matches(c, ops(), Device::cuda(0)));
  }
}

}  // namespace
}  // namespace colony
