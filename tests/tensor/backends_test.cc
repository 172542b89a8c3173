// The TF32 / cuDNN switches with PyTorch's names: defaults here, their effect on a GPU.
#include "tensor/backends.h"

#include <gtest/gtest.h>

#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

TEST(Backends, BackendSwitchesHavePyTorchsDefaults) {
  EXPECT_FALSE(backends::cuda::matmul::allow_tf32());
  EXPECT_TRUE(backends::cudnn::allow_tf32());
  EXPECT_FALSE(backends::cudnn::benchmark());
  EXPECT_FALSE(backends::cudnn::deterministic());
  backends::cuda::matmul::set_allow_tf32(true);
  backends::cudnn::set_benchmark(true);
  EXPECT_TRUE(backends::cuda::matmul::allow_tf32());
  EXPECT_TRUE(backends::cudnn::benchmark());
  backends::cuda::matmul::set_allow_tf32(false);
  backends::cudnn::set_benchmark(false);
}

// 1 + 2^-12 needs 13 mantissa bits: TF32 (10 bits) rounds it to 1, float32 keeps it, so a sum of
// 64 such products (2^6 + 2^-6, exact in float32) tells which one ran.
TEST(Backends, Float32ProductsDoNotUseTf32UnlessAllowed_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  ASSERT_FALSE(backends::cuda::matmul::allow_tf32());
  const double x = 1.0 + 1.0 / 4096;
  Tensor a = raw::full({1, 64}, x, TensorOptions(kFloat32).device(Device::cuda(0)));
  Tensor ones = raw::ones({64, 1}, TensorOptions(kFloat32).device(Device::cuda(0)));
  EXPECT_EQ(raw::matmul(a, ones).item<float>(), static_cast<float>(64 * x));
  backends::cudnn::set_allow_tf32(false);
  Tensor img = raw::full({1, 64, 1, 1}, x, TensorOptions(kFloat32).device(Device::cuda(0)));
  Tensor w = raw::ones({1, 64, 1, 1}, TensorOptions(kFloat32).device(Device::cuda(0)));
  EXPECT_EQ(raw::conv2d(img, w).item<float>(), static_cast<float>(64 * x));
  for (bool bench : {false, true}) {  // benchmark and deterministic modes give the same numbers
    backends::cudnn::set_benchmark(bench);
    backends::cudnn::set_deterministic(true);
    EXPECT_EQ(raw::conv2d(img, w).item<float>(), static_cast<float>(64 * x)) << bench;
  }
  backends::cudnn::set_benchmark(false);
  backends::cudnn::set_deterministic(false);
  backends::cudnn::set_allow_tf32(true);
}

}  // namespace
}  // namespace colony
