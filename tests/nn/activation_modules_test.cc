// The modules of nn/activation.h (LeakyReLU, ELU, ..., Softmax, PReLU) and Identity / Unflatten
// (nn/layers.h): PyTorch's printing, defaults and error messages, use in Sequential and through
// AnyModule, PReLU's parameter, the F:: options, and CUDA against the CPU. Their values and
// gradients against PyTorch: activation_golden_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "autograd/autocast.h"
#include "autograd/autograd.h"
#include "nn/activation.h"
#include "nn/containers.h"
#include "nn/layers.h"
#include "nn/linear.h"
#include "tensor/random.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"

namespace colony {
namespace {

namespace F = nn::functional;
using testing::all_close;
using testing::throws_with;

Tensor sample(const Shape& shape, uint64_t seed, DType dtype = kFloat32) {
  Generator gen(seed);
  return raw::to(raw::mul(raw::randn(shape, TensorOptions(kFloat32), &gen), 3.0), kCPU, dtype);
}

std::string printed(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

// One of each, with PyTorch's defaults, and the same with options, printed as
// print(torch.nn.Sequential(...)) prints them (torch 2.15).
TEST(ActivationModules, PrintAsPyTorch) {
  nn::Sequential defaults(
      std::make_shared<nn::LeakyReLU>(), std::make_shared<nn::ELU>(), std::make_shared<nn::SELU>(),
      std::make_shared<nn::CELU>(), std::make_shared<nn::Softplus>(), std::make_shared<nn::Mish>(),
      std::make_shared<nn::Hardswish>(), std::make_shared<nn::Hardsigmoid>(), std::make_shared<nn::Hardtanh>(),
      std::make_shared<nn::ReLU6>(), std::make_shared<nn::LogSigmoid>(), std::make_shared<nn::Tanh>(),
      std::make_shared<nn::Sigmoid>(), std::make_shared<nn::Softmax>(-1), std::make_shared<nn::LogSoftmax>(1),
      std::make_shared<nn::Softmin>(0), std::make_shared<nn::Identity>(),
      std::make_shared<nn::Unflatten>(1, std::vector<int64_t>{2, 5}), std::make_shared<nn::PReLU>(),
      std::make_shared<nn::PReLU>(nn::PReLUOptions(3, 0.1)), std::make_shared<nn::Softsign>(),
      std::make_shared<nn::Tanhshrink>());
  EXPECT_EQ(printed(defaults),
            "Sequential(\n"
            "  (0): LeakyReLU(negative_slope=0.01)\n"
            "  (1): ELU(alpha=1.0)\n"
            "  (2): SELU()\n"
            "  (3): CELU(alpha=1.0)\n"
            "  (4): Softplus(beta=1.0, threshold=20.0)\n"
            "  (5): Mish()\n"
            "  (6): Hardswish()\n"
            "  (7): Hardsigmoid()\n"
            "  (8): Hardtanh(min_val=-1.0, max_val=1.0)\n"
            "  (9): ReLU6()\n"
            "  (10): LogSigmoid()\n"
            "  (11): Tanh()\n"
            "  (12): Sigmoid()\n"
            "  (13): Softmax(dim=-1)\n"
            "  (14): LogSoftmax(dim=1)\n"
            "  (15): Softmin(dim=0)\n"
            "  (16): Identity()\n"
            "  (17): Unflatten(dim=1, unflattened_size=(2, 5))\n"
            "  (18): PReLU(num_parameters=1)\n"
            "  (19): PReLU(num_parameters=3)\n"
            "  (20): Softsign()\n"
            "  (21): Tanhshrink()\n"
            ")");
  // nn.LeakyReLU(0.2), nn.ELU(0.5), nn.CELU(2.0), nn.Softplus(2, 10), nn.Hardtanh(-2, 3.5),
  // nn.Unflatten(-1, (5,)).
  EXPECT_EQ(nn::LeakyReLU(0.2).repr(), "LeakyReLU(negative_slope=0.2)");
  EXPECT_EQ(nn::ELU(nn::ELUOptions().alpha(0.5)).repr(), "ELU(alpha=0.5)");
  EXPECT_EQ(nn::CELU(2.0).repr(), "CELU(alpha=2.0)");
  EXPECT_EQ(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(10)).repr(), "Softplus(beta=2.0, threshold=10.0)");
  EXPECT_EQ(nn::Hardtanh(nn::HardtanhOptions(-2, 3.5)).repr(), "Hardtanh(min_val=-2.0, max_val=3.5)");
  EXPECT_EQ(nn::Unflatten(-1, {5}).repr(), "Unflatten(dim=-1, unflattened_size=(5,))");
}

// The model of the task: Sequential(Linear, Tanh, Linear, Softmax(-1)), trained one step's worth.
TEST(ActivationModules, MlpWithTanhAndSoftmaxInSequential) {
  auto first = std::make_shared<nn::Linear>(6, 8);
  auto second = std::make_shared<nn::Linear>(8, 3);
  nn::Sequential model(first, std::make_shared<nn::Tanh>(), second, std::make_shared<nn::Softmax>(-1));
  Tensor x = sample({4, 6}, 1);
  Tensor y = model.forward(x);
  Tensor expected = softmax(second->forward(tanh(first->forward(x))), -1);
  EXPECT_TRUE(all_close(y, expected, 0, 0));
  EXPECT_TRUE(all_close(sum(y, {1}), raw::ones({4}), 1e-6, 1e-6));
  sum(mul(y, sample({4, 3}, 2))).backward();
  EXPECT_TRUE(first->weight.grad().defined());
  EXPECT_TRUE(second->bias.grad().defined());
}

// Every module is its F:: function, through the module, a Sequential and an AnyModule in a ModuleList.
TEST(ActivationModules, ModulesAreTheirFunctions) {
  const Tensor x = sample({2, 3, 5}, 3);
  struct Case {
    std::shared_ptr<nn::Module> module;
    std::function<Tensor(const Tensor&)> fn;
  };
  std::vector<Case> cases = {
      {std::make_shared<nn::LeakyReLU>(0.2), [](const Tensor& t) { return F::leaky_relu(t, 0.2); }},
      {std::make_shared<nn::ELU>(0.5), [](const Tensor& t) { return F::elu(t, 0.5); }},
      {std::make_shared<nn::SELU>(), [](const Tensor& t) { return F::selu(t); }},
      {std::make_shared<nn::CELU>(2.0), [](const Tensor& t) { return F::celu(t, 2.0); }},
      {std::make_shared<nn::Softplus>(nn::SoftplusOptions().beta(2).threshold(3)),
       [](const Tensor& t) { return F::softplus(t, F::SoftplusFuncOptions().beta(2).threshold(3)); }},
      {std::make_shared<nn::Mish>(), [](const Tensor& t) { return F::mish(t); }},
      {std::make_shared<nn::Hardswish>(), [](const Tensor& t) { return F::hardswish(t); }},
      {std::make_shared<nn::Hardsigmoid>(), [](const Tensor& t) { return F::hardsigmoid(t); }},
      {std::make_shared<nn::Hardtanh>(nn::HardtanhOptions(-2, 3)), [](const Tensor& t) { return F::hardtanh(t, {-2, 3}); }},
      {std::make_shared<nn::ReLU6>(), [](const Tensor& t) { return clamp(t, 0.0, 6.0); }},
      {std::make_shared<nn::LogSigmoid>(), [](const Tensor& t) { return log(sigmoid(t)); }},
      {std::make_shared<nn::Tanh>(), [](const Tensor& t) { return tanh(t); }},
      {std::make_shared<nn::Sigmoid>(), [](const Tensor& t) { return sigmoid(t); }},
      {std::make_shared<nn::Softmax>(1), [](const Tensor& t) { return softmax(t, 1); }},
      {std::make_shared<nn::LogSoftmax>(-1), [](const Tensor& t) { return log_softmax(t, -1); }},
      {std::make_shared<nn::Softmin>(0), [](const Tensor& t) { return softmax(neg(t), 0); }},
      {std::make_shared<nn::Softsign>(), [](const Tensor& t) { return div(t, add(abs(t), 1.0)); }},
      {std::make_shared<nn::Tanhshrink>(), [](const Tensor& t) { return sub(t, tanh(t)); }},
      {std::make_shared<nn::Identity>(), [](const Tensor& t) { return t; }},
  };
  nn::ModuleList list;
  for (const Case& c : cases) list.push_back(c.module);
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].module->repr());
    const Tensor expected = cases[i].fn(x);
    // LogSigmoid against log(sigmoid): the stable form differs by rounding only on these values.
    const double tol = cases[i].module->name() == "LogSigmoid" ? 1e-6 : 0;
    EXPECT_TRUE(all_close(cases[i].module->forward(x), expected, tol, tol));
    EXPECT_TRUE(all_close(list.any(i).forward(x), expected, tol, tol));
    EXPECT_TRUE(all_close(nn::Sequential({cases[i].module}).forward(x), expected, tol, tol));
  }
}

