// nn::Linear on CUDA against the CPU (the layer's math is tested in tests/tensor/).
#include "nn/linear.h"

#include <gtest/gtest.h>

#include "tests/nn/cuda_module_check.h"

namespace colony::nn {
namespace {

using testing::expect_cuda_module_matches_cpu;

TEST(LinearModule, ForwardAndBackwardOnCudaMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Generator gen(8);
  // 2-D and 3-D inputs (the leading dimensions are the batch), with and without bias.
  for (const Shape& shape : {Shape{5, 7}, Shape{2, 3, 7}}) {
    for (bool bias : {true, false}) {
      SCOPED_TRACE(shape_str(shape) + (bias ? " with bias" : " without bias"));
      Tensor x = raw::randn(shape, TensorOptions(kFloat32), &gen);
      expect_cuda_module_matches_cpu([&] { return std::make_shared<Linear>(LinearOptions(7, 4).bias(bias)); }, x);
    }
  }
}

}  // namespace
}  // namespace colony::nn
