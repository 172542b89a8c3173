// fmax, fmin, gcd, lcm (functor-table ops, kernels/common/elementwise_functors.h), ldexp, deg2rad,
// rad2deg, isposinf, isneginf, isreal (torch's compositions): every case of math_extra_golden.h
// (torch's values and gradients, written by math_extra_golden.py), float64 gradchecks, refusals, and
// a `_CUDA` test of the same cases.
#include <map>
#include <string>

#include "tests/autograd/gradcheck.h"
#include "tests/autograd/math_extra_golden.h"
#include "tests/golden_check.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::throws_with;
using In = const std::vector<Tensor>&;
namespace golden = testing::golden;

const std::map<std::string, golden::Op>& ops() {
  static const std::map<std::string, golden::Op> table = {
      {"fmax", [](In x, Device) { return fmax(x[0], x[1]); }},
      {"fmin", [](In x, Device) { return fmin(x[0], x[1]); }},
      {"gcd", [](In x, Device) { return gcd(x[0], x[1]); }},
      {"lcm", [](In x, Device) { return lcm(x[0], x[1]); }},
      {"ldexp", [](In x, Device) { return ldexp(x[0], x[1]); }},
      {"deg2rad", [](In x, Device) { return deg2rad(x[0]); }},
      {"rad2deg", [](In x, Device) { return rad2deg(x[0]); }},
      {"isposinf", [](In x, Device) { return isposinf(x[0]); }},
      {"isneginf", [](In x, Device) { return isneginf(x[0]); }},
      {"isreal", [](In x, Device) { return isreal(x[0]); }},
  };
  return table;
}

TEST(MathExtra, EveryGoldenCase) {
  for (const golden::Case& c : testing::math_extra_golden::kCases) EXPECT_TRUE(golden::matches(c, ops(), kCPU));
}

TEST(MathExtra, Gradcheck) {
  // Inputs apart from each other, so no tie sits within the finite-difference step.
  EXPECT_TRUE(gradcheck([](In x) { return fmax(x[0], x[1]); }, {input({6}, -1.0, 1.0, 3), input({6}, -1.0, 1.0, 4)}));
  EXPECT_TRUE(gradcheck([](In x) { return fmin(x[0], x[1]); }, {input({2, 3}, -1.0, 1.0, 3), input({3}, -1.0, 1.0, 4)}));
  EXPECT_TRUE(gradcheck([](In x) { return ldexp(x[0], x[1]); }, {input({5}), input({5}, -2.0, 2.0, 9)}));
  EXPECT_TRUE(gradcheck([](In x) { return deg2rad(x[0]); }, {input({5})}));
  EXPECT_TRUE(gradcheck([](In x) { return rad2deg(x[0]); }, {input({5})}));
}

TEST(MathExtra, Refusals) {
  const Tensor f = raw::ones({2}), b = raw::ones({2}, kBool);
  EXPECT_TRUE(throws_with([&] { gcd(f, f); }, "gcd: not implemented for float32 tensors; it takes integer tensors"));
  EXPECT_TRUE(throws_with([&] { lcm(b, b); }, "lcm: not implemented for bool tensors"));
  EXPECT_TRUE(throws_with([&] { fmax(f, raw::ones({3})); }, "broadcast"));
}

TEST(MathExtra, EveryGoldenCaseOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const golden::Case& c : testing::math_extra_golden::kCases) {
    EXPECT_TRUE(golden::matches(c, ops(), Device::cuda(0)));
  }
}

}  // namespace
}  // namespace colony