TEST(ActivationModules, IdentityReturnsItsInput) {
  Tensor x = sample({2, 3}, 4);
  Tensor y = nn::Identity().forward(x);
  EXPECT_EQ(y.data_ptr<float>(), x.data_ptr<float>());
  EXPECT_EQ(y.sizes(), x.sizes());
}

TEST(ActivationModules, UnflattenSplitsOneDim) {
  Tensor x = sample({3, 10, 2}, 5);
  EXPECT_EQ(nn::Unflatten(1, {2, 5}).forward(x).sizes(), (Shape{3, 2, 5, 2}));
  EXPECT_EQ(nn::Unflatten(1, {-1, 5}).forward(x).sizes(), (Shape{3, 2, 5, 2}));
  EXPECT_EQ(nn::Unflatten(-1, {1, 2, 1}).forward(x).sizes(), (Shape{3, 10, 1, 2, 1}));
  Tensor y = nn::Unflatten(nn::UnflattenOptions(0, {3, 1})).forward(x);
  EXPECT_EQ(y.sizes(), (Shape{3, 1, 10, 2}));
  EXPECT_EQ(y.data_ptr<float>(), x.data_ptr<float>());  // a view
  // A transposed input, as torch.randn(2, 10).t().unflatten(0, (2, 5)).
  Tensor t = transpose(sample({2, 10}, 6), 0, 1);
  Tensor u = nn::Unflatten(0, {2, 5}).forward(t);
  EXPECT_EQ(u.sizes(), (Shape{2, 5, 2}));
  EXPECT_TRUE(all_close(flatten(u, 0, 1), t, 0, 0));
  // The gradient goes back through the reshape.
  Tensor leaf = sample({3, 10}, 7);
  leaf.requires_grad_();
  sum(mul(nn::Unflatten(1, {2, 5}).forward(leaf), 2.0)).backward();
  EXPECT_TRUE(all_close(leaf.grad(), raw::full({3, 10}, 2.0), 0, 0));
}

