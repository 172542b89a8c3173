// Linear on LeNet's three fully-connected layers, forward and backward, for every batch size from
// 1 to 9 (every remainder of the register tiles' rows), against direct sums in double precision,
// on the CPU's own instruction set and again capped to AVX2 (COLONY_CPU_ISA=avx2, in a child
// process). A linear layer's forward runs the small-GEMM dot tiles on rows of the batch, so under
// CI's ASan run of tests/nn both copies of those tiles are exercised on every machine.
// Also nn::Linear on CUDA against the CPU (cuda_module_check.h).
#include "nn/linear.h"

#include <gtest/gtest.h>

#include <string>

#include "autograd/autograd.h"
#include "tests/nn/direct_sums.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using nn::Linear;
using nn::LinearOptions;
using testing::expect_cuda_module_matches_cpu;

using testing::DirectSum;
using testing::index_str;

// y = x W^T + b; for the loss sum(y * g): dW = g^T x, db = sum of g over the batch, dx = g W.
void check_layer(int64_t batch, int64_t in, int64_t out) {
  auto fc = std::make_shared<nn::Linear>(in, out);
  {
    NoGradGuard no_grad;  // a write autograd does not record
    fc->weight.copy_(testing::pattern({out, in}, 1));
    fc->bias.copy_(testing::pattern({out}, 2));
  }
  Tensor x = testing::pattern({batch, in}, 3);
  x.requires_grad_();
  const Tensor g = testing::pattern({batch, out}, 4);
  Tensor y = fc->forward(x);
  (y * g).sum().backward();

  const auto xv = testing::values(x), wv = testing::values(fc->weight), bv = testing::values(fc->bias);
  const auto gv = testing::values(g), yv = testing::values(y);
  const auto dx = testing::values(x.grad()), dw = testing::values(fc->weight.grad());
  const auto db = testing::values(fc->bias.grad());
  testing::DirectSumChecker check;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < out; ++o) {
      DirectSum want;
      want.add(bv[o]);
      for (int64_t i = 0; i < in; ++i) want.add(xv[n * in + i] * wv[o * in + i]);
      check.expect(yv[n * out + o], want, "y" + index_str({n, o}));
    }
  for (int64_t o = 0; o < out; ++o) {
    DirectSum want_b;
    for (int64_t n = 0; n < batch; ++n) want_b.add(gv[n * out + o]);
    check.expect(db[o], want_b, "db" + index_str({o}));
    for (int64_t i = 0; i < in; ++i) {
      DirectSum want;
      for (int64_t n = 0; n < batch; ++n) want.add(gv[n * out + o] * xv[n * in + i]);
      check.expect(dw[o * in + i], want, "dw" + index_str({o, i}));
    }
  }
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < in; ++i) {
      DirectSum want;
      for (int64_t o = 0; o < out; ++o) want.add(gv[n * out + o] * wv[o * in + i]);
      check.expect(dx[n * in + i], want, "dx" + index_str({n, i}));
    }
  EXPECT_EQ(check.bad(), 0) << "values off in Linear(" << in << ", " << out << ") on a batch of " << batch;
}

void check_lenet_layers() {
  for (int64_t batch = 1; batch <= 9; ++batch) {
    check_layer(batch, 400, 120);
    check_layer(batch, 120, 84);
    check_layer(batch, 84, 10);
  }
}

TEST(Linear, LeNetLayersMatchTheDirectSumsOnThisCpusInstructionSetAndOnAvx2) {
  testing::on_this_isa_and_on_avx2(check_lenet_layers);
}


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
}  // namespace colony
