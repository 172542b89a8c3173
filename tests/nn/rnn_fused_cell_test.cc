// The fused LSTM and GRU cells (lstm_cell_gates, gru_cell_gates of autograd/nn_ops.h; raw::lstm_cell,
// raw::gru_cell; kernels/common/rnn_cell.h): the forward against the composite of sigmoid, tanh
// and chunk in float64, gradchecks (also with one LSTM output unused), the float32 CPU kernel's
// vector math against float64 (a row end that is not a whole vector, saturated gates), the 16-bit
// path in float32 rounded once, the errors, and CUDA against the CPU (_CUDA, skipped without one).
#include <gtest/gtest.h>

#include <vector>

#include "autograd/autograd.h"
#include "autograd/nn_ops.h"
#include "autograd/ops.h"
#include "tests/autograd/gradcheck.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;

// The step as the layers computed it before the fused cell: autograd ops in xg's dtype.
std::tuple<Tensor, Tensor> lstm_composite(const Tensor& xg, const Tensor& hg, const Tensor& c) {
  const std::vector<Tensor> g = chunk(add(xg, hg), 4, -1);
  const Tensor i = sigmoid(g[0]), f = sigmoid(g[1]), cand = tanh(g[2]), o = sigmoid(g[3]);
  Tensor c_next = add(mul(f, c), mul(i, cand));
  return {mul(o, tanh(c_next)), c_next};
}

Tensor gru_composite(const Tensor& xg, const Tensor& hg, const Tensor& h) {
  const std::vector<Tensor> x = chunk(xg, 3, -1), hh = chunk(hg, 3, -1);
  const Tensor r = sigmoid(add(x[0], hh[0])), z = sigmoid(add(x[1], hh[1]));
  const Tensor n = tanh(add(x[2], mul(r, hh[2])));
  return add(mul(sub(h, n), z), n);
}

// Gate pre-activations spread over [-scale, scale] (saturated sigmoids and tanh at large scale).
Tensor gates(const Shape& shape, double scale, uint64_t seed) { return testing::input(shape, -scale, scale, seed); }

std::vector<Tensor> grads_of(const std::vector<Tensor>& outs, const std::vector<Tensor>& inputs) {
  Tensor loss;
  for (size_t j = 0; j < outs.size(); ++j) {
    Tensor term = sum(mul(outs[j], raw::full(outs[j].sizes(), 0.5 + 0.25 * static_cast<double>(j),
                                             TensorOptions(outs[j].dtype()))));
    loss = loss.defined() ? add(loss, term) : term;
  }
  return autograd::grad({loss}, inputs);
}

TEST(RnnFusedCell, LstmMatchesTheCompositeInFloat64) {
  const int64_t n = 3, h = 5;
  Tensor xg = gates({n, 4 * h}, 3, 1), hg = gates({n, 4 * h}, 3, 2), c = gates({n, h}, 2, 3);
  auto [hf, cf] = lstm_cell_gates(xg, hg, c);
  auto [he, ce] = lstm_composite(xg, hg, c);
  EXPECT_TRUE(all_close(hf, he, 1e-14, 1e-15));
  EXPECT_TRUE(all_close(cf, ce, 1e-14, 1e-15));
  const std::vector<Tensor> gf = grads_of({hf, cf}, {xg, hg, c}), ge = grads_of({he, ce}, {xg, hg, c});
  for (size_t k = 0; k < gf.size(); ++k) EXPECT_TRUE(all_close(gf[k], ge[k], 1e-13, 1e-15)) << "input " << k;
}

TEST(RnnFusedCell, GruMatchesTheCompositeInFloat64) {
  const int64_t n = 3, h = 5;
  Tensor xg = gates({n, 3 * h}, 3, 4), hg = gates({n, 3 * h}, 3, 5), hx = gates({n, h}, 1, 6);
  Tensor hf = gru_cell_gates(xg, hg, hx), he = gru_composite(xg, hg, hx);
  EXPECT_TRUE(all_close(hf, he, 1e-14, 1e-15));
  const std::vector<Tensor> gf = grads_of({hf}, {xg, hg, hx}), ge = grads_of({he}, {xg, hg, hx});
  for (size_t k = 0; k < gf.size(); ++k) EXPECT_TRUE(all_close(gf[k], ge[k], 1e-13, 1e-15)) << "input " << k;
}