TEST(ActivationModules, UnflattenErrorsAsPyTorch) {
  Tensor x = sample({3, 10}, 8);
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { nn::Unflatten(1, std::vector<int64_t>{}).forward(x); },
                                                 "unflatten: sizes must be non-empty"));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { nn::Unflatten(1, {2, 4}).forward(x); },
      "unflatten: Provided sizes [2, 4] don't multiply up to the size of dim 1 (10) in the input tensor"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { nn::Unflatten(1, {-1, -1}).forward(x); },
                                                 "only one dimension can be inferred"));
  EXPECT_TRUE(throws_with<std::exception>([&] { nn::Unflatten(3, {1, 2}).forward(x); }, "out of range"));
}

TEST(ActivationModules, PReLUHasOneLearnableSlopeOrOnePerChannel) {
  nn::PReLU one;
  ASSERT_EQ(one.named_parameters().size(), 1u);
  EXPECT_EQ(one.named_parameters()[0].first, "weight");
  EXPECT_EQ(one.weight.sizes(), (Shape{1}));
  EXPECT_EQ(testing::values(one.weight), std::vector<double>{0.25});
  EXPECT_TRUE(one.weight.requires_grad());
  nn::PReLU per_channel(nn::PReLUOptions().num_parameters(3).init(-0.5));
  EXPECT_EQ(testing::values(per_channel.weight), (std::vector<double>{-0.5, -0.5, -0.5}));
  EXPECT_EQ(per_channel.state_dict().size(), 1u);

  // x > 0 ? x : w[c] x, channel c = dim 1; the weight's gradient is the sum of x g where x <= 0.
  Tensor x = raw::from_vector(std::vector<float>{1, -2, 3, -4, -5, 6}, {1, 3, 2});
  x.requires_grad_();
  per_channel.weight = per_channel.replace_parameter("weight", raw::from_vector(std::vector<float>{0.5, 2, -1}, {3}));
  Tensor y = per_channel.forward(x);
  EXPECT_EQ(testing::values(y), (std::vector<double>{1, -1, 3, -8, 5, 6}));
  sum(y).backward();
  EXPECT_EQ(testing::values(x.grad()), (std::vector<double>{1, 0.5, 1, 2, -1, 1}));
  EXPECT_EQ(testing::values(per_channel.weight.grad()), (std::vector<double>{-2, -4, -5}));
  // One slope serves every channel; inputs of one dim have a single channel.
  EXPECT_EQ(testing::values(one.forward(raw::from_vector(std::vector<float>{-4, 4}, {2}))),
            (std::vector<double>{-1, 4}));
}

