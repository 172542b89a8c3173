// contiguous, clone, dtype casts, device moves, detach, pin_memory (autograd/convert.cc).
#include "runtime/cuda.h"
#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

TEST(Convert, Contiguous) {
  Tensor x = input({2, 3});
  EXPECT_TRUE(x.contiguous().is_same(x));  // already contiguous: the tensor itself, no node
  Tensor s = strided_input({2, 3});
  Tensor c = s.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_TRUE(c.requires_grad());
  EXPECT_TRUE(gradcheck([](In in) { return in[0].contiguous(); }, {s}));
  EXPECT_TRUE(gradcheck([](In in) { return contiguous(in[0].t()); }, {x}));
}

TEST(Convert, Clone) {
  Tensor x = input({2, 3});
  Tensor c = x.clone();
  EXPECT_NE(c.data_ptr_raw(), x.data_ptr_raw());
  EXPECT_TRUE(gradcheck([](In in) { return in[0].clone(); }, {x}));
  EXPECT_TRUE(gradcheck([](In in) { return clone(in[0]); }, {strided_input({2, 3})}));
}

TEST(Convert, DtypeCastSendsGradientBackInTheInputDtype) {
  Tensor x = tensor({1.0, 2.0}, TensorOptions(kFloat32).requires_grad(true));
  Tensor y = x.to(kFloat64);
  EXPECT_EQ(y.dtype(), kFloat64);
  EXPECT_TRUE(x.to(kFloat32).is_same(x));
  (y * raw::tensor({3.0, 4.0}, kFloat64)).sum().backward();
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0, 4.0})));
  EXPECT_TRUE(gradcheck([](In in) { return in[0].to(kFloat32).to(kFloat64); }, {input({3})},
                        testing::GradcheckOptions{1e-3, 1e-3, 1e-3}));  // float32 round trip: coarse eps
}

TEST(Convert, CastToIntegerEndsTheGraph) {
  Tensor x = tensor({1.5, 2.5}, TensorOptions().requires_grad(true));
  Tensor i = x.to(kInt64);
  EXPECT_FALSE(i.requires_grad());
}

TEST(Convert, SameDeviceIsTheTensorItself) {
  Tensor x = input({2});
  EXPECT_TRUE(x.to(kCPU).is_same(x));
  EXPECT_TRUE(x.cpu().is_same(x));
}

TEST(Convert, DetachSharesStorageWithoutHistory) {
  Tensor x = input({2, 3});
  Tensor y = x * 2.0;
  Tensor d = detach(y);
  EXPECT_EQ(d.storage(), y.storage());
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.grad_fn(), nullptr);
  EXPECT_FALSE(x.detach().requires_grad());
}

TEST(Convert, DeviceRoundTrip_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor x = tensor({1.0, 2.0, 3.0}, TensorOptions().requires_grad(true));
  Tensor g = x.cuda();
  EXPECT_TRUE(g.is_cuda());
  Tensor loss = (g * g).sum();
  loss.backward();
  EXPECT_TRUE(x.grad().is_cpu());
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({2.0, 4.0, 6.0})));
}

TEST(Convert, GradOnTheDevice_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor w = tensor({1.0, -2.0}, TensorOptions(Device::cuda(0)).requires_grad(true));
  Tensor x = raw::tensor({3.0, 4.0}).cuda();
  (relu(w * x) + exp(w)).sum().backward();
  EXPECT_TRUE(w.grad().is_cuda());
  EXPECT_TRUE(all_close(w.grad().cpu(), raw::tensor({3.0 + std::exp(1.0), std::exp(-2.0)}), 1e-5));
}

TEST(Convert, PinMemory_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor x = tensor({1.0, 2.0}, TensorOptions().requires_grad(true));
  Tensor p = x.pin_memory();
  EXPECT_TRUE(p.is_pinned());
  (p * 3.0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0, 3.0})));
}

}  // namespace
}  // namespace colony
