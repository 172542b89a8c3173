// nn::Conv2d on CUDA against the CPU (the layer's math is tested in tests/tensor/nn_ops_test.cc).
#include "nn/conv.h"

#include <gtest/gtest.h>

#include "tests/nn/cuda_module_check.h"

namespace colony::nn {
namespace {

using testing::expect_cuda_module_matches_cpu;

TEST(Conv2dModule, ForwardAndBackwardOnCudaMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const Conv2dOptions& o : {Conv2dOptions(3, 6, 5), Conv2dOptions(4, 8, 3).stride(2).padding(1),
                                 Conv2dOptions(4, 6, {3, 1}).padding({1, 0}).dilation(2).groups(2).bias(false)}) {
    SCOPED_TRACE(Conv2d(o).repr());
    Generator gen(7);
    Tensor x = raw::randn({2, o.in_channels(), 12, 10}, TensorOptions(kFloat32), &gen);
    expect_cuda_module_matches_cpu([&] { return std::make_shared<Conv2d>(o); }, x);
  }
}

}  // namespace
}  // namespace colony::nn