TEST(RnnFusedCell, Gradchecks) {
  const int64_t n = 2, h = 3;
  Tensor xg = gates({n, 4 * h}, 2, 7), hg = gates({n, 4 * h}, 2, 8), c = gates({n, h}, 1, 9);
  EXPECT_TRUE(testing::gradcheck_multi(
      [](const std::vector<Tensor>& v) {
        auto [hy, cy] = lstm_cell_gates(v[0], v[1], v[2]);
        return std::vector<Tensor>{hy, cy};
      },
      {xg, hg, c}));
  // One output unused: the backward gets no gradient for it.
  EXPECT_TRUE(testing::gradcheck(
      [](const std::vector<Tensor>& v) { return std::get<0>(lstm_cell_gates(v[0], v[1], v[2])); }, {xg, hg, c}));
  EXPECT_TRUE(testing::gradcheck(
      [](const std::vector<Tensor>& v) { return std::get<1>(lstm_cell_gates(v[0], v[1], v[2])); }, {xg, hg, c}));
  // Unbatched [G*H].
  Tensor x1 = gates({4 * h}, 2, 10), h1 = gates({4 * h}, 2, 11), c1 = gates({h}, 1, 12);
  EXPECT_TRUE(testing::gradcheck_multi(
      [](const std::vector<Tensor>& v) {
        auto [hy, cy] = lstm_cell_gates(v[0], v[1], v[2]);
        return std::vector<Tensor>{hy, cy};
      },
      {x1, h1, c1}));
  Tensor gx = gates({n, 3 * h}, 2, 13), gh = gates({n, 3 * h}, 2, 14), hx = gates({n, h}, 1, 15);
  EXPECT_TRUE(testing::gradcheck(
      [](const std::vector<Tensor>& v) { return gru_cell_gates(v[0], v[1], v[2]); }, {gx, gh, hx}));
}

Tensor as(const Tensor& t, DType dtype) { return raw::to(t.detach(), t.device(), dtype); }

// The float32 kernel (eight lanes, a masked row end at h = 13) against float64, forward and
// backward, with gates from moderate to saturated.
TEST(RnnFusedCell, Float32KernelMatchesFloat64) {
  const int64_t n = 3, h = 13;
  for (double scale : {1.0, 8.0, 40.0}) {
    SCOPED_TRACE(scale);
    Tensor xg = as(gates({n, 4 * h}, scale, 16), kFloat32), hg = as(gates({n, 4 * h}, scale, 17), kFloat32);
    Tensor c = as(gates({n, h}, 2, 18), kFloat32), gh = as(gates({n, h}, 1, 19), kFloat32);
    Tensor gc = as(gates({n, h}, 1, 20), kFloat32);
    raw::LstmCellResult f = raw::lstm_cell(xg, hg, c, true);
    raw::LstmCellResult d = raw::lstm_cell(as(xg, kFloat64), as(hg, kFloat64), as(c, kFloat64), true);
    EXPECT_TRUE(all_close(f.h, d.h, 1e-6, 1e-7));
    EXPECT_TRUE(all_close(f.c, d.c, 1e-6, 1e-7));
    EXPECT_TRUE(all_close(f.saved, d.saved, 1e-6, 1e-7));
    raw::LstmCellGrads bf = raw::lstm_cell_backward(gh, gc, c, f.saved, kFloat32);
    raw::LstmCellGrads bd = raw::lstm_cell_backward(as(gh, kFloat64), as(gc, kFloat64), as(c, kFloat64), d.saved, kFloat64);
    EXPECT_TRUE(all_close(bf.gates, bd.gates, 1e-5, 1e-7));
    EXPECT_TRUE(all_close(bf.c, bd.c, 1e-5, 1e-7));

    Tensor rx = as(gates({n, 3 * h}, scale, 21), kFloat32), rh = as(gates({n, 3 * h}, scale, 22), kFloat32);
    Tensor hx = as(gates({n, h}, 1, 23), kFloat32);
    auto [g32, s32] = raw::gru_cell(rx, rh, hx, true);
    auto [g64, s64] = raw::gru_cell(as(rx, kFloat64), as(rh, kFloat64), as(hx, kFloat64), true);
    EXPECT_TRUE(all_close(g32, g64, 1e-6, 1e-7));
    EXPECT_TRUE(all_close(s32, s64, 1e-6, 1e-7));
    raw::GruCellGrads r32 = raw::gru_cell_backward(gh, hx, s32);
    raw::GruCellGrads r64 = raw::gru_cell_backward(as(gh, kFloat64), as(hx, kFloat64), s64);
    EXPECT_TRUE(all_close(r32.xg, r64.xg, 1e-5, 1e-7));
    EXPECT_TRUE(all_close(r32.hg, r64.hg, 1e-5, 1e-7));
    EXPECT_TRUE(all_close(r32.h, r64.h, 1e-5, 1e-7));
  }
}

