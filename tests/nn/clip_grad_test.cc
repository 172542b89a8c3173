#include "nn/clip_grad.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tensor/random.h"

#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

TEST(ClipGrad, LivesInNnUtilsAsInPyTorch) {
  Tensor w = raw::zeros({2}, TensorOptions(kFloat64).requires_grad(true));
  w.mutable_grad() = raw::from_vector<double>({3, 4});
  EXPECT_NEAR(utils::clip_grad_norm_({w}, 1.0), 5.0, 1e-12);
  EXPECT_NEAR(testing::values(w.grad())[1], 4 / (5 + 1e-6), 1e-9);
  utils::clip_grad_value_({w}, 0.1);
  EXPECT_EQ(testing::values(w.grad()), (std::vector<double>{0.1, 0.1}));
}

// The Euclidean norm of float32 gradients is taken in float32 (as PyTorch's foreach norm): it agrees
// with the float64 norm of the same values to float32's rounding, over several tensors, and the
// gradients are scaled by max_norm / (norm + 1e-6).
TEST(ClipGrad, Float32NormMatchesTheFloat64Norm) {
  Generator gen(7);
  std::vector<Tensor> params;
  double want = 0;
  for (int64_t n : {1, 1000, 70000}) {
    Tensor p = raw::zeros({n}, TensorOptions(kFloat32).requires_grad(true));
    p.mutable_grad() = raw::randn({n}, TensorOptions(kFloat32), &gen);
    for (double v : testing::values(p.grad())) want += v * v;
    params.push_back(p);
  }
  want = std::sqrt(want);
  const std::vector<double> before = testing::values(params[2].grad());
  const double total = utils::clip_grad_norm_(params, 1.0);
  EXPECT_NEAR(total, want, 1e-6 * want);
  const std::vector<double> after = testing::values(params[2].grad());
  const double coef = 1.0 / (total + 1e-6);
  for (size_t i = 0; i < after.size(); i += 997) EXPECT_NEAR(after[i], before[i] * coef, 1e-6 * std::abs(before[i]) + 1e-12);
  // Under max_norm nothing changes.
  EXPECT_NEAR(utils::clip_grad_norm_(params, 1e9), 1.0, 1e-5);
  EXPECT_EQ(testing::values(params[2].grad()), after);
}

// torch 2.6's two halves of clip_grad_norm_: the total norm of any tensors, and the scaling by a
// norm taken elsewhere (torch 2.15's values: 13 and 4.5144 below).
TEST(ClipGrad, TotalNormAndClippingByAGivenNorm) {
  const std::vector<Tensor> parts = {raw::from_vector<double>({3, 4}), Tensor(), raw::from_vector<double>({12})};
  EXPECT_NEAR(utils::get_total_norm(parts), 13.0, 1e-12);
  EXPECT_NEAR(utils::get_total_norm({raw::from_vector<double>({3, -4}), raw::from_vector<double>({1})}, 3.0),
              std::cbrt(92.0), 1e-12);  // 4.5144
  EXPECT_NEAR(utils::get_total_norm(parts, INFINITY), 12.0, 0);
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([&] { utils::get_total_norm(parts, -INFINITY); },
                                                          "norm_type must be positive"));
  Tensor w = raw::zeros({2}, TensorOptions(kFloat64).requires_grad(true));
  w.mutable_grad() = raw::from_vector<double>({3, 4});
  utils::clip_grads_with_norm_({w}, 2.0, 10.0);  // a norm from elsewhere: scaled by 2 / (10 + 1e-6)
  EXPECT_NEAR(testing::values(w.grad())[0], 3 * 2 / (10 + 1e-6), 1e-12);
  utils::clip_grads_with_norm_({w}, 2.0, 1.0);  // coefficient above 1: unchanged
  EXPECT_NEAR(testing::values(w.grad())[0], 3 * 2 / (10 + 1e-6), 1e-12);
}

// A non-finite total: torch's error when asked, else its scaling (NaN spreads to every gradient, an
// infinite norm zeroes the finite ones).
TEST(ClipGrad, NonFiniteNormsAsTorch) {
  Tensor w = raw::zeros({2}, TensorOptions(kFloat64).requires_grad(true));
  w.mutable_grad() = raw::from_vector<double>({NAN, 1});
  EXPECT_TRUE(testing::throws_with<std::runtime_error>(
      [&] { utils::clip_grad_norm_({w}, 1.0, 2.0, /*error_if_nonfinite=*/true); },
      "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. To "
      "disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"));
  EXPECT_TRUE(testing::throws_with<std::runtime_error>(
      [&] { utils::get_total_norm({w.grad()}, INFINITY, true); }, "The total norm of order inf for gradients"));
  EXPECT_TRUE(std::isnan(utils::clip_grad_norm_({w}, 1.0)));
  EXPECT_TRUE(std::isnan(testing::values(w.grad())[1]));
  w.mutable_grad() = raw::from_vector<double>({INFINITY, 1});
  EXPECT_TRUE(std::isinf(utils::clip_grad_norm_({w}, 1.0)));
  EXPECT_TRUE(std::isnan(testing::values(w.grad())[0]));
  EXPECT_EQ(testing::values(w.grad())[1], 0.0);
}

}  // namespace
}  // namespace colony::nn
