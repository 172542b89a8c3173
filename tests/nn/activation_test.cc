// nn/activation.h: F::gelu / F::silu and the GELU / SiLU modules (options, errors, printing), their
// values against float64 references, and CUDA against the CPU. The gradients are checked by finite
// differences in tests/autograd/unary_test.cc, the math in tests/kernels/elementwise_functors_test.cc.
#include "nn/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "autograd/autocast.h"
#include "autograd/autograd.h"
#include "nn/containers.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace colony {
namespace {

namespace F = nn::functional;
using testing::all_close;
using testing::throws_with;

Tensor sample(uint64_t seed, DType dtype = kFloat32) {
  Generator gen(seed);
  return raw::to(raw::mul(raw::randn({3, 17}, TensorOptions(kFloat32), &gen), 3.0), kCPU, dtype);
}

// The float64 formulas, element by element.
Tensor reference(const Tensor& x, double (*f)(double)) {
  std::vector<double> v = testing::values(x);
  for (double& e : v) e = f(e);
  return raw::from_vector(v, x.sizes());
}
double gelu_exact(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
double silu_ref(double x) { return x / (1 + std::exp(-x)); }

TEST(Activation, FunctionalFormsMatchTheFormulas) {
  Tensor x = sample(1);
  EXPECT_TRUE(all_close(F::gelu(x), reference(x, gelu_exact), 1e-6, 1e-6));
  EXPECT_TRUE(all_close(F::gelu(x, F::GELUFuncOptions().approximate("tanh")), reference(x, gelu_tanh), 1e-6, 1e-6));
  EXPECT_TRUE(all_close(F::silu(x), reference(x, silu_ref), 1e-6, 1e-6));
  Tensor d = sample(2, kFloat64);
  EXPECT_TRUE(all_close(F::gelu(d), reference(d, gelu_exact), 1e-14, 1e-14));
}

TEST(Activation, ModulesForwardAndPrintAsPyTorch) {
  Tensor x = sample(3);
  auto exact = std::make_shared<nn::GELU>();
  auto approx = std::make_shared<nn::GELU>(nn::GELUOptions().approximate("tanh"));
  auto silu = std::make_shared<nn::SiLU>();
  EXPECT_TRUE(all_close(exact->forward(x), F::gelu(x), 0, 0));
  EXPECT_TRUE(all_close(approx->forward(x), reference(x, gelu_tanh), 1e-6, 1e-6));
  EXPECT_TRUE(all_close(silu->forward(x), F::silu(x), 0, 0));
  nn::Sequential seq({std::shared_ptr<nn::Module>(approx), std::shared_ptr<nn::Module>(silu)});
  std::ostringstream printed;
  printed << seq;
  EXPECT_EQ(printed.str(), "Sequential(\n  (0): GELU(approximate='tanh')\n  (1): SiLU()\n)");
}

TEST(Activation, BadApproximationIsRefused) {
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { nn::GELU(nn::GELUOptions().approximate("fast")); },
                                                 "gelu: approximate must be \"none\" or \"tanh\", got \"fast\""));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [] { F::gelu(sample(4), F::GELUFuncOptions().approximate("Tanh")); }, "got \"Tanh\""));
}

TEST(Activation, GradientsFlowThroughTheModules) {
  Tensor x = sample(5);
  x.requires_grad_();
  Tensor loss = sum(nn::SiLU().forward(nn::GELU().forward(x)));
  loss.backward();
  ASSERT_TRUE(x.grad().defined());
  // d/dx silu(gelu(x)) = silu'(gelu(x)) * gelu'(x), by the chain rule on the float64 formulas.
  std::vector<double> xs = testing::values(x.detach()), g = testing::values(x.grad());
  for (size_t i = 0; i < xs.size(); ++i) {
    const double h = 1e-5;
    double fd = (silu_ref(gelu_exact(xs[i] + h)) - silu_ref(gelu_exact(xs[i] - h))) / (2 * h);
    EXPECT_NEAR(g[i], fd, 1e-4 * (1 + std::fabs(fd))) << "element " << i;
  }
}

TEST(Activation, KeepTheInputDtypeUnderAutocast) {
  AutocastGuard amp(DeviceType::CPU, kBFloat16);
  Tensor x = sample(6, kBFloat16);
  EXPECT_EQ(F::gelu(x).dtype(), kBFloat16);
  EXPECT_EQ(F::silu(x).dtype(), kBFloat16);
  // Computed in float32 and rounded once: the bfloat16 result of the float32 formula.
  Tensor widened = raw::to(x, kCPU, kFloat32);
  EXPECT_TRUE(all_close(raw::to(F::gelu(x), kCPU, kFloat32), raw::to(raw::to(F::gelu(widened), kCPU, kBFloat16), kCPU, kFloat32), 0, 0));
}

TEST(Activation, CudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  for (DType dtype : {kFloat32, kFloat64, kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor host = sample(7, dtype);
    for (const char* approximate : {"none", "tanh"}) {
      Tensor xc = host.detach(), xg = raw::to(host, dev, dtype);
      xc.requires_grad_();
      xg.requires_grad_();
      Tensor yc = F::gelu(xc, F::GELUFuncOptions().approximate(approximate));
      Tensor yg = F::gelu(xg, F::GELUFuncOptions().approximate(approximate));
      // Device libm (erff, tanhf) differs from the host's by an ulp or two.
      const double tol = dtype == kFloat32 ? 1e-6 : dtype == kFloat64 ? 1e-13 : 1e-2;
      EXPECT_TRUE(all_close(raw::to(yg, kCPU, dtype), yc, tol, tol));
      sum(mul(yc, yc)).backward();
      sum(mul(yg, yg)).backward();
      EXPECT_TRUE(all_close(raw::to(xg.grad(), kCPU, dtype), xc.grad(), 10 * tol, 10 * tol));
    }
    Tensor xc = host.detach(), xg = raw::to(host, dev, dtype);
    xc.requires_grad_();
    xg.requires_grad_();
    Tensor yc = F::silu(xc), yg = F::silu(xg);
    const double tol = dtype == kFloat32 ? 1e-6 : dtype == kFloat64 ? 1e-13 : 1e-2;
    EXPECT_TRUE(all_close(raw::to(yg, kCPU, dtype), yc, tol, tol));
    sum(yc).backward();
    sum(yg).backward();
    EXPECT_TRUE(all_close(raw::to(xg.grad(), kCPU, dtype), xc.grad(), 10 * tol, 10 * tol));
  }
}

}  // namespace
}  // namespace colony