// bfloat16 gates: the math in float32 (c' and the saved activations float32), h' rounded once.
TEST(RnnFusedCell, BFloat16ComputesInFloat32AndRoundsOnce) {
  const int64_t n = 2, h = 9;
  Tensor xg = as(gates({n, 4 * h}, 3, 24), kBFloat16), hg = as(gates({n, 4 * h}, 3, 25), kBFloat16);
  Tensor c = as(gates({n, h}, 2, 26), kFloat32);
  raw::LstmCellResult b = raw::lstm_cell(xg, hg, c, true);
  raw::LstmCellResult f = raw::lstm_cell(as(xg, kFloat32), as(hg, kFloat32), c, true);
  EXPECT_EQ(b.h.dtype(), kBFloat16);
  EXPECT_EQ(b.c.dtype(), kFloat32);
  EXPECT_TRUE(all_close(b.c, f.c, 1e-6, 1e-7));
  // Rounded once from float32: within half a bfloat16 ulp (8 significant bits: 2^-8 relative) of
  // float32's.
  EXPECT_TRUE(all_close(as(b.h, kFloat32), f.h, 1.0 / 256, 1e-6));
  Tensor gh = as(gates({n, h}, 1, 27), kBFloat16);
  raw::LstmCellGrads gb = raw::lstm_cell_backward(gh, Tensor(), c, b.saved, kBFloat16);
  raw::LstmCellGrads gf = raw::lstm_cell_backward(as(gh, kFloat32), Tensor(), c, f.saved, kFloat32);
  EXPECT_EQ(gb.gates.dtype(), kBFloat16);
  EXPECT_TRUE(all_close(as(gb.gates, kFloat32), gf.gates, 1.0 / 256, 1e-6));
  EXPECT_TRUE(all_close(gb.c, gf.c, 1e-5, 1e-6));

  Tensor rx = as(gates({n, 3 * h}, 3, 28), kBFloat16), rh = as(gates({n, 3 * h}, 3, 29), kBFloat16);
  Tensor hx = as(gates({n, h}, 1, 30), kBFloat16);
  auto [gb16, sb] = raw::gru_cell(rx, rh, hx, true);
  auto [gf32, sf] = raw::gru_cell(as(rx, kFloat32), as(rh, kFloat32), as(hx, kFloat32), true);
  EXPECT_EQ(sb.dtype(), kFloat32);
  EXPECT_TRUE(all_close(as(gb16, kFloat32), gf32, 1.0 / 256, 1e-6));
}

TEST(RnnFusedCell, ErrorsSayWhatIsWrong) {
  Tensor xg = raw::zeros({2, 8}), c = raw::zeros({2, 2});
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::lstm_cell(xg, raw::zeros({2, 4}), c, false); },
                                                 "hg must match xg"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::lstm_cell(raw::zeros({2, 7}), raw::zeros({2, 7}), c, false); },
                                                 "4 * hidden_size"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::lstm_cell(xg, xg, raw::zeros({2, 3}), false); },
                                                 "c must be [2, 2]"));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { raw::lstm_cell(xg, xg, raw::zeros({2, 2}, TensorOptions(kFloat64)), false); }, "float32"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { raw::gru_cell(raw::zeros({2, 6}), raw::zeros({2, 6}), raw::zeros({2, 3}), false); },
                                                 "h must be [2, 2]"));
}

TEST(RnnFusedCell, CudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  const int64_t n = 5, h = 37;
  for (DType dtype : {kFloat32, kFloat64, kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const DType state = raw::rnn_cell_state_dtype(dtype);
    const double tol = dtype == kFloat32 ? 1e-5 : dtype == kFloat64 ? 1e-12 : 1e-2;
    Tensor xg = as(gates({n, 4 * h}, 4, 31), dtype), hg = as(gates({n, 4 * h}, 4, 32), dtype);
    Tensor c = as(gates({n, h}, 2, 33), state), gh = as(gates({n, h}, 1, 34), dtype), gc = as(gates({n, h}, 1, 35), state);
    raw::LstmCellResult cpu = raw::lstm_cell(xg, hg, c, true);
    raw::LstmCellResult gpu = raw::lstm_cell(xg.to(dev), hg.to(dev), c.to(dev), true);
    EXPECT_TRUE(all_close(gpu.h.to(Device::cpu()), cpu.h, tol, tol));
    EXPECT_TRUE(all_close(gpu.c.to(Device::cpu()), cpu.c, tol, tol));
    raw::LstmCellGrads bc = raw::lstm_cell_backward(gh, gc, c, cpu.saved, dtype);
    raw::LstmCellGrads bg = raw::lstm_cell_backward(gh.to(dev), gc.to(dev), c.to(dev), gpu.saved, dtype);
    EXPECT_TRUE(all_close(bg.gates.to(Device::cpu()), bc.gates, tol, tol));
    EXPECT_TRUE(all_close(bg.c.to(Device::cpu()), bc.c, tol, tol));

    Tensor rx = as(gates({n, 3 * h}, 4, 36), dtype), rh = as(gates({n, 3 * h}, 4, 37), dtype);
    Tensor hx = as(gates({n, h}, 1, 38), dtype);
    auto [hc, sc] = raw::gru_cell(rx, rh, hx, true);
    auto [hgpu, sg] = raw::gru_cell(rx.to(dev), rh.to(dev), hx.to(dev), true);
    EXPECT_TRUE(all_close(hgpu.to(Device::cpu()), hc, tol, tol));
    raw::GruCellGrads rc = raw::gru_cell_backward(gh, hx, sc);
    raw::GruCellGrads rg = raw::gru_cell_backward(gh.to(dev), hx.to(dev), sg);
    EXPECT_TRUE(all_close(rg.xg.to(Device::cpu()), rc.xg, tol, tol));
    EXPECT_TRUE(all_close(rg.hg.to(Device::cpu()), rc.hg, tol, tol));
    EXPECT_TRUE(all_close(rg.h.to(Device::cpu()), rc.h, tol, tol));
  }
}

}  // namespace
}  // namespace colony
