// nn::BatchNorm2d on CUDA against the CPU, in training (batch statistics, running statistics
// updated) and in evaluation (running statistics used); momentum=None's cumulative average.
#include "nn/batchnorm.h"

#include <gtest/gtest.h>

#include <optional>
#include <sstream>

#include "tests/nn/cuda_module_check.h"

namespace colony::nn {
namespace {

using testing::CudaModuleCheck;
using testing::expect_cuda_module_matches_cpu;

// A BatchNorm2d whose running statistics and affine parameters are not their initial values (so
// evaluation mode is not the identity), made on the CPU.
std::shared_ptr<Module> trained_batch_norm() {
  auto bn = std::make_shared<BatchNorm2d>(BatchNorm2dOptions(4).momentum(0.3));
  Generator gen(9);
  raw::copy_(bn->weight, raw::add(raw::rand({4}, TensorOptions(kFloat32), &gen), 0.5));
  raw::copy_(bn->bias, raw::randn({4}, TensorOptions(kFloat32), &gen));
  bn->forward(raw::add(raw::mul(raw::randn({8, 4, 5, 5}, TensorOptions(kFloat32), &gen), 3.0), 1.0));
  return bn;
}

// torch's momentum=None: after k batches the running statistics are the plain average of the k
// batches' means and unbiased variances (the initial 0 and 1 forgotten at the first).
TEST(BatchNorm2dModule, MomentumNoneKeepsTheCumulativeAverage) {
  auto bn = std::make_shared<BatchNorm2d>(BatchNorm2dOptions(3).momentum(std::nullopt));
  bn->to(kFloat64);
  Tensor mean_sum = raw::zeros({3}, TensorOptions(kFloat64)), var_sum = raw::zeros({3}, TensorOptions(kFloat64));
  Generator gen(12);
  for (int k = 1; k <= 3; ++k) {
    Tensor x = raw::add(raw::mul(raw::randn({4, 3, 2, 5}, TensorOptions(kFloat64), &gen), 1.0 + k), k);
    bn->forward(x);
    mean_sum = raw::add(mean_sum, raw::mean(x, {0, 2, 3}));
    var_sum = raw::add(var_sum, raw::var(x, {0, 2, 3}, /*unbiased=*/true));
    EXPECT_TRUE(testing::all_close(bn->running_mean, raw::mul(mean_sum, 1.0 / k), 1e-12, 1e-12)) << "after " << k;
    EXPECT_TRUE(testing::all_close(bn->running_var, raw::mul(var_sum, 1.0 / k), 1e-12, 1e-12)) << "after " << k;
  }
  std::ostringstream printed;
  printed << *bn;
  EXPECT_EQ(printed.str(),
            "BatchNorm2d(3, eps=1e-05, momentum=None, affine=True, bias=True, track_running_stats=True)");
}

TEST(BatchNorm2dModule, TrainingOnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Generator gen(10);
  Tensor x = raw::add(raw::mul(raw::randn({6, 4, 7, 5}, TensorOptions(kFloat32), &gen), 2.0), -0.5);
  CudaModuleCheck check;
  check.training = true;  // the running statistics after the step are compared too
  expect_cuda_module_matches_cpu(trained_batch_norm, x, check);
}

TEST(BatchNorm2dModule, EvaluationOnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Generator gen(11);
  Tensor x = raw::randn({3, 4, 6, 6}, TensorOptions(kFloat32), &gen);
  CudaModuleCheck check;
  check.training = false;
  expect_cuda_module_matches_cpu(trained_batch_norm, x, check);
}

}  // namespace
}  // namespace colony::nn
