// The convolution's CPU entry points (kernels/cpu/conv_entry.cc, declared in kernels/common/conv.h),
// which the op layer reaches through run_kernel: every case of conv_reference.h against the naive
// loops in float64, forward and the three gradients, the unwanted gradients left untouched.
#include "kernels/common/conv.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/kernels/conv_reference.h"
#include "tests/kernels/kernel_testing.h"
#include "tests/test_util.h"

namespace colony::kernels {
namespace {

using namespace colony::testing;  // NOLINT(build/namespaces): the references and helpers of the kernel tests

TEST(ConvEntry, ForwardAndBackwardMatchTheNaiveLoops) {
  uint32_t seed = 11;
  for (const ConvCase& k : conv_cases()) {
    SCOPED_TRACE(name(k));
    const ConvDims d = dims(k);
    std::vector<double> x = random_values(numel(x_shape(k)), seed++);
    std::vector<double> w = random_values(numel(w_shape(k)), seed++);
    std::vector<double> b = random_values(k.o, seed++);
    std::vector<double> gy = random_values(k.n * k.o * d.ho * d.wo, seed++);
    const Conv2dGeometry g = geometry(k);
    std::string where;

    std::vector<double> y(gy.size(), 7.0);
    Conv2dForward::cpu(DType::Float64, g, x.data(), w.data(), k.bias ? b.data() : nullptr, y.data());
    EXPECT_TRUE(close(y, naive_conv(k, x, w, b), 1e-12, &where)) << "forward " << where;

    const NaiveGrads ref = naive_conv_backward(k, gy, x, w);
    std::vector<double> gx(x.size(), 7.0), gw(w.size(), 7.0), gb(k.o, 7.0);
    Conv2dBackward::cpu(DType::Float64, g, gy.data(), x.data(), w.data(), gx.data(), gw.data(), gb.data());
    EXPECT_TRUE(close(gx, ref.gx, 1e-12, &where)) << "grad_input " << where;
    EXPECT_TRUE(close(gw, ref.gw, 1e-11, &where)) << "grad_weight " << where;
    EXPECT_TRUE(close(gb, ref.gb, 1e-11, &where)) << "grad_bias " << where;
  }
}

TEST(ConvEntry, BackwardComputesOnlyTheGradientsAsked) {
  const ConvCase& k = conv_cases().front();
  const ConvDims d = dims(k);
  std::vector<double> x = random_values(numel(x_shape(k)), 3), w = random_values(numel(w_shape(k)), 4);
  std::vector<double> gy = random_values(k.n * k.o * d.ho * d.wo, 5);
  std::vector<double> gw(w.size(), 7.0);
  // No grad_x: w is not read (null), x is.
  Conv2dBackward::cpu(DType::Float64, geometry(k), gy.data(), x.data(), nullptr, nullptr, gw.data(), nullptr);
  std::string where;
  EXPECT_TRUE(close(gw, naive_conv_backward(k, gy, x, w).gw, 1e-11, &where)) << where;
}

}  // namespace
}  // namespace colony::kernels
