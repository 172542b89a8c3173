// isin, block_diag, diagflat, dist, renorm, logdet, nuclear_norm, unravel_index
// (autograd/compose_more.cc): every case of compose_more_golden.h (torch's values and gradients,
// written by compose_more_golden.py), float64 gradchecks, torch's refusals, and a `_CUDA` test.
#include <cmath>
#include <map>
#include <string>

#include "tests/autograd/compose_more_golden.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::throws_with;
using In = const std::vector<Tensor>&;
namespace golden = testing::golden;

constexpr double kInf = std::numeric_limits<double>::infinity();

const std::map<std::string, golden::Op>& ops() {
  static const std::map<std::string, golden::Op> table = {
      {"isin", [](In x, Device) { return isin(x[0], x[1]); }},
      {"isin_invert", [](In x, Device) { return isin(x[0], x[1], false, true); }},
      {"block_diag3", [](In x, Device) { return block_diag({x[0], x[1], x[2]}); }},
      {"diagflat", [](In x, Device) { return diagflat(x[0]); }},
      {"diagflat_1", [](In x, Device) { return diagflat(x[0], 1); }},
      {"diagflat_m2", [](In x, Device) { return diagflat(x[0], -2); }},
      {"dist_2", [](In x, Device) { return x[0].dist(x[1]); }},
      {"dist_1", [](In x, Device) { return x[0].dist(x[1], 1.0); }},
      {"dist_3", [](In x, Device) { return x[0].dist(x[1], 3.0); }},
      {"dist_inf", [](In x, Device) { return x[0].dist(x[1], kInf); }},
      {"dist_0", [](In x, Device) { return x[0].dist(x[1], 0.0); }},
      {"renorm_2_0_1", [](In x, Device) { return renorm(x[0], 2.0, 0, 1.0); }},
      {"renorm_1_1_1p5", [](In x, Device) { return renorm(x[0], 1.0, 1, 1.5); }},
      {"renorm_3_m1_0p5", [](In x, Device) { return renorm(x[0], 3.0, -1, 0.5); }},
      {"logdet", [](In x, Device) { return logdet(x[0]); }},
      {"nuclear_norm", [](In x, Device) { return nuclear_norm(x[0]); }},
      {"nuclear_norm_dims_keep", [](In x, Device) { return nuclear_norm(x[0], {0, 2}, true); }},
      {"unravel_2_3", [](In x, Device) { return stack(unravel_index(x[0], {2, 3})); }},
      {"unravel_4_1_5", [](In x, Device) { return stack(unravel_index(x[0], {4, 1, 5})); }},
  };
  return table;
}

TEST(ComposeMore, EveryGoldenCase) {
  for (const golden::Case& c : testing::compose_more_golden::kCases) EXPECT_TRUE(golden::matches(c, ops(), kCPU));
}

TEST(ComposeMore, Gradcheck) {
  EXPECT_TRUE(gradcheck([](In x) { return block_diag({x[0], x[1]}); }, {input({2, 3}), input({2}, -1.0, 1.0, 3)}));
  EXPECT_TRUE(gradcheck([](In x) { return diagflat(x[0], -1); }, {input({2, 2})}));
  EXPECT_TRUE(gradcheck([](In x) { return x[0].dist(x[1], 3.0); }, {input({2, 3}), input({3}, -1.0, 1.0, 5)}));
  // Rows above and below maxnorm (norms of rows of 4 values in [-2, 2) straddle 2).
  EXPECT_TRUE(gradcheck([](In x) { return renorm(x[0], 2.0, 0, 2.0); }, {input({4, 4}, -2.0, 2.0, 11)}));
  EXPECT_TRUE(gradcheck([](In x) { return logdet(x[0]); },
                        {add(mul(raw::eye(3, -1, kFloat64), 2.0), input({3, 3}, -0.3, 0.3)).detach().requires_grad_(true)}));
  EXPECT_TRUE(gradcheck([](In x) { return nuclear_norm(x[0]); }, {input({3, 2})}));
}

TEST(ComposeMore, EdgeCases) {
  EXPECT_EQ(block_diag({}).sizes(), Shape({1, 0}));
  EXPECT_EQ(isin(raw::scalar_tensor(2.0), raw::tensor({1.0, 2.0})).sizes(), Shape({}));
  EXPECT_TRUE(testing::matches_values(isin(raw::tensor({1.0, 2.0}), raw::empty({0})), {0.0, 0.0}, 0.0));
  EXPECT_TRUE(unravel_index(raw::scalar_tensor(4.0, kInt64), {}).empty());
  EXPECT_EQ(logdet(raw::tensor({{1.0, 2.0}, {2.0, 4.0}}, kFloat64)).item<double>(), -kInf);
}

TEST(ComposeMore, RefusalsInTorchsWords) {
  EXPECT_TRUE(throws_with([] { block_diag({raw::ones({2, 2, 2})}); },
                          "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 0 has 3 dimensions"));
  EXPECT_TRUE(throws_with([] { renorm(raw::ones({2, 2}), 0.0, 0, 1.0); }, "renorm: non-positive-norm not supported"));
  EXPECT_TRUE(throws_with([] { renorm(raw::ones({2, 2}), 2.0, 0, -1.0); }, "renorm: expected maxnorm to be >= 0"));
  EXPECT_TRUE(throws_with([] { renorm(raw::ones({2}), 2.0, 0, 1.0); }, "renorm: input needs at least 2 dimensions, got 1"));
  EXPECT_TRUE(throws_with([] { renorm(raw::ones({2, 2}), 2.0, 2, 1.0); }, "out of range"));
  EXPECT_TRUE(throws_with([] { unravel_index(raw::ones({2}), {2, 3}); },
                          "expected 'indices' to be integer dtype, but got float32"));
  EXPECT_TRUE(throws_with([] { unravel_index(raw::ones({2}, kInt64), {2, -3}); }, "'shape' cannot have negative values"));
}

TEST(ComposeMore, EveryGoldenCaseOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const golden::Case& c : testing::compose_more_golden::kCases) {
    EXPECT_TRUE(golden::matches(c, ops(), Device::cuda(0)));
  }
}

}  // namespace
}  // namespace colony
