// Conv2d on LeNet's two layers, forward and backward, against a direct convolution in double
// precision, on the CPU's own instruction set and again capped to AVX2 (COLONY_CPU_ISA=avx2, in a
// child process: the cap is read once per process). Its point beyond the values: CI runs
// tests/nn under ASan+UBSan, so both copies of the small-GEMM register tiles (AVX-512 on an
// AVX-512 machine, AVX2 everywhere) run under the sanitizers on every CI machine: issue #35's
// stack-use-after-scope report in dot_tile<float, 2, 4> on AVX-512 came from a hand-run LeNet,
// as no sanitized CI test ran a convolution or a linear layer (linear_test) there.
// Also nn::Conv2d on CUDA against the CPU (cuda_module_check.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "nn/nn.h"
#include "tests/nn/direct_sums.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using nn::Conv2d;
using nn::Conv2dOptions;
using testing::expect_cuda_module_matches_cpu;

// Forward and backward of one layer (stride 1, no padding) compared with the direct sums:
//   y[n,o,i,j] = b[o] + sum_c,p,q x[n,c,i+p,j+q] w[o,c,p,q], and for the loss sum(y * g)
//   dw[o,c,p,q] = sum_n,i,j g[n,o,i,j] x[n,c,i+p,j+q], db[o] = sum g, dx[n,c,y,x] = sum g w.
void check_layer(int64_t batch, int64_t in, int64_t out, int64_t size, int64_t k) {
  const int64_t o_size = size - k + 1;
  auto conv = std::make_shared<nn::Conv2d>(nn::Conv2dOptions(in, out, k));
  {
    NoGradGuard no_grad;  // a write autograd does not record
    conv->weight.copy_(testing::pattern({out, in, k, k}, 1));
    conv->bias.copy_(testing::pattern({out}, 2));
  }
  Tensor x = testing::pattern({batch, in, size, size}, 3);
  x.requires_grad_();
  const Tensor g = testing::pattern({batch, out, o_size, o_size}, 4);
  Tensor y = conv->forward(x);
  (y * g).sum().backward();

  const auto xv = testing::values(x), wv = testing::values(conv->weight), bv = testing::values(conv->bias);
  const auto gv = testing::values(g), yv = testing::values(y);
  const auto dx = testing::values(x.grad()), dw = testing::values(conv->weight.grad());
  const auto db = testing::values(conv->bias.grad());
  auto X = [&](int64_t n, int64_t c, int64_t i, int64_t j) { return xv[((n * in + c) * size + i) * size + j]; };
  auto W = [&](int64_t o, int64_t c, int64_t p, int64_t q) { return wv[((o * in + c) * k + p) * k + q]; };
  auto G = [&](int64_t n, int64_t o, int64_t i, int64_t j) { return gv[((n * out + o) * o_size + i) * o_size + j]; };
  using testing::DirectSum;
  using testing::index_str;
  testing::DirectSumChecker check;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < o_size; ++i)
        for (int64_t j = 0; j < o_size; ++j) {
          DirectSum want;
          want.add(bv[o]);
          for (int64_t c = 0; c < in; ++c)
            for (int64_t p = 0; p < k; ++p)
              for (int64_t q = 0; q < k; ++q) want.add(X(n, c, i + p, j + q) * W(o, c, p, q));
          check.expect(yv[((n * out + o) * o_size + i) * o_size + j], want, "y" + index_str({n, o, i, j}));
        }
  for (int64_t o = 0; o < out; ++o) {
    DirectSum want_b;
    std::vector<DirectSum> want_w(static_cast<size_t>(in * k * k));
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t i = 0; i < o_size; ++i)
        for (int64_t j = 0; j < o_size; ++j) {
          want_b.add(G(n, o, i, j));
          for (int64_t c = 0; c < in; ++c)
            for (int64_t p = 0; p < k; ++p)
              for (int64_t q = 0; q < k; ++q) want_w[(c * k + p) * k + q].add(G(n, o, i, j) * X(n, c, i + p, j + q));
        }
    check.expect(db[o], want_b, "db" + index_str({o}));
    for (int64_t w = 0; w < in * k * k; ++w) check.expect(dw[o * in * k * k + w], want_w[w], "dw" + index_str({o, w}));
  }
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < in; ++c)
      for (int64_t yy = 0; yy < size; ++yy)
        for (int64_t xx = 0; xx < size; ++xx) {
          DirectSum want;
          for (int64_t o = 0; o < out; ++o)
            for (int64_t p = 0; p < k; ++p)
              for (int64_t q = 0; q < k; ++q) {
                const int64_t i = yy - p, j = xx - q;
                if (i >= 0 && j >= 0 && i < o_size && j < o_size) want.add(G(n, o, i, j) * W(o, c, p, q));
              }
          check.expect(dx[((n * in + c) * size + yy) * size + xx], want, "dx" + index_str({n, c, yy, xx}));
        }
  EXPECT_EQ(check.bad(), 0) << "values off in the layer " << in << " -> " << out << " on " << size << "x" << size;
}

// LeNet's layers: 3 -> 6 on 32 x 32 images, 6 -> 16 on the 14 x 14 maps after pooling.
void check_lenet_layers() {
  check_layer(2, 3, 6, 32, 5);
  check_layer(2, 6, 16, 14, 5);
}

TEST(Conv2d, LeNetLayersMatchTheDirectSumsOnThisCpusInstructionSetAndOnAvx2) {
  testing::on_this_isa_and_on_avx2(check_lenet_layers);
}


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
}  // namespace colony