TEST(ActivationModules, ErrorsAsPyTorch) {
  Tensor x = sample({2, 4}, 9);
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { nn::PReLU(3).forward(x); },
                                                 "Mismatch of parameter numbers and input channel size. Found "
                                                 "parameter numbers = 3 and channel size = 4."));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { F::prelu(x, raw::ones({4, 1})); },
                                                 "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { nn::CELU(0.0).forward(x); },
                                                 "ZeroDivisionError: alpha cannot be 0 for CELU"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { nn::Hardtanh(nn::HardtanhOptions(1, 0)); },
                                                 "max_val (0.0) must be greater than min_val (1.0)"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { nn::Hardtanh(nn::HardtanhOptions(1, 1)); }, "must be greater"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { F::hardtanh(x, F::HardtanhFuncOptions(1, 0)); },
                                                 "min_val cannot be greater than max_val"));
  EXPECT_EQ(testing::values(F::hardtanh(x, F::HardtanhFuncOptions(0.5, 0.5))), std::vector<double>(8, 0.5));
  Tensor ints = raw::from_vector(std::vector<int64_t>{-1, 2}, {2});
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { nn::Mish().forward(ints); },
                                                 "mish: expected a floating-point tensor, got int64"));
}

// softplus has a row in the autocast table (PyTorch's CUDA float32 list): a bfloat16 input computes
// in float32; the other activations keep their input's dtype.
TEST(ActivationModules, AutocastRunsSoftplusInFloat32) {
  Tensor h = sample({3, 4}, 10, kBFloat16);
  AutocastGuard amp(DeviceType::CPU, kBFloat16);
  Tensor y = nn::Softplus().forward(h);
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_EQ(nn::Mish().forward(h).dtype(), kBFloat16);
  EXPECT_EQ(nn::Softmin(1).forward(h).dtype(), kFloat32);  // through softmax's row, as F.softmin
}

TEST(ActivationModules, ModulesOnCudaMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Tensor x = sample({2, 3, 4, 5}, 11);
  for (const auto& make : std::vector<std::function<std::shared_ptr<nn::Module>()>>{
           [] { return std::make_shared<nn::LeakyReLU>(0.2); }, [] { return std::make_shared<nn::ELU>(); },
           [] { return std::make_shared<nn::SELU>(); }, [] { return std::make_shared<nn::CELU>(0.5); },
           [] { return std::make_shared<nn::Softplus>(nn::SoftplusOptions().beta(2).threshold(4)); },
           [] { return std::make_shared<nn::Mish>(); }, [] { return std::make_shared<nn::Hardswish>(); },
           [] { return std::make_shared<nn::Hardsigmoid>(); }, [] { return std::make_shared<nn::Hardtanh>(); },
           [] { return std::make_shared<nn::ReLU6>(); }, [] { return std::make_shared<nn::LogSigmoid>(); },
           [] { return std::make_shared<nn::Softmin>(1); }, [] { return std::make_shared<nn::Softsign>(); },
           [] { return std::make_shared<nn::Tanhshrink>(); }, [] { return std::make_shared<nn::PReLU>(3, -0.3); },
           [] { return std::make_shared<nn::Unflatten>(2, std::vector<int64_t>{2, 2}); }}) {
    SCOPED_TRACE(make()->repr());
    testing::expect_cuda_module_matches_cpu(make, x);
  }
}

// The functor table's activations in every floating dtype on CUDA against the CPU: the same
// elementwise_functors.h math, so within the device libm's ulp or two.
TEST(ActivationModules, FunctorsOnCudaMatchTheCpuInEveryDtype_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  const std::vector<std::function<Tensor(const Tensor&)>> fns = {
      [](const Tensor& t) { return F::leaky_relu(t, 0.2); }, [](const Tensor& t) { return F::elu(t); },
      [](const Tensor& t) { return F::selu(t); }, [](const Tensor& t) { return F::celu(t, 0.5); },
      [](const Tensor& t) { return F::softplus(t); }, [](const Tensor& t) { return F::mish(t); },
      [](const Tensor& t) { return F::hardswish(t); }, [](const Tensor& t) { return F::hardsigmoid(t); },
      [](const Tensor& t) { return F::hardtanh(t, {-2, 2.5}); }, [](const Tensor& t) { return F::logsigmoid(t); }};
  for (DType dtype : {kFloat32, kFloat64, kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor host = sample({3, 17}, 12, dtype);
    const double tol = dtype == kFloat32 ? 1e-6 : dtype == kFloat64 ? 1e-13 : 1e-2;
    for (size_t i = 0; i < fns.size(); ++i) {
      SCOPED_TRACE(i);
      Tensor xc = host.detach(), xg = raw::to(host, dev, dtype);
      xc.requires_grad_();
      xg.requires_grad_();
      Tensor yc = fns[i](xc), yg = fns[i](xg);
      EXPECT_TRUE(all_close(raw::to(yg, kCPU, dtype), yc, tol, tol));
      sum(mul(yc, yc)).backward();
      sum(mul(yg, yg)).backward();
      EXPECT_TRUE(all_close(raw::to(xg.grad(), kCPU, dtype), xc.grad(), 10 * tol, 10 * tol));
    }
  }
}

}  // namespace
}  // namespace colony
